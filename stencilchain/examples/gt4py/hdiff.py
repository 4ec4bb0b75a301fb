"""COSMO's horizontal diffusion of stencilchain/examples/hdiff.py in gt4py's spelling, as
gt4py's own test stencil writes it (Cartesian FieldOffsets `Ioff[1]`, a domain by slice)."""

from __future__ import annotations

from typing import Any

import numpy as np

import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import Dims, Field, float64
from stencilchain.examples import hdiff as _twin

IDim = gtx.Dimension("I")
JDim = gtx.Dimension("J")
KDim = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Ioff = gtx.FieldOffset("Ioff", source=IDim, target=(IDim,))
Joff = gtx.FieldOffset("Joff", source=JDim, target=(JDim,))

IJKField = Field[Dims[IDim, JDim, KDim], float64]

DEFAULT_SHAPE = _twin.DEFAULT_SHAPE


@gtx.field_operator
def lap_gt4py(inp: IJKField) -> IJKField:
    return 4.0 * inp - (inp(Ioff[-1]) + inp(Ioff[1]) + inp(Joff[-1]) + inp(Joff[1]))


@gtx.field_operator
def flux_x_gt4py(inp: IJKField) -> IJKField:
    lap = lap_gt4py(inp)
    flx = lap(Ioff[1]) - lap
    return gtx.where(flx * (inp(Ioff[1]) - inp) > 0.0, 0.0, flx)


@gtx.field_operator
def flux_y_gt4py(inp: IJKField) -> IJKField:
    lap = lap_gt4py(inp)
    fly = lap(Joff[1]) - lap
    return gtx.where(fly * (inp(Joff[1]) - inp) > 0.0, 0.0, fly)


@gtx.field_operator
def hdiff_gt4py(inp: IJKField, coeff: IJKField) -> IJKField:
    flx = flux_x_gt4py(inp)
    fly = flux_y_gt4py(inp)
    return inp - coeff * (flx - flx(Ioff[-1]) + fly - fly(Joff[-1]))


@gtx.program
def hdiff_gt4py_program(inp: IJKField, coeff: IJKField, out: IJKField) -> None:
    hdiff_gt4py(inp, coeff, out=out[2:-2, 2:-2, :])


GT_PROGRAM = hdiff_gt4py_program
OWN_PARAMS = ("inp", "coeff", "out")


def offset_provider(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"Ioff": IDim, "Joff": JDim}


PROGRAM, _ = GT_PROGRAM.stencilchain_program(offset_provider({}))


def make_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, Any]:
    return _twin.make_inputs(shape, rng)


def reference(inp: np.ndarray, coeff: np.ndarray, out: np.ndarray) -> dict[str, np.ndarray]:
    return _twin.reference(inp, coeff, out)
