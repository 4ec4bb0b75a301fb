"""`python -m benchmarks --plot out.png`: the table of a run drawn as one panel per figure, each
measurement (family, layout) a bar against its baseline: the ratio to the baseline measured
in the same run where there is one (a line at 1), else the value against the design's target.
Bars are green where the target is met, red where not. matplotlib is the `plot` extra.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from stencilchain.app.trace_picture import pyplot

MET_COLOURS = {True: "#55a868", False: "#c44e52", None: "#8c8c8c"}


def _target_value(target: str) -> float | None:
    """The number of a target such as `<= 0.3 s` or `>= 1.8x` (None for a share of copy)."""
    found = re.fullmatch(r"[<>]=\s*([0-9.]+)\s*(x|s|ms|us)?", target.strip())
    return float(found[1]) if found else None


def plot_report(report: dict[str, Any], out: Path) -> int:
    """Draw the `table` of a benchmark report (its JSON) to the PNG `out`; returns the
    number of panels."""
    plt = pyplot("python -m benchmarks --plot")
    panels: dict[str, list[dict[str, Any]]] = {}
    for row in report.get("table", []):
        if isinstance(row.get("value"), (int, float)) and not math.isnan(row["value"]):
            panels.setdefault(row["figure"], []).append(row)
    if not panels:
        raise SystemExit("benchmarks --plot: the report has no measured rows to draw")
    columns = 2
    lines = (len(panels) + columns - 1) // columns
    tallest = max(len(rows) for rows in panels.values())
    figure, grid = plt.subplots(
        lines, columns, figsize=(15, lines * (0.9 + 0.35 * tallest)), squeeze=False
    )
    for axes, (name, rows) in zip(grid.flat, panels.items()):
        ratios = all(isinstance(r.get("ratio"), (int, float)) for r in rows)
        values = [float(r["ratio"] if ratios else r["value"]) for r in rows]
        labels = [f"{r['family']} {r['layout']}".replace(" -", "") for r in rows]
        colours = [MET_COLOURS[r.get("met")] for r in rows]
        axes.barh(range(len(rows)), values, color=colours, height=0.6)
        axes.set_yticks(range(len(rows)))
        axes.set_yticklabels(labels, fontsize=8)
        axes.invert_yaxis()
        for k, r in enumerate(rows):
            text = f"{r['value']:.3g} {r['unit']}" + (
                f"  vs {r['baseline']}" if r["baseline"] else ""
            )
            axes.text(values[k], k, f" {text}", va="center", fontsize=7)
        if ratios:
            axes.axvline(1.0, color="black", linewidth=0.8)
            axes.set_xlabel("ratio to the baseline of the same run (line: equal)", fontsize=8)
        else:
            target = _target_value(rows[0].get("target", ""))
            if target is not None:
                axes.axvline(target, color="black", linewidth=0.8, linestyle="--")
            axes.set_xlabel(f"{rows[0]['unit']} (dashed: target)", fontsize=8)
        axes.set_xlim(0, max([*values, 1.0]) * 1.9)
        target_text = rows[0].get("target") or "no target"
        axes.set_title(f"{name} ({target_text})", fontsize=9, loc="left")
        axes.tick_params(axis="x", labelsize=7)
    for axes in list(grid.flat)[len(panels) :]:
        axes.set_visible(False)
    meta = report.get("meta", {})
    figure.suptitle(
        f"python -m benchmarks, started {meta.get('started', '?')}, OMP_NUM_THREADS="
        f"{meta.get('omp_num_threads', '?')}, {meta.get('cores', '?')} cores, "
        f"{meta.get('machine', '?')}{' (--quick: figures mean nothing)' if meta.get('quick') else ''}",
        fontsize=10,
    )
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=100)
    plt.close(figure)
    return len(panels)


def plot_file(report: Path, out: Path) -> int:
    """`plot_report` of a JSON report written by `python -m benchmarks --json`."""
    return plot_report(json.loads(report.read_text()), out)
