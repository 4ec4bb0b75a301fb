"""`python -m benchmarks` runs end to end: a --quick smoke run (tiny sizes, figures
meaningless) of every figure for GTFN, in a subprocess whose HOME, temporary folder and
cache are this test's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = (
    "call_overhead",
    "compile",
    "warm_start",
    "import",
    "startup",
    "laplacian",
    "hdiff",
    "tridiagonal",
    "neighbor_sum",
    "icon_calls",
    "peers",
)


def _private_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a benchmark's subprocess: its HOME, temporary folder and cache
    this test's, the repository on the path, two OpenMP threads."""
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return dict(
        os.environ,
        HOME=str(tmp_path),
        TMPDIR=str(tmp_path),
        STENCILCHAIN_CACHE_DIR=str(tmp_path / "cache"),
        OMP_NUM_THREADS="2",
        PYTHONPATH=python_path,
    )


def test_quick_run_writes_every_figure_and_prints_the_table(tmp_path: Path) -> None:
    report = tmp_path / "out" / "bench.json"
    missing = tmp_path / "no-halide" / "python"
    no_devito = tmp_path / "no-devito" / "python"
    env = _private_env(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--families", "gtfn", "--json", str(report),
         "--numba-python", str(tmp_path / "none" / "python"), "--halide-python", str(missing),
         "--devito-python", str(no_devito)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr

    result = json.loads(report.read_text())
    assert set(result["figures"]) == set(FIGURES)
    for name in FIGURES:
        if name == "peers":
            continue
        family = "all" if name == "import" else "gtfn"
        assert family in result["figures"][name], name
        assert "error" not in result["figures"][name][family], result["figures"][name]
    for layout in ("C", "F"):
        for name in ("laplacian", "hdiff", "tridiagonal"):
            figures = result["figures"][name]["gtfn"][layout]
            assert figures["stencil_GBps"] > 0 and figures["copy_GBps"] > 0
    for layout in ("Cell,K C", "Cell,K F"):  # the Thomas solve on ICON's (Cell, K)
        assert result["figures"]["tridiagonal"]["gtfn"][layout]["stencil_GBps"] > 0
    # the peers are missing: skipped with a note saying how to set them up; the figure
    # still times stencilchain and the copy, with the roofline
    peers = result["figures"]["peers"]
    assert peers["peers"] == {}
    assert set(peers) == {"peers"} | {
        f"{kernel} 16x16x6 {layout}" for kernel in ("hdiff", "thomas") for layout in "CF"
    } | {"thomas 64x6 Cell,K C", "thomas 64x6 Cell,K F"}
    for case in (v for k, v in peers.items() if k != "peers"):
        assert set(case["contenders"]) == {"stencilchain gtfn", "compiled copy (gtfn)"}
        assert case["roofline"]["bound_s"] > 0 and case["roofline"]["bound_best_s"] > 0
        assert case["contenders"]["stencilchain gtfn"]["fraction_of_bound_best"] > 0
    for peer, python in (("numba", tmp_path / "none" / "python"), ("halide", missing),
                         ("devito", no_devito)):  # fmt: skip
        note = f"note: peer {peer}: skipped, no interpreter at {python}"
        assert note in done.stdout
        assert "python -m benchmarks.peers setup" in done.stdout
    meta = result["meta"]
    assert meta["omp_num_threads"] == "2" and meta["quick"] is True
    assert len(meta["loadavg_start"]) == 3 and len(meta["loadavg_end"]) == 3
    assert meta["errors"] == []
    assert meta["cpu"]["model"] and "caches" in meta["cpu"]
    icon = result["figures"]["icon_calls"]["gtfn"]
    assert icon["calls"]["nabla2_keywords_frozen"]["cpu_s"] > 0
    assert icon["calls"]["nabla2_literal_keywords_frozen"]["cpu_s"] > 0
    assert icon["table_check"]["big_table_mutable"]["wall_s"] > 0
    startup = result["figures"]["startup"]
    assert startup["gtfn"]["all_cache_hits"] is True  # the fresh process built nothing
    imports = {"python", "numpy", "stencilchain", "stencilchain_dsl", "stencilchain_define"}
    assert set(startup["imports_s"]) == set(startup["imports_cpu_s"]) == imports
    assert startup["import_stencilchain_define_vs_numpy_cpu"] > 0
    assert "start-up: first call, cached, fresh process" in done.stdout
    assert {row["figure"] for row in result["table"]} >= {"call 2 fields", "hdiff", "Laplacian"}

    header = next(line for line in done.stdout.splitlines() if line.startswith("figure"))
    assert header.split() == [
        "figure", "family", "layout", "value", "unit", "baseline", "ratio", "target", "met?"
    ]  # fmt: skip
    assert "tridiagonal scan" in done.stdout and "neighbour sum" in done.stdout
    assert "ICON stencil call, keywords (CPU)" in done.stdout
    assert "start-up: import numpy + define a stencil" in done.stdout
    assert not (tmp_path / "cache").exists()  # a private cache of its own, removed at exit


def test_unknown_figure_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--only", "nope"],
        cwd=ROOT, capture_output=True, text=True,
        env=dict(os.environ, OMP_NUM_THREADS="2"),
    )  # fmt: skip
    assert done.returncode == 2
    assert "unknown figure 'nope'" in done.stderr


