"""`stencilchain demo`: the bundled examples, compiled, checked and timed."""

from __future__ import annotations

import pytest

from stencilchain import backends
from stencilchain.app.toolchains import gpu_problem

from .cli_support import CLI


def test_demo_checks_an_example(cli: CLI) -> None:
    result = cli("demo", "--program", "laplacian_program", "--repeat", "1", "--json")
    assert result.status == 0, result.err
    data = result.json()
    assert data["differ"] == [] and data["skipped"] == []
    [row] = data["rows"]
    assert (row["program"], row["backend"]) == ("laplacian_program", "run_gtfn_cpu")
    assert row["max_difference"] == 0.0
    assert row["compile_s"] > 0 and row["cached_load_s"] > 0 and row["run_s"] > 0

    text = cli("demo", "--program", "laplacian_program", "--repeat", "1")
    assert text.status == 0, text.err
    header, line = text.out.strip().splitlines()
    assert header.split()[:3] == ["program", "backend", "compile"]
    assert line.startswith("laplacian_program") and "run_gtfn_cpu" in line


def test_demo_exits_1_when_a_result_differs(cli: CLI) -> None:
    result = cli("demo", "--program", "laplacian_program", "--repeat", "1", "--tolerance", "-1")
    assert result.status == 1
    assert result.error_line == (
        "error: results differ from the embedded executor: laplacian_program (run_gtfn_cpu)"
    )
    assert "laplacian_program" in result.out  # the table still shows every row


@pytest.mark.slow
def test_demo_all_runs_every_available_toolchain(cli: CLI) -> None:
    result = cli("demo", "--all", "--program", "laplacian_program", "--repeat", "1", "--json")
    assert result.status == 0, result.err
    data = result.json()
    ran = [row["backend"] for row in data["rows"]]
    skipped = [s["backend"] for s in data["skipped"]]
    assert "run_gtfn_cpu" in ran and "run_gtfn_cpu_no_transforms" in ran
    assert "run_embedded" not in ran + skipped  # the reference itself
    assert sorted(ran + skipped) == sorted(n for n in backends.NAMES if n != "run_embedded")
    assert ("run_gtfn_gpu" in skipped) == bool(gpu_problem())
    assert all(row["max_difference"] == 0.0 for row in data["rows"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--program", "nope"],
            "no bundled example named 'nope'; the examples are laplacian_program",
        ),
        (["--backend", "run_embedded"], "backend run_embedded runs programs with NumPy"),
        (["--backend", "run_dace"], "unknown backend 'run_dace'"),
        (["--all", "--backend", "run_gtfn_cpu"], "not allowed with argument"),
    ],
)
def test_demo_errors(cli: CLI, argv: list[str], message: str) -> None:
    result = cli("demo", *argv)
    assert result.status == 2
    assert message in result.error_line


def test_demo_quiet_prints_only_errors(cli: CLI) -> None:
    result = cli("demo", "--program", "laplacian_program", "--repeat", "1", "--quiet")
    assert (result.status, result.out, result.err) == (0, "", "")


def test_demo_gives_an_external_workspace_its_buffer(
    cli: CLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With STENCILCHAIN_DACE_EXTERNAL_WORKSPACE on, the demo sizes and sets the workspace
    of a program with temporaries (a call without one would be a WorkspaceError)."""
    pytest.importorskip("dace")
    monkeypatch.setenv("STENCILCHAIN_DACE_EXTERNAL_WORKSPACE", "1")
    result = cli(
        "demo", "--backend", "run_dace_cpu", "--program", "hdiff_staged_program",
        "--repeat", "1", "--json",
    )  # fmt: skip
    assert result.status == 0, result.err
    [row] = result.json()["rows"]
    assert row["max_difference"] == 0.0


def test_demo_runs_a_mesh_example(cli: CLI) -> None:
    result = cli("demo", "--program", "mesh_diffusion", "--repeat", "1", "--json")
    assert result.status == 0, result.err
    data = result.json()
    assert data["differ"] == [] and data["unsupported"] == []
    [row] = data["rows"]
    assert (row["program"], row["max_difference"]) == ("mesh_diffusion", 0.0)


def test_demo_reports_an_example_the_toolchain_does_not_support(cli: CLI) -> None:
    """DaCe does not compile neighbour reads yet: the demo says so and still exits 0 when
    the other examples match; once DaCe compiles them, they are rows like any other."""
    pytest.importorskip("dace")
    argv = ["demo", "--backend", "run_dace_cpu", "--program", "laplacian_program"]
    result = cli(*argv, "--program", "nabla", "--repeat", "1", "--json")
    assert result.status == 0, result.err
    data = result.json()
    assert data["differ"] == []
    ran = [row["program"] for row in data["rows"]]
    refused = [(u["program"], u["backend"]) for u in data["unsupported"]]
    assert "laplacian_program" in ran
    assert sorted(ran + [p for p, _ in refused]) == ["laplacian_program", "nabla"]
    assert all(backend == "run_dace_cpu" for _, backend in refused)
    text = cli(*argv, "--program", "nabla", "--repeat", "1")
    assert text.status == 0, text.err
    if refused:
        assert "nabla is not supported by run_dace_cpu: " in text.err
