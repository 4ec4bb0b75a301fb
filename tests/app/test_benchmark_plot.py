"""`python -m benchmarks --plot out.png --from run.json` (issue 24): the table of a run drawn
as one panel per figure against its baselines (matplotlib, the `plot` extra: skipped
without it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

REPORT = {
    "meta": {"started": "2026-12-01T22:00:00+00:00", "omp_num_threads": "2", "cores": 2,
             "machine": "x86_64", "quick": True},
    "table": [
        {"figure": "call 2 fields", "family": "gtfn", "layout": "-", "value": 0.08, "unit": "us",
         "baseline": "empty C call 0.050 us", "ratio": 1.6, "target": "<= 0.4 us", "met": True},
        {"figure": "call 2 fields", "family": "dace", "layout": "-", "value": 0.31, "unit": "us",
         "baseline": "empty C call 0.050 us", "ratio": 6.2, "target": "<= 0.4 us", "met": True},
        {"figure": "new program compile", "family": "gtfn", "layout": "-", "value": 0.35,
         "unit": "s", "baseline": "", "ratio": None, "target": "<= 0.3 s", "met": False},
        {"figure": "hdiff", "family": "gtfn", "layout": "C", "value": float("nan"),
         "unit": "GB/s", "baseline": "", "ratio": None, "target": "", "met": None},
    ],
}  # fmt: skip


def test_plot_from_a_report_draws_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    source = tmp_path / "run.json"
    source.write_text(json.dumps(REPORT))
    out = tmp_path / "figures.png"
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--plot", str(out), "--from", str(source)],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=python_path), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "2 figures" in done.stdout  # the row without a value is left out
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_from_without_plot_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--from", "run.json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and "--from needs --plot" in done.stderr
