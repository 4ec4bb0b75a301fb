"""What the range check of neighbour tables costs per call, side by side with the
embedded call it guards.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/table_check.py [--cells 1000000] [--json]

For a C2E table of `cells` x 3 int32 entries (random edge indices, about 1.5 edges per
cell), the median time of: the full argument check of a program that takes the table
(`check_writeable`: the table is checked at every call), the same with a frozen table
(`sc.frozen_table`: checked at its first call only), the argument check of the same
program's arguments without any table (the baseline), and one embedded call of the
program (a neighbour sum of an edge field). Prints the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from functools import partial
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as `python benchmarks/table_check.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import stencilchain as sc
from benchmarks._common import median_seconds
from stencilchain.program.arguments import ArgumentChecker

Cell, Edge = sc.Dimension("Cell"), sc.Dimension("Edge")
C2EDim = sc.Dimension("C2EDim", kind=sc.LOCAL)
C2E = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=3)
CellF, EdgeF = sc.Field[[Cell], sc.float64], sc.Field[[Edge], sc.float64]


@sc.field_operator
def cell_sum(e: EdgeF) -> CellF:
    return sc.neighbor_sum(e(C2E), axis=C2EDim)


@sc.program
def sums(e: EdgeF, c2e: sc.Table[C2E], out: CellF) -> None:
    cell_sum(e, out=out)


@sc.field_operator
def copy_edges(e: EdgeF) -> EdgeF:
    return e


@sc.program
def no_table(e: EdgeF, out: EdgeF) -> None:
    copy_edges(e, out=out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=1_000_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cells = args.cells
    edges = cells * 3 // 2
    rng = np.random.default_rng(0)
    table = rng.integers(0, edges, size=(cells, 3)).astype(np.int32)
    frozen = sc.frozen_table(table)
    e, out, edge_out = rng.random(edges), np.zeros(cells), np.zeros(edges)
    checker = ArgumentChecker(sums.ir)
    baseline = ArgumentChecker(no_table.ir)
    checker.check((e, frozen, out))  # the frozen table's first (and only) check
    results = {
        "check_writeable": median_seconds(partial(checker.check, (e, table, out)), 21),
        "check_frozen": median_seconds(partial(checker.check, (e, frozen, out)), 21),
        "check_without_table": median_seconds(partial(baseline.check, (e, edge_out)), 21),
        "embedded_call": median_seconds(partial(sums, e, frozen, out), 5),
    }
    if args.json:
        print(json.dumps({"cells": cells, "seconds": results, "load": os.getloadavg()}))
        return
    print(f"C2E table of {cells} x 3 int32 ({table.nbytes / 1e6:.1f} MB); load {os.getloadavg()}")
    for name, seconds in results.items():
        print(f"  {name:22s} {seconds * 1e3:9.3f} ms")


if __name__ == "__main__":
    main()
