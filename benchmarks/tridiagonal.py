"""The tridiagonal-scan figure of the design: a Thomas solve in every column of a
256x256x80 float64 grid (stencilchain.examples.tridiagonal, two scans), for C- and
Fortran-order arrays, on GTFN and DaCe, side by side with its baselines in the same run
(benchmarks.throughput.layout_figures):

- NumPy: the same Thomas algorithm, a Python loop over K vectorized over I and J;
- compiled copy: `out = x` over the same 3-D domain, compiled through the same toolchain
  (the bandwidth limit of a streaming kernel on these arrays).

    OMP_NUM_THREADS=2 python benchmarks/tridiagonal.py [--shape 256,256,80] [--json]

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

from benchmarks._common import make_toolchains
from benchmarks.throughput import layout_figures
from stencilchain.examples import tridiagonal


def numpy_thomas(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, x: np.ndarray) -> None:
    """The vectorized NumPy baseline: a loop over K, whole I-J planes at a time."""
    nk = a.shape[2]
    cp = np.empty_like(a)
    dp = np.empty_like(a)
    cb = np.zeros(a.shape[:2])
    db = np.zeros(a.shape[:2])
    for k in range(nk):
        den = b[..., k] - a[..., k] * cb
        cb = cp[..., k] = c[..., k] / den
        db = dp[..., k] = (d[..., k] - a[..., k] * db) / den
    xa = np.zeros(a.shape[:2])
    for k in range(nk - 1, -1, -1):
        xa = x[..., k] = dp[..., k] - cp[..., k] * xa


def tridiagonal_figures(
    toolchains: Mapping[str, Any], shape: tuple[int, int, int], repeat: int, numpy_repeat: int
) -> dict[str, dict[str, dict[str, float]]]:
    """`{family: {layout: figures}}` of the Thomas solve on `shape`."""

    def arrays(order: str) -> dict[str, np.ndarray]:
        made = tridiagonal.make_inputs(shape, np.random.default_rng(0))
        return {k: np.asarray(v) for k, v in made.items()}

    return layout_figures(
        toolchains, tridiagonal.PROGRAM, arrays, numpy_thomas,
        repeat=repeat, numpy_repeat=numpy_repeat, rtol=1e-10,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="256,256,80")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--families", default="gtfn,dace")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")  # before the first compiled module loads
    nx, ny, nz = (int(n) for n in args.shape.split(","))
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        toolchains = make_toolchains(args.families.split(","), Path(folder), notes)
        results = tridiagonal_figures(
            toolchains, (nx, ny, nz), args.repeat, max(3, args.repeat // 3)
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
        f"{'family':6} {'layout':6} {'solve ms':>9} {'copy ms':>8} {'numpy ms':>9} "
        f"{'x numpy':>8} {'% copy':>7} {'GB/s':>6} {'copy GB/s':>9}"
    )
    for family, layouts in results.items():
        for layout, r in layouts.items():
            print(
                f"{family:6} {layout:6} {1e3 * r['stencil_s']:9.2f} {1e3 * r['copy_s']:8.2f} "
                f"{1e3 * r['numpy_s']:9.2f} {r['speedup_vs_numpy']:8.1f} "
                f"{100 * r['fraction_of_copy']:6.0f}% {r['stencil_GBps']:6.2f} {r['copy_GBps']:9.2f}"
            )
    for note in notes:
        print(note)
    print(f"load average (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
