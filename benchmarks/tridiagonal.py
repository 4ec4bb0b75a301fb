"""The tridiagonal-scan figure of the design: a Thomas solve in every column of a
256x256x80 float64 grid (stencilchain.examples.tridiagonal, two scans), for C- and
Fortran-order arrays, on GTFN and DaCe, side by side with its baselines in the same run:

- NumPy: the same Thomas algorithm, a Python loop over K vectorized over I and J;
- compiled copy: `x = a + b + c + d` compiled through the same toolchain, which moves
  the bytes of a, b, c, d and x once (the bandwidth limit for this access pattern).

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/tridiagonal.py [--shape 256,256,80] [--json]

Prints medians, the ratios (NumPy / solve: >= 5x is the target; copy / solve, the
fraction of copy bandwidth: >= 40 %), and the load average. Uses a private temporary
cache, never the user's.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

import stencilchain as sc
from stencilchain.examples import tridiagonal

I, J, K = tridiagonal.I, tridiagonal.J, tridiagonal.K
F = tridiagonal.Field3D


@sc.field_operator
def sum4(a: F, b: F, c: F, d: F) -> F:
    return a + b + c + d


@sc.program
def copy_like(a: F, b: F, c: F, d: F, x: F) -> None:
    sum4(a, b, c, d, out=x)


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


def median_seconds(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm up (and compile)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="256,256,80")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--families", default="gtfn,dace")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    shape = tuple(int(n) for n in args.shape.split(","))

    from stencilchain.containers import build_container

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        container = build_container({}, cache_dir=Path(folder))
        toolchains = {f: getattr(container, f).toolchain() for f in args.families.split(",")}
        for order in ("C", "F"):
            inputs = tridiagonal.make_inputs(shape, np.random.default_rng(0))
            arrays = {k: np.array(v, order=order) for k, v in inputs.items()}
            a, b, c, d, x = (arrays[k] for k in ("a", "b", "c", "d", "x"))
            expected = np.zeros_like(x)
            numpy_thomas(a, b, c, d, expected)
            t_numpy = median_seconds(partial(numpy_thomas, a, b, c, d, x), max(3, args.repeat // 3))
            for family, toolchain in toolchains.items():
                solve = tridiagonal.PROGRAM.with_backend(toolchain)
                copy = copy_like.with_backend(toolchain)
                x[...] = 0.0
                solve(a, b, c, d, x)
                np.testing.assert_allclose(x, expected, rtol=1e-10)
                t_solve = median_seconds(partial(solve, a, b, c, d, x), args.repeat)
                t_copy = median_seconds(partial(copy, a, b, c, d, x), args.repeat)
                moved = 5 * a.nbytes
                rows.append(
                    {
                        "family": family,
                        "layout": order,
                        "solve_ms": 1e3 * t_solve,
                        "copy_ms": 1e3 * t_copy,
                        "numpy_ms": 1e3 * t_numpy,
                        "speedup_vs_numpy": t_numpy / t_solve,
                        "fraction_of_copy": t_copy / t_solve,
                        "copy_GBps": moved / t_copy / 1e9,
                    }
                )
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"shape": shape, "rows": rows, "loadavg": load}, indent=2))
        return
    print(
        f"Thomas solve {'x'.join(map(str, shape))} float64, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, medians of {args.repeat}"
    )
    header = (
        f"{'family':6} {'layout':6} {'solve ms':>9} {'copy ms':>8} {'numpy ms':>9} "
        f"{'x numpy':>8} {'% copy':>7} {'copy GB/s':>9}"
    )
    print(header)
    for r in rows:
        print(
            f"{r['family']:6} {r['layout']:6} {r['solve_ms']:9.2f} {r['copy_ms']:8.2f} "
            f"{r['numpy_ms']:9.2f} {r['speedup_vs_numpy']:8.1f} "
            f"{100 * r['fraction_of_copy']:6.0f}% {r['copy_GBps']:9.2f}"
        )
    print(f"load average (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
