"""A trace (Chrome trace-event JSON, see stencilchain.runtime.tracing) drawn as a PNG timeline:
one lane per process (rank) and thread, each event a bar coloured by its category, nested
events stacked below the one holding them, a label where a bar is wide enough, a time axis.

matplotlib is an optional extra (`stencilchain[plot]`), imported only here.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from stencilchain.app.errors import CLIError
from stencilchain.errors import MissingExtraError

# categories in the order of the legend; others follow in the order they first appear
CATEGORY_COLOURS = {
    "compile": "#b8c7d9",
    "translation": "#4c72b0",
    "bindings": "#8172b3",
    "compilation": "#c44e52",
    "load": "#dd8452",
    "call": "#55a868",
    "step": "#d9d9d9",
    "exchange": "#937860",
}
OTHER_COLOURS = ("#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd")


def pyplot(what: str) -> ModuleType:
    """matplotlib's pyplot (Agg, no display), or MissingExtraError naming the extra."""
    try:
        matplotlib = importlib.import_module("matplotlib")
    except ImportError as error:
        raise MissingExtraError(
            f"{what} needs matplotlib, which is not installed ({error}); "
            "install the extra: pip install 'stencilchain[plot]'"
        ) from None
    matplotlib.use("Agg")
    return importlib.import_module("matplotlib.pyplot")


@dataclasses.dataclass(frozen=True)
class Bar:
    """One complete event, placed: its lane, its depth in the lane, start and length (s)."""

    lane: int
    depth: int
    start: float
    seconds: float
    name: str
    cat: str


def read_events(paths: Sequence[Path]) -> tuple[list[dict[str, Any]], dict[tuple[int, int], str]]:
    """The complete ("X") events of the trace files, and lane names from their metadata."""
    events: list[dict[str, Any]] = []
    names: dict[tuple[int, int], str] = {}
    processes: dict[int, str] = {}
    for path in paths:
        try:
            doc = json.loads(Path(path).read_text())
        except (OSError, ValueError) as error:
            raise CLIError(f"{path}: not a readable trace ({error})") from None
        raw = doc.get("traceEvents") if isinstance(doc, dict) else doc
        if not isinstance(raw, list):
            raise CLIError(f'{path}: no "traceEvents" list: not a trace-event file')
        for event in raw:
            if not isinstance(event, dict):
                continue
            if event.get("ph") == "X" and "ts" in event:
                events.append(event)
            elif event.get("ph") == "M" and event.get("name") == "process_name":
                processes[event["pid"]] = str(event.get("args", {}).get("name", ""))
            elif event.get("ph") == "M" and event.get("name") == "thread_name":
                names[(event["pid"], event["tid"])] = str(event.get("args", {}).get("name", ""))
    lanes = {(e["pid"], e.get("tid", 0)) for e in events}
    labels = {
        lane: f"{processes.get(lane[0], f'pid {lane[0]}')} · {names.get(lane, f'tid {lane[1]}')}"
        for lane in lanes
    }
    return events, labels


def place(events: Iterable[dict[str, Any]], lanes: Sequence[tuple[int, int]]) -> list[Bar]:
    """Each event as a bar in its lane, one row deeper for each event that holds it."""
    index = {lane: k for k, lane in enumerate(lanes)}
    ordered = sorted(events, key=lambda e: (e["pid"], e.get("tid", 0), e["ts"], -e.get("dur", 0)))
    origin = min((e["ts"] for e in ordered), default=0.0)
    bars: list[Bar] = []
    open_ends: dict[int, list[float]] = {}
    for event in ordered:
        lane = index[(event["pid"], event.get("tid", 0))]
        start, length = float(event["ts"]), float(event.get("dur", 0.0))
        stack = open_ends.setdefault(lane, [])
        while stack and stack[-1] <= start:
            stack.pop()
        bars.append(
            Bar(lane, len(stack), (start - origin) / 1e6, length / 1e6, str(event["name"]),
                str(event.get("cat", "")))
        )  # fmt: skip
        stack.append(start + length)
    return bars


def render(paths: Sequence[Path], out: Path, *, title: str | None = None) -> int:
    """Draw the trace files `paths` (merged: their lanes side by side) to the PNG `out`;
    returns the number of events drawn."""
    plt = pyplot("rendering a trace")
    events, labels = read_events(paths)
    if not events:
        raise CLIError(f"{', '.join(map(str, paths))}: no complete events to draw")
    lanes = sorted(labels)
    bars = place(events, lanes)
    depth = [1] * len(lanes)
    for bar in bars:
        depth[bar.lane] = max(depth[bar.lane], bar.depth + 1)
    top = [0.0] * len(lanes)  # the y of each lane's first row, lanes from the top down
    for k in range(1, len(lanes)):
        top[k] = top[k - 1] + depth[k - 1] + 0.6
    height = top[-1] + depth[-1]
    span = max(b.start + b.seconds for b in bars) or 1e-6
    scale, unit = (1.0, "s") if span >= 2.0 else (1e3, "ms")
    colours = dict(CATEGORY_COLOURS)
    for bar in bars:
        if bar.cat not in colours:
            colours[bar.cat] = OTHER_COLOURS[len(colours) % len(OTHER_COLOURS)]
    figure, axes = plt.subplots(figsize=(14, 1.3 + 0.42 * height))
    groups: dict[tuple[int, int, str], list[tuple[float, float]]] = {}
    for bar in bars:
        width = max(bar.seconds * scale, span * scale * 1e-4)  # a call stays visible
        groups.setdefault((bar.lane, bar.depth, bar.cat), []).append((bar.start * scale, width))
    for (lane, row, cat), spans in groups.items():
        y = height - (top[lane] + row) - 0.9
        axes.broken_barh(spans, (y, 0.8), facecolors=colours[cat], edgecolor="none")
    wide = span * scale * 0.04
    for bar in bars:
        if bar.seconds * scale >= wide:
            y = height - (top[bar.lane] + bar.depth) - 0.5
            axes.text(bar.start * scale + wide * 0.05, y, bar.name, va="center", ha="left",
                      fontsize=7, clip_on=True)  # fmt: skip
    axes.set_yticks([height - top[k] - depth[k] / 2 for k in range(len(lanes))])
    axes.set_yticklabels([labels[lane] for lane in lanes], fontsize=8)
    axes.set_ylim(0, height + 0.2)
    axes.set_xlim(0, span * scale * 1.01)
    axes.set_xlabel(f"time since the first event ({unit})")
    used = [c for c in colours if any(b.cat == c for b in bars)]
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[c]) for c in used]
    axes.legend(handles, used, loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=7,
                ncol=min(len(used), 9), frameon=False)  # fmt: skip
    axes.grid(axis="x", alpha=0.3)
    axes.set_title(title or ", ".join(p.name for p in paths), fontsize=10, loc="left")
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=110)
    plt.close(figure)
    return len(bars)