def test_the_peers_numpy_references_agree_with_the_examples() -> None:
    """benchmarks/peers/reference.py (NumPy alone, for the peers' interpreters) makes the
    examples' inputs and computes their references, in both layouts and at the ends of a
    grid checked by blocks."""
    import numpy as np

    from benchmarks.peers import reference
    from stencilchain.examples import hdiff, tridiagonal

    for kernel, example, shape in (("hdiff", hdiff, (12, 9, 5)),
                                   ("thomas", tridiagonal, (7, 6, 9))):  # fmt: skip
        for order in "CF":
            arrays = reference.make_inputs(kernel, shape, order)
            made = example.make_inputs(shape, np.random.default_rng(0))
            assert arrays[reference.ARGUMENTS[kernel][-1]].flags[f"{order}_CONTIGUOUS"]
            for name, array in arrays.items():
                np.testing.assert_array_equal(array, made[name])
            expected = example.reference(**arrays)
            out = reference.ARGUMENTS[kernel][-1]
            reference.REFERENCES[kernel](*arrays.values())
            np.testing.assert_array_equal(arrays[out], expected[out])


def test_a_wrong_baseline_fails_loudly_and_is_not_timed(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import numpy as np
    import pytest

    from benchmarks.peers import reference
    from benchmarks.peers.worker import Worker

    def off_by_one(kernel, order, arrays, variant):  # type: ignore[no-untyped-def]
        args = list(arrays.values())

        def call() -> None:
            reference.REFERENCES[kernel](*args)
            args[-1][3, 3, 1] += 1e-6  # one point wrong

        return call

    worker = Worker("wrong", off_by_one)
    for kernel in reference.KERNELS:
        with pytest.raises(reference.WrongResultError, match="differs from NumPy's at 1 of"):
            worker.prepare("a", kernel, "F", [10, 10, 4], "hand")
        answer = worker.handle({"op": "prepare", "case": "a", "kernel": kernel, "order": "C",
                                "shape": [10, 10, 4], "variant": "hand"})  # fmt: skip
        assert answer["ok"] is False and "WrongResultError" in answer["error"]
        assert "a" not in worker.cases  # nothing to time
    # on a grid checked by its two end blocks, a wrong point near the far end is found too
    monkeypatch.setattr(reference, "FULL_CHECK_POINTS", 100)
    arrays = reference.make_inputs("thomas", (80, 3, 4), "C")
    reference.thomas(*arrays.values())
    assert reference.check_result("ok", "thomas", arrays) < 1e-15
    arrays["x"][-2, 1, 1] = np.nan
    with pytest.raises(reference.WrongResultError):
        reference.check_result("thomas", "thomas", arrays)


def test_a_peer_worker_answers_over_its_pipe_and_a_missing_peer_is_a_note(tmp_path: Path) -> None:
    """The protocol end to end with the NumPy references as the kernel (the project's
    interpreter has NumPy), and the notes of a peer that cannot run."""
    from benchmarks.peers import harness
    from benchmarks.peers.__main__ import bench_requirements

    process = harness.PeerProcess("numpy", Path(sys.executable), dict(os.environ))
    try:
        assert process.hello["ok"] is True
        case = harness.Case("hdiff", (12, 10, 3), "F")
        figures = harness.case_figures(case, {}, {"numpy": process}, rounds=2, per_round=2)
        row = figures["contenders"]["numpy hand"]
        assert row["calls"] == 4 and row["median_s"] > 0 and row["max_rel_diff"] == 0.0
        assert row["median_cpu_s"] > 0
        assert figures["roofline"]["bytes_per_point"] == 24
    finally:
        process.close()
    notes: list[str] = []
    started = harness.start_peers(
        {"nope": Path(sys.executable), "numba": tmp_path / "missing" / "python"}, notes
    )
    assert started == {}
    assert notes[0].startswith("peer nope: skipped") and "unknown peer 'nope'" in notes[0]
    assert notes[1].startswith(f"peer numba: skipped, no interpreter at {tmp_path}")
    requirements = bench_requirements()
    assert set(requirements) == set(harness.PEERS) == {"numba", "halide", "devito"}
    assert requirements["numba"][0].startswith("numba") and any(
        r.startswith("numpy") for r in requirements["halide"]
    )
    assert requirements["devito"][0].startswith("devito>=4.8")
    assert not any(r.startswith(("numba", "halide")) for r in requirements["devito"])


def test_a_missing_devito_is_skipped_with_a_note(tmp_path: Path) -> None:
    """The Devito peer, like the others: an interpreter that is not there, or one without
    the `devito` package (the project's own, which never has it: docs/adr/0038), is left
    out with a note saying how to set it up; the figure runs without it. The suite never
    installs Devito."""
    import importlib.util

    import pytest

    from benchmarks.peers import harness

    if importlib.util.find_spec("devito") is not None:
        pytest.skip("devito is installed in the project's interpreter (it should not be)")
    notes: list[str] = []
    started = harness.start_peers(
        {"devito": Path(sys.executable), "numba": tmp_path / "missing" / "python"}, notes
    )
    assert started == {}
    assert notes[0] == (
        f"peer devito: skipped, {sys.executable} cannot run it: ModuleNotFoundError: No module "
        "named 'devito' (`python -m benchmarks.peers setup` installs it)"
    )
    notes = []
    assert harness.start_peers({"devito": tmp_path / "no" / "python"}, notes) == {}
    assert notes == [
        f"peer devito: skipped, no interpreter at {tmp_path / 'no' / 'python'} (set one up "
        "with `python -m benchmarks.peers setup`, or pass --devito-python PATH)"
    ]
    # `--kernels hdiff`: the cases of hdiff alone, in both layouts
    assert [c.key for c in harness.cases([(10, 9, 3)], (20, 4), ("hdiff",))] == [
        "hdiff 10x9x3 C",
        "hdiff 10x9x3 F",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.peers", "run", "--kernels", "hdiff,nope"],
        cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="2"),
    )  # fmt: skip
    assert done.returncode == 2 and "--kernels: unknown kernel 'nope'" in done.stderr


