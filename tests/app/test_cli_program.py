"""`stencilchain compile` and `stencilchain run` on a user's file, and their error paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from stencilchain.app import commands_program
from stencilchain.app.cli import main
from stencilchain.app.errors import CLIError
from stencilchain.app.inputs import Comparison

from .cli_support import CLI


def test_compile_prints_where_the_artifacts_are(cli: CLI, stencils: Path) -> None:
    result = cli("compile", f"{stencils}:smooth", "--show-source", "--json")
    assert result.status == 0, result.err
    data = result.json()
    assert (data["program"], data["backend"]) == ("smooth", "run_gtfn_cpu")
    assert Path(data["build_dir"]).is_dir()
    assert Path(data["module"]).is_file()
    assert Path(data["module"]).is_relative_to(data["build_dir"])
    assert data["language"] == "cpp"
    assert "smooth" in data["source"] and "{" in data["source"]  # C++
    assert data["translation_cache"] in ("hit", "miss")

    again = cli("compile", f"{stencils}:smooth")  # warmed: both caches hit now
    assert again.status == 0, again.err
    assert "(translation cache: hit, build cache: hit)" in again.out
    assert f"build folder: {data['build_dir']}" in again.out
    assert f"module:       {data['module']}" in again.out


def test_compile_show_source_and_run_once_on_a_shape(cli: CLI, stencils: Path) -> None:
    result = cli("compile", f"{stencils}:masked", "--show-source", "--shape", "16x8")
    assert result.status == 0, result.err
    assert "std::int32_t" in result.out  # the generated C++ comes first
    assert "ran once on 16x8" in result.out


def test_run_checks_every_dtype_against_the_embedded_executor(cli: CLI, stencils: Path) -> None:
    result = cli(
        "run", f"{stencils}:masked", "--shape", "33x17", "--check", "--repeat", "3", "--json"
    )
    assert result.status == 0, result.err
    data = result.json()
    assert data["shape"] == {"I": 33, "J": 17}
    assert data["check"] == {"ok": True, "max_difference": {"out": 0.0}, "differ": []}
    assert data["repeat"] == 3
    assert 0 < data["min_seconds"] <= data["median_seconds"]

    text = cli("run", f"{stencils}:masked", "--shape", "8", "--check", "--repeat", "1")
    assert text.status == 0, text.err
    assert "shape              8x8" in text.out
    assert "check" in text.out and "ok (max difference" in text.out


def test_run_with_the_embedded_backend_and_a_module_target(cli: CLI) -> None:
    target = "stencilchain.examples.laplacian:laplacian_program"
    result = cli("run", target, "--backend", "run_embedded", "--check", "--repeat", "1", "--json")
    assert result.status == 0, result.err
    assert result.json()["check"]["ok"] is True
    assert result.json()["compile_seconds"] == 0.0


def test_run_exits_1_when_the_result_differs(
    cli: CLI, stencils: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        commands_program, "compare", lambda *args: Comparison({"out": 0.5}, ("out",))
    )
    result = cli("run", f"{stencils}:smooth", "--check", "--repeat", "1", "--json")
    assert result.status == 1
    assert result.json()["check"]["ok"] is False
    assert "smooth with run_gtfn_cpu differs from the embedded executor in out" in (
        result.error_line
    )


def test_a_file_with_one_program_needs_no_name(cli: CLI, tmp_path: Path) -> None:
    path = tmp_path / "single.py"
    path.write_text(
        "import stencilchain as sc\nI = sc.Dimension('I')\n"
        "@sc.field_operator\ndef copy(f: sc.Field[[I], sc.float64]) -> sc.Field[[I], sc.float64]:\n"
        "    return f\n"
        "@sc.program\ndef only(f: sc.Field[[I], sc.float64], o: sc.Field[[I], sc.float64]):\n"
        "    copy(f, out=o)\n"
    )
    result = cli("run", str(path), "--backend", "run_embedded", "--shape", "5", "--json")
    assert result.status == 0, result.err
    assert result.json()["program"] == "only"


BROKEN_FILES = {
    "raises.py": ("import os\n\nx = 1\nraise RuntimeError('boom')\n", "raises.py:4)"),
    "syntax.py": ("def f(:\n", "syntax.py:1: invalid syntax"),
    "badname.py": ("import stencilchain as sc\nsc.no_such_thing\n", "badname.py:2)"),
}


@pytest.mark.parametrize("name", sorted(BROKEN_FILES))
def test_a_file_that_fails_to_import_is_one_line(cli: CLI, tmp_path: Path, name: str) -> None:
    text, where = BROKEN_FILES[name]
    (tmp_path / name).write_text(text)
    result = cli("compile", f"{tmp_path / name}:p")
    assert result.status == 1
    assert result.error_line.startswith(f"stencilchain: error: importing {tmp_path / name} failed")
    assert where in result.error_line


def test_a_definition_error_names_the_users_line(cli: CLI, tmp_path: Path) -> None:
    path = tmp_path / "wrong.py"
    path.write_text(
        "import stencilchain as sc\nI = sc.Dimension('I')\nJ = sc.Dimension('J')\n"
        "@sc.field_operator\ndef bad(f: sc.Field[[I], sc.float64], g: sc.Field[[J], sc.float64])"
        " -> sc.Field[[I], sc.float64]:\n    return f + g\n"
    )
    result = cli("compile", f"{path}:p")
    assert result.status == 1
    assert f"{path}:" in result.error_line


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        (["run", "{file}:smoth"], 2, "has no program 'smoth'; did you mean smooth?"),
        (["run", "{file}:lap"], 2, "'lap' is a @sc.field_operator; name the @sc.program"),
        (
            ["run", "{file}:not_a_program"],
            2,
            "'not_a_program' is not a @sc.program (its type is int)",
        ),
        (["run", "{file}"], 2, "name the program as"),
        (["run", "{dir}/missing.py:p"], 2, "no such file: "),
        (["run", "no_such_module_xyz:p"], 2, "no file or module named 'no_such_module_xyz'"),
        (
            ["run", "{file}:smooth", "--backend", "run_gtfn_cpux"],
            2,
            "unknown backend 'run_gtfn_cpux'; did you mean run_gtfn_cpu?",
        ),
        (["compile", "{file}:smooth", "--backend", "run_embedded"], 2, "compiles nothing"),
        (["run", "{file}:smooth", "--shape", "8x8x8"], 2, "has 3 sizes but smooth has 2"),
        (["run", "{file}:smooth", "--shape", "8by8"], 2, "shape '8by8' is not valid"),
        (["run", "{file}:smooth", "--shape", "0x8"], 2, "every size must be at least 1"),
        (["run", "{file}:smooth", "--repeat", "0"], 2, "must be at least 1"),
        (["run"], 2, "the following arguments are required: FILE.py:PROGRAM"),
        (["frobnicate"], 2, "invalid choice: 'frobnicate'"),
    ],
)
def test_errors_are_one_line_with_a_status(
    cli: CLI, stencils: Path, argv: list[str], status: int, message: str
) -> None:
    argv = [a.format(file=stencils, dir=stencils.parent) for a in argv]
    result = cli(*argv)
    assert result.status == status
    assert message in result.error_line
    assert result.out == ""


def test_debug_shows_the_traceback(stencils: Path) -> None:
    with pytest.raises(CLIError, match="has no program 'nope'"):
        main(["--debug", "run", f"{stencils}:nope"])
    with pytest.raises(CLIError, match="has no program 'nope'"):
        main(["run", f"{stencils}:nope", "--debug"])


def test_quiet_prints_nothing_on_success(cli: CLI, stencils: Path) -> None:
    result = cli("--quiet", "run", f"{stencils}:smooth", "--backend", "run_embedded")
    assert (result.status, result.out, result.err) == (0, "", "")
    result = cli("run", f"{stencils}:smooth", "--backend", "run_embedded", "-q")
    assert (result.status, result.out, result.err) == (0, "", "")


def test_run_gives_an_external_workspace_its_buffer(
    cli: CLI, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("dace")
    monkeypatch.setenv("STENCILCHAIN_DACE_EXTERNAL_WORKSPACE", "1")
    result = cli(
        "run", "stencilchain.examples.hdiff_staged:hdiff_staged_program", "--backend",
        "run_dace_cpu_noopt", "--shape", "12x10x3", "--check", "--repeat", "2", "--json",
    )  # fmt: skip
    assert result.status == 0, result.err
    assert result.json()["check"]["ok"] is True
