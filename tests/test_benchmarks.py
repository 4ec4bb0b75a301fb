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
)


def test_quick_run_writes_every_figure_and_prints_the_table(tmp_path: Path) -> None:
    report = tmp_path / "out" / "bench.json"
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(
        os.environ,
        HOME=str(tmp_path),
        TMPDIR=str(tmp_path),
        STENCILCHAIN_CACHE_DIR=str(tmp_path / "cache"),
        OMP_NUM_THREADS="2",
        PYTHONPATH=python_path,
    )
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--families", "gtfn", "--json", str(report)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr

    result = json.loads(report.read_text())
    assert set(result["figures"]) == set(FIGURES)
    for name in FIGURES:
        family = "all" if name == "import" else "gtfn"
        assert family in result["figures"][name], name
        assert "error" not in result["figures"][name][family], result["figures"][name]
    for layout in ("C", "F"):
        for name in ("laplacian", "hdiff", "tridiagonal"):
            figures = result["figures"][name]["gtfn"][layout]
            assert figures["stencil_GBps"] > 0 and figures["copy_GBps"] > 0
    meta = result["meta"]
    assert meta["omp_num_threads"] == "2" and meta["quick"] is True
    assert len(meta["loadavg_start"]) == 3 and len(meta["loadavg_end"]) == 3
    assert meta["errors"] == []
    assert meta["cpu"]["model"] and "caches" in meta["cpu"]
    icon = result["figures"]["icon_calls"]["gtfn"]
    assert icon["calls"]["nabla2_keywords_frozen"]["cpu_s"] > 0
    assert icon["table_check"]["big_table_mutable"]["wall_s"] > 0
    startup = result["figures"]["startup"]
    assert startup["gtfn"]["all_cache_hits"] is True  # the fresh process built nothing
    assert set(startup["imports_s"]) == {"python", "numpy", "stencilchain", "stencilchain_dsl"}
    assert "start-up: first call, cached, fresh process" in done.stdout
    assert {row["figure"] for row in result["table"]} >= {"call 2 fields", "hdiff", "Laplacian"}

    header = next(line for line in done.stdout.splitlines() if line.startswith("figure"))
    assert header.split() == [
        "figure", "family", "layout", "value", "unit", "baseline", "ratio", "target", "met?"
    ]  # fmt: skip
    assert "tridiagonal scan" in done.stdout and "neighbour sum" in done.stdout
    assert "ICON stencil call, keywords (CPU)" in done.stdout
    assert not (tmp_path / "cache").exists()  # a private cache of its own, removed at exit


def test_unknown_figure_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--only", "nope"],
        cwd=ROOT, capture_output=True, text=True,
        env=dict(os.environ, OMP_NUM_THREADS="2"),
    )  # fmt: skip
    assert done.returncode == 2
    assert "unknown figure 'nope'" in done.stderr