def test_devito_hdiff_agrees_with_numpy_in_both_layouts() -> None:
    """Devito's hdiff (benchmarks/peers/devito_kernels.py), in the Devito peer's own
    environment where `python -m benchmarks.peers setup` made it (skipped when it is not
    there: the suite never installs Devito), agrees with NumPy's to rounding in C and
    Fortran order, and times; the Thomas solve is not Devito's."""
    import pytest

    from benchmarks.peers import harness

    python = harness.peer_python("devito", None)
    if not python.exists():
        pytest.skip(f"no Devito environment at {python} (`python -m benchmarks.peers setup`)")
    env = dict(os.environ, OMP_NUM_THREADS="2")
    env.pop("PYTHONPATH", None)
    process = harness.PeerProcess("devito", python, env)
    try:
        assert process.hello["ok"] is True, process.hello
        assert process.hello["version"].startswith("4.8") and process.hello["threads"] == 2
        for order, variant in (("C", "advanced"), ("F", "advanced"), ("C", "advanced-cfunction")):
            answer = process.request(op="prepare", case=order + variant, kernel="hdiff",
                                     order=order, shape=[14, 11, 5], variant=variant)  # fmt: skip
            assert answer["ok"] is True, answer
            assert answer["max_rel_diff"] <= 1e-10  # Devito reassociates: not bit-exact
            timed = process.request(op="time", case=order + variant, repeat=2)
            assert timed["ok"] is True and len(timed["wall_s"]) == 2
        answer = process.request(op="prepare", case="t", kernel="thomas", order="C",
                                 shape=[4, 4, 4], variant="advanced")  # fmt: skip
        assert answer["ok"] is False and "hdiff only" in answer["error"]
    finally:
        process.close()
    assert harness.VARIANTS[("devito", "thomas")] == ()


