"""The tridiagonal solve of stencilchain/examples/tridiagonal.py in gt4py's spelling: two
scan operators with `float` states and values, a tuple state, as gt4py writes them."""

from __future__ import annotations

from typing import Any

import numpy as np

import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import Dims, Field, float64
from stencilchain.examples import tridiagonal as _twin

IDim = gtx.Dimension("I")
JDim = gtx.Dimension("J")
KDim = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)

IJKField = Field[Dims[IDim, JDim, KDim], float64]

DEFAULT_SHAPE = _twin.DEFAULT_SHAPE


@gtx.scan_operator(axis=KDim, forward=True, init=(0.0, 0.0))
def tridiag_forward(
    state: tuple[float, float], a: float, b: float, c: float, d: float
) -> tuple[float, float]:
    c_below, d_below = state
    denominator = b - a * c_below
    return c / denominator, (d - a * d_below) / denominator


@gtx.scan_operator(axis=KDim, forward=False, init=0.0)
def tridiag_backward(x_above: float, c_prime: float, d_prime: float) -> float:
    return d_prime - c_prime * x_above


@gtx.field_operator
def solve_tridiag_gt4py(a: IJKField, b: IJKField, c: IJKField, d: IJKField) -> IJKField:
    c_prime, d_prime = tridiag_forward(a, b, c, d)
    return tridiag_backward(c_prime, d_prime)


@gtx.program
def tridiagonal_gt4py_program(
    a: IJKField, b: IJKField, c: IJKField, d: IJKField, x: IJKField
) -> None:
    solve_tridiag_gt4py(a, b, c, d, out=x)


GT_PROGRAM = tridiagonal_gt4py_program
OWN_PARAMS = ("a", "b", "c", "d", "x")
PROGRAM, _ = GT_PROGRAM.stencilchain_program({})


def offset_provider(inputs: dict[str, Any]) -> dict[str, Any]:
    return {}


def make_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, Any]:
    return _twin.make_inputs(shape, rng)


def reference(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, x: np.ndarray
) -> dict[str, np.ndarray]:
    return _twin.reference(a, b, c, d, x)
