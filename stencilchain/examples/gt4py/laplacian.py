"""The 5-point Laplacian of stencilchain/examples/laplacian.py in gt4py's spelling: the
domain is the sliced `out` of the call, gt4py's way (`out=out[1:-1, 1:-1]`)."""

from __future__ import annotations

from typing import Any

import numpy as np

import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import Dims, Field, float64
from stencilchain.examples import laplacian as _twin

IDim = gtx.Dimension("I")
JDim = gtx.Dimension("J")

DEFAULT_SHAPE = _twin.DEFAULT_SHAPE


@gtx.field_operator
def laplacian_gt4py(f: Field[Dims[IDim, JDim], float64]) -> Field[Dims[IDim, JDim], float64]:
    return -4.0 * f + f(IDim + 1) + f(IDim - 1) + f(JDim + 1) + f(JDim - 1)


@gtx.program(grid_type=gtx.GridType.CARTESIAN)
def laplacian_gt4py_program(
    f: Field[Dims[IDim, JDim], float64], out: Field[Dims[IDim, JDim], float64]
) -> None:
    laplacian_gt4py(f, out=out[1:-1, 1:-1])


GT_PROGRAM = laplacian_gt4py_program
OWN_PARAMS = ("f", "out")
PROGRAM, _ = GT_PROGRAM.stencilchain_program({})


def offset_provider(inputs: dict[str, Any]) -> dict[str, Any]:
    return {}


def make_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, Any]:
    return _twin.make_inputs(shape, rng)


def reference(f: np.ndarray, out: np.ndarray) -> dict[str, np.ndarray]:
    return _twin.reference(f, out)
