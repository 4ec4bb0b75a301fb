"""Tracing (issue 24): a timeline in the Chrome trace-event format of the translations, builds
(with the cache's answer and the folder), loads and calls of compiled programs; nothing on
the call path while no trace is on; `STENCILCHAIN_TRACE` starts one when a container is built.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.runtime import tracing
from tests._support import family_toolchain

I = sc.Dimension("I")
J = sc.Dimension("J")
F64 = sc.Field[[I, J], sc.float64]


@sc.field_operator
def _shifted_sum(f: F64) -> F64:
    return 0.25 * (f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1))


@sc.program
def traced_average(f: F64, out: F64) -> None:
    _shifted_sum(f, out=out)


def _complete(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The "X" events of a trace document, each checked to have the format's fields."""
    events = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    for event in events:
        assert set(event) == {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"}, event
        assert isinstance(event["ts"], float) and event["dur"] >= 0
    return events


@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_a_trace_holds_the_stages_the_load_and_each_call(family: str, tmp_path: Path) -> None:
    if family == "dace":
        pytest.importorskip("dace")
    toolchain = family_toolchain(family, tmp_path / "cache")
    f = np.random.default_rng(0).random((12, 10))
    out = np.zeros_like(f)
    path = tmp_path / "trace.json"
    with sc.trace(path) as recording:
        bound = traced_average.with_backend(toolchain)
        bound(f, out)
        bound(f, out=out)
    bound(f, out)  # after the trace: not recorded
    assert recording.path == path
    events = _complete(json.loads(path.read_text()))
    by_cat: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_cat.setdefault(event["cat"], []).append(event)
    assert sorted(by_cat) == ["bindings", "call", "compilation", "compile", "load", "translation"]
    assert [e["args"]["cache"] for e in by_cat["translation"]] == ["miss"]
    build = by_cat["compilation"][0]
    assert build["args"]["cache"] == "miss" and Path(build["args"]["folder"]).is_dir()
    assert build["args"]["toolchain"] == toolchain.name
    assert len(by_cat["call"]) == 2
    for call in by_cat["call"]:
        assert call["name"] == "traced_average"
        assert call["args"] == {"program": "traced_average", "toolchain": toolchain.name}
    # the compile event spans its stages and the load
    whole = by_cat["compile"][0]
    for cat in ("translation", "bindings", "compilation", "load"):
        inner = by_cat[cat][0]
        assert whole["ts"] <= inner["ts"] + 1 and inner["ts"] + inner["dur"] <= (
            whole["ts"] + whole["dur"] + 1
        )
    assert {e["pid"] for e in events} == {os.getpid()}
    np.testing.assert_allclose(out[1:-1, 1:-1], 0.25 * (f[2:, 1:-1] + f[:-2, 1:-1]
                                                       + f[1:-1, 2:] + f[1:-1, :-2]))  # fmt: skip


def test_a_second_process_records_cache_hits(gtfn_cpu: Any, tmp_path: Path) -> None:
    toolchain = family_toolchain("gtfn", tmp_path / "cache")
    traced_average.with_backend(toolchain).compile()  # in the caches now
    again = family_toolchain("gtfn", tmp_path / "cache")  # a pool of its own: compiles again
    with sc.trace() as recording:
        traced_average.with_backend(again).compile()
    caches = {e["cat"]: e["args"].get("cache") for e in recording.events}
    assert caches["index"] == "hit"  # the load index (ADR 0039): no translation, no plan
    assert "translation" not in caches and "compilation" not in caches
    shutil.rmtree(tmp_path / "cache" / "index")  # without it, both caches answer
    third = family_toolchain("gtfn", tmp_path / "cache")
    with sc.trace() as recording:
        traced_average.with_backend(third).compile()
    caches = {e["cat"]: e["args"].get("cache") for e in recording.events}
    assert caches["translation"] == "hit" and caches["compilation"] == "hit"


def test_no_trace_leaves_the_call_path_untouched(gtfn_cpu: Any) -> None:
    """The call path without a trace is the compiled one; a trace wraps it, and its end
    puts the same path back."""
    bound = traced_average.with_backend(gtfn_cpu)
    bound.compile()
    untraced = bound.func
    assert type(untraced).__name__ == "BoundEntry"  # the module's C call path
    with sc.trace():
        assert bound.func is not untraced
        assert bound.func.__qualname__.startswith("traced_call")
    assert type(bound.func).__name__ == "BoundEntry"
    assert tracing.active() is None


def test_a_failed_call_is_recorded_and_raises(gtfn_cpu: Any) -> None:
    bound = traced_average.with_backend(gtfn_cpu)
    bound.compile()
    with sc.trace() as recording, pytest.raises(sc.ArgumentError, match="f"):
        bound(np.zeros((4, 4), np.float32), np.zeros((4, 4)))
    assert [e["cat"] for e in recording.events] == ["call"]


def test_spans_nest_and_the_document_names_lanes(tmp_path: Path) -> None:
    recording = tracing.Trace(tmp_path / "t.json", pid=3, process_name="rank 3")
    with recording.span("step 1", "model", step=1) as args:
        args["dt"] = 0.5
    saved = recording.save()
    doc = json.loads(Path(str(saved)).read_text())
    [event] = _complete(doc)
    assert event["name"] == "step 1" and event["args"] == {"step": 1, "dt": 0.5}
    assert event["pid"] == 3
    meta = [e for e in doc["traceEvents"] if e["ph"] == "M"]
    assert {"name": "process_name", "ph": "M", "pid": 3, "tid": 0,
            "args": {"name": "rank 3"}} in meta  # fmt: skip


def test_the_variable_writes_a_trace_at_exit(tmp_path: Path, session_cache_dir: Path) -> None:
    script = textwrap.dedent(
        """
        import numpy as np
        from stencilchain.containers import build_container
        from tests.runtime.test_trace import traced_average

        toolchain = build_container().gtfn.toolchain()
        bound = traced_average.with_backend(toolchain)
        bound(np.ones((6, 6)), np.zeros((6, 6)))
        """
    )
    env = {
        **os.environ,
        "STENCILCHAIN_TRACE": str(tmp_path / "run-{pid}.json"),
        "STENCILCHAIN_CACHE_DIR": str(session_cache_dir),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    [written] = list(tmp_path.glob("run-*.json"))
    assert written.name != "run-{pid}.json"
    cats = [e["cat"] for e in _complete(json.loads(written.read_text()))]
    assert "call" in cats and ("compilation" in cats or "index" in cats)  # built, or found


def test_a_bad_trace_variable_is_a_config_error() -> None:
    from stencilchain.containers import build_container

    with pytest.raises(sc.ConfigError, match="STENCILCHAIN_TRACX"):
        build_container({"STENCILCHAIN_TRACX": "a.json"})
    assert tracing.active() is None
