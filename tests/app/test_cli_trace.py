"""`stencilchain trace render | summary` (issue 24): a trace drawn as a PNG timeline (matplotlib,
the `plot` extra: these tests skip without it), summed up as a table, and a clear error when
the extra is missing or the file is not a trace."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from stencilchain.runtime import tracing

from .cli_support import CLI


def _trace_file(path: Path, pid: int) -> Path:
    recording = tracing.Trace(path, pid=pid, process_name=f"rank {pid}")
    with recording.span("step 1", "step"):
        for _ in range(3):
            with recording.span("smooth", "call", program="smooth", toolchain="run_gtfn_cpu"):
                pass
    recording.complete("compilation smooth", "compilation", 0.0, 0.25, {"cache": "miss"})
    saved = recording.save()
    assert saved is not None
    return saved


def test_render_draws_a_png_of_two_ranks(cli: CLI, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    files = [_trace_file(tmp_path / f"rank{r}.json", r) for r in (0, 1)]
    out = tmp_path / "picture.png"
    result = cli("trace", "render", *map(str, files), str(out), "--title", "two ranks")
    assert result.status == 0, result.err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "10 events" in result.err


def test_lanes_stack_nested_events() -> None:
    from stencilchain.app.trace_picture import place

    events: list[dict[str, Any]] = [
        {"name": "step", "ts": 0.0, "dur": 100.0, "pid": 0, "tid": 1},
        {"name": "a", "ts": 10.0, "dur": 20.0, "pid": 0, "tid": 1},
        {"name": "b", "ts": 40.0, "dur": 20.0, "pid": 0, "tid": 1},
        {"name": "other", "ts": 5.0, "dur": 1.0, "pid": 1, "tid": 1},
    ]
    bars = {b.name: b for b in place(events, [(0, 1), (1, 1)])}
    assert (bars["step"].depth, bars["a"].depth, bars["b"].depth) == (0, 1, 1)
    assert (bars["other"].lane, bars["other"].depth) == (1, 0)
    assert bars["a"].start == pytest.approx(10e-6)


def test_without_matplotlib_the_error_names_the_extra(
    cli: CLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # an import of it fails
    result = cli("trace", "render", str(_trace_file(tmp_path / "t.json", 0)), "x.png")
    assert result.status == 1
    assert "pip install 'stencilchain[plot]'" in result.error_line


def test_summary_sums_per_category_and_name(cli: CLI, tmp_path: Path) -> None:
    result = cli("trace", "summary", str(_trace_file(tmp_path / "t.json", 0)), "--json")
    assert result.status == 0, result.err
    rows = {(r["cat"], r["name"]): r for r in result.json()}
    assert rows[("call", "smooth")]["count"] == 3
    assert rows[("compilation", "compilation smooth")]["seconds"] == pytest.approx(0.25)
    assert next(iter(rows)) == ("compilation", "compilation smooth")  # the largest first


def test_a_file_that_is_not_a_trace_is_one_line(cli: CLI, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"events": []}))
    result = cli("trace", "summary", str(bad))
    assert result.status == 2
    assert "not a trace-event file" in result.error_line
