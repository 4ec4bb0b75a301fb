"""Every gt4py built-in of field operators on embedded, GTFN and DaCe, in both layouts,
against NumPy: math functions under gt4py's names, where, astype, broadcast, int32(...)
literals, neighbour reductions with axis= over a table with missing neighbours, C2E[0],
as_offset with a Cartesian FieldOffset, concat_where, a scan."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import Dims, Field, float32, float64, int32
from stencilchain.compat.gt4py.experimental import as_offset, concat_where
from tests.compat._support import LAYOUTS, TOOLCHAINS, laid_out, toolchain, with_missing

Cell = gtx.Dimension("Cell")
Edge = gtx.Dimension("Edge")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
C2EDim = gtx.Dimension("C2EDim", kind=gtx.DimensionKind.LOCAL)
C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))
Koff = gtx.FieldOffset("Koff", source=K, target=(K,))

CK = Field[Dims[Cell, K], float64]
EK = Field[Dims[Edge, K], float64]


@gtx.field_operator
def unary_math(x: CK) -> CK:
    # x in (0.1, 0.9): every function is defined there
    a = gtx.sin(x) + gtx.cos(x) + gtx.tan(x) + gtx.arcsin(x) + gtx.arccos(x) + gtx.arctan(x)
    b = gtx.sinh(x) + gtx.cosh(x) + gtx.tanh(x) + gtx.arcsinh(x) + gtx.arctanh(x)
    c = gtx.arccosh(x + 1.0) + gtx.sqrt(x) + gtx.exp(x) + gtx.log(x) + gtx.cbrt(x)
    d = gtx.floor(4.0 * x) + gtx.ceil(4.0 * x) + gtx.trunc(-4.0 * x) + gtx.abs(x - 0.5)
    return a + b + c + d + gtx.neg(x) + gtx.gamma(x + 1.0)


@gtx.field_operator
def binary_math(x: CK, y: CK) -> CK:
    fin = gtx.where(gtx.isfinite(x) & ~gtx.isnan(y) & ~gtx.isinf(x), 1.0, 0.0)
    return gtx.minimum(x, y) + gtx.maximum(x, y) * gtx.fmod(x, 0.3) + gtx.power(x, y) + fin


@gtx.field_operator
def precision(x: CK, n: Field[Dims[Cell, K], int32], f: Field[Dims[K], float32]) -> CK:
    x32 = gtx.astype(x, float32) * float32(0.5) + gtx.broadcast(f, (Cell, K))
    m = n * int32(3) + 1  # a Python int literal is int32 under gt4py's rules
    return gtx.astype(x32, float64) + gtx.astype(m, float64) + gtx.astype(n > 2, float64)


@gtx.field_operator
def reductions(e: EK) -> tuple[CK, CK, CK, CK]:
    return (
        gtx.neighbor_sum(e(C2E), axis=C2EDim),
        gtx.max_over(e(C2E), axis=C2EDim),
        gtx.min_over(e(C2E), axis=C2EDim),
        e(C2E[0]),
    )


@gtx.scan_operator(axis=K, forward=False, init=0.0)
def down(carry: float, x: float) -> float:
    return 0.5 * carry + x


@gtx.field_operator
def columns(x: CK, off: Field[Dims[Cell, K], int32], k_top: int32) -> tuple[CK, CK]:
    shifted = x(as_offset(Koff, off))
    return concat_where(k_top <= K, x, shifted), down(x)


@gtx.program
def all_builtins(
    x: CK, y: CK, n: Field[Dims[Cell, K], int32], f: Field[Dims[K], float32], e: EK,
    off: Field[Dims[Cell, K], int32], k_top: int32,
    o1: CK, o2: CK, o3: CK, s: CK, mx: CK, mn: CK, first: CK, picked: CK, scanned: CK,
) -> None:  # fmt: skip
    unary_math(x, out=o1)
    binary_math(x, y, out=o2)
    precision(x, n, f, out=o3)
    reductions(e, out=(s, mx, mn, first))
    columns(x, off, k_top, out=(picked, scanned))


NC, NE, NK = 6, 10, 5


def _inputs(rng: np.random.Generator) -> tuple[list[Any], np.ndarray]:
    x = 0.1 + 0.8 * rng.random((NC, NK))
    y = 0.1 + 0.8 * rng.random((NC, NK))
    n = rng.integers(0, 5, (NC, NK)).astype(np.int32)
    f = rng.random(NK).astype(np.float32)
    e = rng.random((NE, NK))
    # offsets that stay in the column where they are read (K < 3): 0, +1 or -1
    off = np.zeros((NC, NK), np.int32)
    off[:, 1:3] = rng.integers(-1, 2, (NC, 2))
    c2e = with_missing(rng.integers(0, NE, (NC, 3)).astype(np.int32), rng)
    outs = [np.zeros((NC, NK)) for _ in range(9)]
    return [x, y, n, f, e, off, 3, *outs], c2e


def _reference(args: list[Any], c2e: np.ndarray) -> list[np.ndarray]:
    x, y, n, f, e, off, k_top = args[:7]
    a = np.sin(x) + np.cos(x) + np.tan(x) + np.arcsin(x) + np.arccos(x) + np.arctan(x)
    b = np.sinh(x) + np.cosh(x) + np.tanh(x) + np.arcsinh(x) + np.arctanh(x)
    c = np.arccosh(x + 1.0) + np.sqrt(x) + np.exp(x) + np.log(x) + np.cbrt(x)
    d = np.floor(4.0 * x) + np.ceil(4.0 * x) + np.trunc(-4.0 * x) + np.abs(x - 0.5)
    from math import gamma

    o1 = a + b + c + d - x + np.vectorize(gamma)(x + 1.0)
    o2 = np.minimum(x, y) + np.maximum(x, y) * np.fmod(x, 0.3) + np.power(x, y) + 1.0
    x32 = x.astype(np.float32) * np.float32(0.5) + f[None, :]
    o3 = x32.astype(np.float64) + (n * 3 + 1).astype(np.float64) + (n > 2).astype(np.float64)
    gathered = np.where(c2e[:, :, None] >= 0, e[np.maximum(c2e, 0)], np.nan)
    s = np.nansum(gathered, axis=1)
    mx, mn = np.nanmax(gathered, axis=1), np.nanmin(gathered, axis=1)
    first = e[c2e[:, 0]]
    ks = np.arange(NK)
    shifted = np.take_along_axis(x, np.clip(ks[None, :] + off, 0, NK - 1), axis=1)
    picked = np.where(ks[None, :] >= k_top, x, shifted)
    scanned = np.zeros_like(x)
    carry = np.zeros(NC)
    for k in range(NK - 1, -1, -1):
        carry = scanned[:, k] = 0.5 * carry + x[:, k]
    return [o1, o2, o3, s, mx, mn, first, picked, scanned]


@pytest.mark.parametrize("order", LAYOUTS)
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_every_builtin(name: str, order: str, request: pytest.FixtureRequest) -> None:
    rng = np.random.default_rng(21)
    args, c2e = _inputs(rng)
    want = _reference(args, c2e)
    args = [laid_out(a, order) for a in args]
    backend = toolchain(request, name)
    program = all_builtins if backend is None else all_builtins.with_backend(backend)
    program(*args, offset_provider={"C2E": c2e, "Koff": K})
    tolerance = {2: 1e-6}  # o3 went through float32
    for i, (got, expected) in enumerate(zip(args[7:], want)):
        np.testing.assert_allclose(
            got, expected, rtol=tolerance.get(i, 1e-12), atol=1e-12, err_msg=f"output {i}"
        )
