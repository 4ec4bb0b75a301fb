"""`python -m benchmarks`: every speed figure for each toolchain family (benchmarks.run).

    python -m benchmarks [run options] --plot out.png     run, then draw the table (plot.py)
    python -m benchmarks --plot out.png --from run.json   draw an earlier run's JSON, run nothing

`--plot` needs matplotlib (the `plot` extra)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.run import DEFAULT_JSON, main


def _entry(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--from", dest="source", type=Path)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    ours, rest = parser.parse_known_args(argv)
    if ours.source is not None and ours.plot is None:
        parser.error("--from needs --plot PATH (the picture to draw)")
    if ours.plot is None:
        main(argv)
        return
    from benchmarks.plot import plot_file

    if ours.source is not None:
        panels = plot_file(ours.source, ours.plot)
        print(f"plot: {ours.plot} ({panels} figures of {ours.source})")
        return
    try:
        main([*rest, "--json", str(ours.json)])
    finally:  # a figure that failed still leaves the others to draw
        if ours.json.is_file():
            panels = plot_file(ours.json, ours.plot)
            print(f"plot: {ours.plot} ({panels} figures)")


if __name__ == "__main__":
    _entry(sys.argv[1:])
