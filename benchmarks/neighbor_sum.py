"""The neighbour-sum figure: `out[c, k] = sum_j w[c, j] * e[C2E[c, j], k]`, the weighted
sum over the three edges of every cell of a torus (`stencilchain.meshes.torus`), on about
1M cells x 1 level and 100k cells x 80 levels, float64 fields in C order (K contiguous),
an int32 table (of a connectivity without skip values, the torus's, and of one with
them, whose reads are masked: column `skip`), on GTFN and DaCe (when it compiles neighbour reads; skipped with a note
while it raises UnsupportedError), side by side with its baselines in the same run:

- NumPy: `(w[:, :, None] * np.take(e, c2e, axis=0)).sum(axis=1)` into `out`;
- compiled copy: `x = a + b + c` over one dimension, compiled through the same
  toolchain, with arrays sized so that it moves the bytes the kernel must move at the
  least: the edge field once (E x K x 8), the weights (C x 3 x 8), the table (C x 3 x 4)
  and the output (C x K x 8), i.e. 4 N x 8 bytes with N = that total / 32. It is the
  bandwidth limit of a streaming kernel of this size; its read:write mix (3:1) is not the
  kernel's (6:1 at one level, 1.6:1 at 80), and the gather reads each edge twice (an edge
  has two cells), once from memory at best.

    OMP_NUM_THREADS=2 python benchmarks/neighbor_sum.py [--cases 707x707x1,224x224x80] [--json]

A case `NXxNYxK` is a torus of NX x NY quads (2 NX NY cells, 3 NX NY edges) with K
levels. Prints medians (of the wall-clock time, and of the CPU time summed over the threads,
which waiting for a core on a loaded machine does not inflate), the ratios (NumPy / kernel: >= 5x is the target; copy / kernel,
the fraction of copy bandwidth), the copy bandwidth, and the load average. Uses a private
temporary cache, never the user's. The table is the mesh's frozen one, so its entries are
checked at the first call only (benchmarks/table_check.py measures that check).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as `python benchmarks/neighbor_sum.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import stencilchain as sc
from benchmarks._common import make_toolchains, median_wall_cpu
from stencilchain import meshes

Cell, Edge, X = sc.Dimension("Cell"), sc.Dimension("Edge"), sc.Dimension("X")
K = sc.Dimension("K", kind=sc.VERTICAL)
C2EDim = sc.Dimension("C2EDim", kind=sc.LOCAL)
C2E = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=3)
CellK, EdgeK = sc.Field[[Cell, K], sc.float64], sc.Field[[Edge, K], sc.float64]
Weights = sc.Field[[Cell, C2EDim], sc.float64]
Flat = sc.Field[[X], sc.float64]


@sc.field_operator
def weighted(e: EdgeK, w: Weights) -> CellK:
    return sc.neighbor_sum(w * e(C2E), axis=C2EDim)


@sc.program
def neighbor_sum(e: EdgeK, w: Weights, c2e: sc.Table[C2E], out: CellK) -> None:
    weighted(e, w, out=out)


C2E_SKIP = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=3,
                           skip_values=True)  # fmt: skip


@sc.field_operator
def weighted_skip(e: EdgeK, w: Weights) -> CellK:
    return sc.neighbor_sum(w * e(C2E_SKIP), axis=C2EDim)


@sc.program
def neighbor_sum_skip(e: EdgeK, w: Weights, c2e: sc.Table[C2E_SKIP], out: CellK) -> None:
    weighted_skip(e, w, out=out)


@sc.field_operator
def sum3(a: Flat, b: Flat, c: Flat) -> Flat:
    return a + b + c


@sc.program
def copy_like(a: Flat, b: Flat, c: Flat, x: Flat) -> None:
    sum3(a, b, c, out=x)


def numpy_neighbor_sum(e: np.ndarray, w: np.ndarray, c2e: np.ndarray, out: np.ndarray) -> None:
    """The NumPy baseline: gather all neighbours at once, weight, sum over the slots."""
    (w[:, :, None] * np.take(e, c2e, axis=0)).sum(axis=1, out=out)


def run_case(
    case: str, toolchains: Mapping[str, Any], repeat: int, notes: list[str]
) -> list[dict[str, Any]]:
    """The rows of one case `NXxNYxK`: per family, without and with skip values."""
    nx, ny, levels = (int(n) for n in case.split("x"))
    mesh = meshes.torus(nx, ny)
    rng = np.random.default_rng(0)
    e = rng.random((mesh.n_edges, levels))
    w = rng.random((mesh.n_cells, 3))
    c2e = mesh.c2e
    out = np.zeros((mesh.n_cells, levels))
    expected = np.zeros_like(out)
    numpy_neighbor_sum(e, w, c2e, expected)
    t_numpy, cpu_numpy = median_wall_cpu(
        partial(numpy_neighbor_sum, e, w, c2e, out), max(3, repeat // 3)
    )

    moved = e.nbytes + w.nbytes + c2e.nbytes + out.nbytes
    n_copy = moved // 32
    a, b, c = (rng.random(n_copy) for _ in range(3))
    x = np.zeros(n_copy)
    rows = []
    variants = [(f, t, p) for f, t in toolchains.items() for p in (neighbor_sum, neighbor_sum_skip)]
    for family, toolchain, program in variants:
        kernel = program.with_backend(toolchain)
        try:
            kernel.compile()
        except sc.UnsupportedError as error:
            notes.append(f"{family}: skipped, {error}")
            continue
        out[...] = 0.0
        kernel(e, w, c2e, out)
        np.testing.assert_allclose(out, expected, rtol=1e-13)
        copy = copy_like.with_backend(toolchain)
        t_kernel, cpu_kernel = median_wall_cpu(partial(kernel, e, w, c2e, out), repeat)
        t_copy, cpu_copy = median_wall_cpu(partial(copy, a, b, c, x), repeat)
        rows.append(
            {
                "case": case,
                "cells": mesh.n_cells,
                "levels": levels,
                "family": family,
                "skip_values": program is neighbor_sum_skip,
                "kernel_ms": 1e3 * t_kernel,
                "copy_ms": 1e3 * t_copy,
                "numpy_ms": 1e3 * t_numpy,
                "kernel_cpu_ms": 1e3 * cpu_kernel,
                "copy_cpu_ms": 1e3 * cpu_copy,
                "numpy_cpu_ms": 1e3 * cpu_numpy,
                "speedup_vs_numpy": t_numpy / t_kernel,
                "fraction_of_copy": t_copy / t_kernel,
                "moved_MB": moved / 1e6,
                "copy_GBps": 32 * n_copy / t_copy / 1e9,
                "kernel_GBps": moved / t_kernel / 1e9,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="707x707x1,224x224x80")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--families", default="gtfn,dace")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")  # before the first compiled module loads

    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        toolchains = make_toolchains(args.families.split(","), Path(folder), notes)
        for case in args.cases.split(","):
            rows += run_case(case, toolchains, args.repeat, notes)
    notes = list(dict.fromkeys(notes))
    load = os.getloadavg()
    threads = os.environ.get("OMP_NUM_THREADS")
    if args.json:
        result = {"rows": rows, "notes": notes, "threads": threads, "loadavg": load}
        print(json.dumps(result, indent=2))
        return
    print(
        f"neighbour sum over C2E on a torus, float64, OMP_NUM_THREADS={threads}, medians of {args.repeat}"
    )
    print(
        f"{'case':11} {'cells':>7} {'family':6} {'skip':5} {'kernel ms':>9} {'copy ms':>8} "
        f"{'numpy ms':>9} {'x numpy':>7} {'% copy':>6} {'MB':>6} {'kernel GB/s':>11} "
        f"{'copy GB/s':>9}  cpu ms: {'kernel':>6} {'copy':>6} {'numpy':>7}"
    )
    for r in rows:
        print(
            f"{r['case']:11} {r['cells']:7d} {r['family']:6} {r['skip_values']!s:5} "
            f"{r['kernel_ms']:9.2f} {r['copy_ms']:8.2f} {r['numpy_ms']:9.2f} "
            f"{r['speedup_vs_numpy']:7.1f} {100 * r['fraction_of_copy']:5.0f}% "
            f"{r['moved_MB']:6.1f} {r['kernel_GBps']:11.2f} {r['copy_GBps']:9.2f}  "
            f"        {r['kernel_cpu_ms']:6.2f} {r['copy_cpu_ms']:6.2f} {r['numpy_cpu_ms']:7.2f}"
        )
    for note in notes:
        print(note)
    print(f"load average (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