def test_gtfn_runs_on_arrays_laid_out_as_devitos(gtfn_cpu) -> None:  # type: ignore[no-untyped-def]
    """The fair comparison with Devito: copies of the inputs padded by Devito's halo in
    every dimension, the padded block on a page, the same values in the unpadded view;
    GTFN's hdiff on them is checked against NumPy like every contender, and gives the
    same values, bit for bit, as on the plain arrays."""
    import numpy as np

    from benchmarks.peers import harness, reference

    for order in "CF":
        case = harness.Case("hdiff", (11, 10, 4), order)
        arrays = reference.make_inputs(case.kernel, case.shape, order)
        padded = harness.devito_layout(arrays["inp"])
        assert padded.shape == (11, 10, 4) and np.array_equal(padded, arrays["inp"])
        elements = (1, 15, 15 * 14) if order == "F" else (14 * 8, 8, 1)
        assert padded.strides == tuple(8 * e for e in elements)
        assert (padded.ctypes.data - 16 * sum(elements)) % harness.PAGE == 0
        calls = harness._local_contenders(case, {"gtfn": gtfn_cpu}, arrays, devito_arrays=True)
        assert set(calls) == {
            "stencilchain gtfn",
            "stencilchain gtfn, Devito's arrays",
            "compiled copy (gtfn)",
        }
        plain = arrays["out"].copy()
        calls["stencilchain gtfn, Devito's arrays"]()  # its own copies of the arrays
        assert np.array_equal(arrays["out"], plain)
        # the padded arrays are kept by the call; run GTFN on a second set to compare
        again = {name: harness.devito_layout(a) for name, a in arrays.items()}
        again["out"][...] = 0.0
        gtfn_cpu_call = harness.stencilchain_program(case).with_backend(gtfn_cpu)
        gtfn_cpu_call(*again.values())
        assert np.array_equal(again["out"], plain)


def test_compile_many_of_icon_like_programs_checks_what_it_timed(tmp_path: Path) -> None:
    """`benchmarks/compile_many.py --kind icon` compiles ICON-like mesh programs serially
    and with compile_many, and checks two of each side against the embedded executor (the
    script fails if they differ)."""
    env = _private_env(tmp_path)
    command = [sys.executable, str(ROOT / "benchmarks" / "compile_many.py"), "--kind", "icon"]
    done = subprocess.run(
        [*command, "-n", "2", "--family", "gtfn"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout)
    assert figures["kind"] == "icon" and figures["programs"] == 2
    assert figures["built_in_batches"]["serial"] == 0 and figures["speedup"] > 0
    refused = subprocess.run(
        [*command, "--processes"], env=env, capture_output=True, text=True, timeout=120
    )
    assert refused.returncode != 0 and "--processes times the one-line programs" in refused.stderr
