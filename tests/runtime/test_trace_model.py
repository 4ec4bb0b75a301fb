"""The model example's `--trace` (issue 24): one trace-event file of a 2-rank run, a process
lane per rank, holding each rank's compiles, steps and program calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.distributed._launch import launch

pytest.importorskip("mpi4py", reason="the mpi extra is not installed")

SMALL = {"SCMODEL_NX": "16", "SCMODEL_NY": "12", "SCMODEL_NZ": "5", "SCMODEL_STEPS": "2"}


def test_a_two_rank_run_writes_one_trace(session_cache_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    argv = ["-m", "stencilchain.examples.model", "--trace", str(path)]
    output = launch(2, argv, cache=session_cache_dir, env=SMALL)
    assert f"trace {path}" in output
    events = json.loads(path.read_text())["traceEvents"]
    names = {(e["pid"], e["args"]["name"]) for e in events if e["name"] == "process_name"}
    assert names == {(0, "rank 0"), (1, "rank 1")}
    complete = [e for e in events if e["ph"] == "X"]
    for rank in (0, 1):
        mine = [e for e in complete if e["pid"] == rank]
        steps = [e["name"] for e in mine if e["cat"] == "step"]
        assert steps == ["step 1", "step 2"]
        calls = {e["args"]["program"] for e in mine if e["cat"] == "call"}
        assert calls == {"rk_stage", "vertical_diffusion"}
        assert {e["args"]["program"] for e in mine if e["cat"] == "compile"} == calls
