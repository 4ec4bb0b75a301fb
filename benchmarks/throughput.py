"""Throughput of structured stencils against a compiled copy and NumPy, per layout.

A stencil is timed side by side, in the same run and on the same arrays, with:

- its NumPy formulation (the embedded executor, or the NumPy code a module gives);
- a compiled copy through the same toolchain: `copy(src, out)`, an identity field operator
  over the same domain, on an array of the stencil's shape and layout. It moves the
  bytes of one input and one output once: the bandwidth limit of a streaming stencil here.

Bandwidth is counted in unique bytes (each input read once, each output written once,
write-allocate traffic not counted), for the stencil and for the copy;
`fraction_of_copy` = stencil GB/s / copy GB/s. Times are medians of `repeat` calls after
a warm-up call; every array is allocated and touched before timing; the compiled result
is checked against the NumPy one first.

    OMP_NUM_THREADS=2 python -m benchmarks.throughput [--families gtfn,dace] [--quick]

runs the Laplacian 4096^2 and hdiff 256x256x80, C and Fortran order (`python -m
benchmarks` runs them with every other figure).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, Literal

import numpy as np

if __package__ in (None, ""):  # run as `python benchmarks/throughput.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import stencilchain as sc
from benchmarks._common import make_toolchains, median_seconds
from stencilchain.examples import hdiff, laplacian

I, J, K = hdiff.I, hdiff.J, hdiff.K
Field2D = sc.Field[[I, J], sc.float64]
Field3D = sc.Field[[I, J, K], sc.float64]


@sc.field_operator
def identity_2d(f: Field2D) -> Field2D:
    return f


@sc.program
def copy_2d(f: Field2D, out: Field2D) -> None:
    identity_2d(f, out=out)


@sc.field_operator
def identity_3d(f: Field3D) -> Field3D:
    return f


@sc.program
def copy_3d(f: Field3D, out: Field3D) -> None:
    identity_3d(f, out=out)


COPIES = {2: copy_2d, 3: copy_3d}

ArrayMaker = Callable[[str], dict[str, np.ndarray]]


def layout_figures(
    toolchains: Mapping[str, Any],
    program: Any,
    make_arrays: ArrayMaker,
    numpy_call: Callable[..., Any],
    *,
    repeat: int,
    numpy_repeat: int,
    rtol: float = 1e-12,
    layouts: tuple[Literal["C", "F"], ...] = ("C", "F"),
) -> dict[str, dict[str, dict[str, float]]]:
    """`{family: {layout: figures}}` of `program(*arrays)` (its last argument is its
    output) against the compiled copy and `numpy_call(*arrays)`, for C and F order."""
    results: dict[str, dict[str, dict[str, float]]] = {family: {} for family in toolchains}
    for order in layouts:
        arrays = {k: np.array(v, order=order) for k, v in make_arrays(order).items()}
        args = list(arrays.values())
        out = args[-1]
        unique_bytes = sum(a.nbytes for a in args)
        expected = np.zeros_like(out)
        numpy_call(*args[:-1], expected)
        t_numpy = median_seconds(partial(numpy_call, *args), numpy_repeat)
        src, dst = np.array(out, order=order), np.zeros_like(out, order=order)
        src[...] = 1.0
        for family, toolchain in toolchains.items():
            stencil = program.with_backend(toolchain)
            copy = COPIES[out.ndim].with_backend(toolchain)
            out[...] = 0.0
            stencil(*args)
            np.testing.assert_allclose(out, expected, rtol=rtol)
            t_stencil = median_seconds(partial(stencil, *args), repeat)
            t_copy = median_seconds(partial(copy, src, dst), repeat)
            stencil_gbps = unique_bytes / t_stencil / 1e9
            copy_gbps = (src.nbytes + dst.nbytes) / t_copy / 1e9
            results[family][order] = {
                "stencil_s": t_stencil,
                "copy_s": t_copy,
                "numpy_s": t_numpy,
                "unique_bytes": unique_bytes,
                "stencil_GBps": stencil_gbps,
                "copy_GBps": copy_gbps,
                "fraction_of_copy": stencil_gbps / copy_gbps,
                "speedup_vs_numpy": t_numpy / t_stencil,
            }
    return results


def laplacian_figures(
    toolchains: Mapping[str, Any], size: int, repeat: int, numpy_repeat: int
) -> dict[str, dict[str, dict[str, float]]]:
    """The 5-point Laplacian (stencilchain.examples.laplacian) on size x size."""

    def arrays(order: str) -> dict[str, np.ndarray]:
        made = laplacian.make_inputs((size, size), np.random.default_rng(0))
        return {k: np.asarray(v) for k, v in made.items()}

    return layout_figures(
        toolchains, laplacian.PROGRAM, arrays, laplacian.PROGRAM,
        repeat=repeat, numpy_repeat=numpy_repeat,
    )  # fmt: skip


def hdiff_figures(
    toolchains: Mapping[str, Any], shape: tuple[int, int, int], repeat: int, numpy_repeat: int
) -> dict[str, dict[str, dict[str, float]]]:
    """hdiff (stencilchain.examples.hdiff, inp, coeff -> out) on `shape`."""

    def arrays(order: str) -> dict[str, np.ndarray]:
        made = hdiff.make_inputs(shape, np.random.default_rng(0))
        return {k: np.asarray(v) for k, v in made.items()}

    return layout_figures(
        toolchains, hdiff.PROGRAM, arrays, hdiff.PROGRAM,
        repeat=repeat, numpy_repeat=numpy_repeat, rtol=1e-10,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default="gtfn,dace")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")  # before the first compiled module loads
    size, shape, repeat = (64, (16, 16, 6), 2) if args.quick else (4096, (256, 256, 80), 10)
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        toolchains = make_toolchains(args.families.split(","), Path(folder), notes)
        results = {
            "laplacian": laplacian_figures(toolchains, size, repeat, max(1, repeat // 2)),
            "hdiff": hdiff_figures(toolchains, shape, repeat, max(1, repeat // 2)),
        }
    print(json.dumps({"figures": results, "notes": notes, "load": os.getloadavg()}, indent=2))


if __name__ == "__main__":
    main()
