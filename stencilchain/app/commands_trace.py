"""`stencilchain trace render | summary`: a trace file (STENCILCHAIN_TRACE, `sc.trace`) drawn
as a PNG timeline, or summed per category and name as a table."""

from __future__ import annotations

import argparse
from pathlib import Path

from stencilchain.app.output import note, print_json, table
from stencilchain.app.trace_picture import read_events, render


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    trace = sub.add_parser(
        "trace",
        help="draw or sum up a trace (STENCILCHAIN_TRACE, stencilchain.trace)",
        description="Trace files in the Chrome trace-event format, as stencilchain writes "
        "them (Perfetto and chrome://tracing open them too).",
    )
    actions = trace.add_subparsers(dest="action", required=True, metavar="ACTION")
    draw = actions.add_parser(
        "render",
        parents=[common],
        help="a PNG timeline: one lane per process and thread (needs stencilchain[plot])",
        description="Draw the trace files (merged, e.g. one per rank) as a PNG timeline: a lane "
        "per process (rank) and thread, each event a bar coloured by category (translation, "
        "compilation, load, call, ...), nested events below the one holding them.",
    )
    draw.add_argument("trace", nargs="+", type=Path, help="trace files (JSON)")
    draw.add_argument("out", type=Path, help="the PNG to write")
    draw.add_argument("--title", help="the picture's title (default: the file names)")
    draw.set_defaults(run=run_render)
    summary = actions.add_parser(
        "summary", parents=[common], help="time and count per category and name, largest first"
    )
    summary.add_argument("trace", nargs="+", type=Path, help="trace files (JSON)")
    summary.add_argument("--json", action="store_true")
    summary.set_defaults(run=run_summary)


def run_render(args: argparse.Namespace) -> int:
    drawn = render(args.trace, args.out, title=args.title)
    note(f"{args.out}: {drawn} events", quiet=args.quiet)
    return 0


def run_summary(args: argparse.Namespace) -> int:
    events, _ = read_events(args.trace)
    totals: dict[tuple[str, str], list[float]] = {}
    for event in events:
        total = totals.setdefault((str(event.get("cat", "")), str(event["name"])), [0.0, 0])
        total[0] += float(event.get("dur", 0.0)) / 1e6
        total[1] += 1
    rows = sorted(totals.items(), key=lambda item: -item[1][0])
    if args.json:
        print_json(
            [{"cat": c, "name": n, "seconds": s, "count": int(k)} for (c, n), (s, k) in rows]
        )
        return 0
    print(
        table(
            ("category", "name", "total", "count", "mean"),
            [
                (c, n, f"{s * 1e3:.3f} ms", str(int(k)), f"{s / k * 1e6:.1f} us")
                for (c, n), (s, k) in rows
            ],
        )
    )
    return 0
