"""The tridiagonal-scan figure of the design: a Thomas solve in every column of a
256x256x80 float64 grid (stencilchain.examples.tridiagonal, two scans), for C- and
Fortran-order arrays, and the same solve on ICON's (Cell, K), 20,000 cells x 65 levels
(`cell_tridiagonal_solve`; Fortran order is ICON's layout, cells unit-stride), on GTFN and
DaCe, side by side with its baselines in the same run (benchmarks.throughput.layout_figures):

- NumPy: the same Thomas algorithm, a Python loop over K vectorized over I and J;
- compiled copy: `out = x` over the same 3-D domain, compiled through the same toolchain
  (the bandwidth limit of a streaming kernel on these arrays).

    OMP_NUM_THREADS=2 python benchmarks/tridiagonal.py [--shape 256,256,80] [--cells 20000,65]
                                                       [--json]

Prints medians, the ratios (NumPy / solve: >= 5x is the target; solve GB/s / copy GB/s
in unique bytes, a, b, c, d read and x written once: >= 40 %), and the load average.
Uses a private temporary cache, never the user's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as `python benchmarks/tridiagonal.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import stencilchain as sc
from benchmarks._common import make_toolchains
from benchmarks.throughput import layout_figures
from stencilchain.examples import tridiagonal

Cell = sc.Dimension("Cell")
K = sc.Dimension("K", kind=sc.VERTICAL)
CellK = sc.Field[[Cell, K], sc.float64]


@sc.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def cell_thomas_forward(state, a: CellK, b: CellK, c: CellK, d: CellK):  # type: ignore[no-untyped-def]
    c_below, d_below = state
    denominator = b - a * c_below
    return c / denominator, (d - a * d_below) / denominator


@sc.scan_operator(axis=K, forward=False, init=0.0)
def cell_thomas_backward(x_above, c_prime: CellK, d_prime: CellK):  # type: ignore[no-untyped-def]
    return d_prime - c_prime * x_above


@sc.program
def cell_tridiagonal_solve(a: CellK, b: CellK, c: CellK, d: CellK, x: CellK) -> None:
    """The example's Thomas solve on ICON's (Cell, K): Fortran order is ICON's layout
    (cells unit-stride), C order a column per cell."""
    c_prime, d_prime = cell_thomas_forward(a, b, c, d)
    cell_thomas_backward(c_prime, d_prime, out=x)


def numpy_thomas(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, x: np.ndarray) -> None:
    """The vectorized NumPy baseline: a loop over K (the last axis), whole I-J planes (or
    all cells) at a time."""
    nk = a.shape[-1]
    cp = np.empty_like(a)
    dp = np.empty_like(a)
    cb = np.zeros(a.shape[:-1])
    db = np.zeros(a.shape[:-1])
    for k in range(nk):
        den = b[..., k] - a[..., k] * cb
        cb = cp[..., k] = c[..., k] / den
        db = dp[..., k] = (d[..., k] - a[..., k] * db) / den
    xa = np.zeros(a.shape[:-1])
    for k in range(nk - 1, -1, -1):
        xa = x[..., k] = dp[..., k] - cp[..., k] * xa


def tridiagonal_figures(
    toolchains: Mapping[str, Any],
    shape: tuple[int, int, int],
    repeat: int,
    numpy_repeat: int,
    cells: tuple[int, int] | None = None,
) -> dict[str, dict[str, dict[str, float]]]:
    """`{family: {layout: figures}}` of the Thomas solve on (I, J, K) `shape`, layouts "C"
    and "F", and with `cells` = (cells, levels) also on (Cell, K), layouts "Cell,K C" and
    "Cell,K F" (ICON's)."""

    def arrays(order: str) -> dict[str, np.ndarray]:
        made = tridiagonal.make_inputs(shape, np.random.default_rng(0))
        return {k: np.asarray(v) for k, v in made.items()}

    results = layout_figures(
        toolchains, tridiagonal.PROGRAM, arrays, numpy_thomas,
        repeat=repeat, numpy_repeat=numpy_repeat, rtol=1e-10,
    )  # fmt: skip
    if cells is None:
        return results

    def cell_arrays(order: str) -> dict[str, np.ndarray]:
        made = tridiagonal.make_inputs(cells, np.random.default_rng(0))
        return {k: np.asarray(v) for k, v in made.items()}

    on_cells = layout_figures(
        toolchains, cell_tridiagonal_solve, cell_arrays, numpy_thomas,
        repeat=repeat, numpy_repeat=numpy_repeat, rtol=1e-10,
    )  # fmt: skip
    for family, layouts in on_cells.items():
        for layout, figures in layouts.items():
            results[family][f"Cell,K {layout}"] = figures
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="256,256,80")
    parser.add_argument("--cells", default="20000,65", help="cells,levels of (Cell, K)")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--families", default="gtfn,dace")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")  # before the first compiled module loads
    nx, ny, nz = (int(n) for n in args.shape.split(","))
    cells, levels = (int(n) for n in args.cells.split(","))
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        toolchains = make_toolchains(args.families.split(","), Path(folder), notes)
        results = tridiagonal_figures(
            toolchains, (nx, ny, nz), args.repeat, max(3, args.repeat // 3), (cells, levels)
        )
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"shape": (nx, ny, nz), "figures": results, "loadavg": load}, indent=2))
        return
    print(
        f"Thomas solve {nx}x{ny}x{nz} float64, "
        f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}, medians of {args.repeat}"
    )
    print(
        f"{'family':6} {'layout':8} {'solve ms':>9} {'copy ms':>8} {'numpy ms':>9} "
        f"{'x numpy':>8} {'% copy':>7} {'GB/s':>6} {'copy GB/s':>9}"
    )
    for family, layouts in results.items():
        for layout, r in layouts.items():
            print(
                f"{family:6} {layout:8} {1e3 * r['stencil_s']:9.2f} {1e3 * r['copy_s']:8.2f} "
                f"{1e3 * r['numpy_s']:9.2f} {r['speedup_vs_numpy']:8.1f} "
                f"{100 * r['fraction_of_copy']:6.0f}% {r['stencil_GBps']:6.2f} {r['copy_GBps']:9.2f}"
            )
    for note in notes:
        print(note)
    print(f"load average (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
