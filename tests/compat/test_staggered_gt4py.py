"""gt4py's staggered feature tests (test_staggered.py) with imports only changed:
`flip_staggered(IDim)` and half shifts, on every CPU toolchain that compat's tests run,
against NumPy references written here (gt4py's own `ref=`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import constructors
from tests.compat._support import TOOLCHAINS, toolchain

IDim = gtx.Dimension("IDim")
JDim = gtx.Dimension("JDim")
KDim = gtx.Dimension("KDim", kind=gtx.DimensionKind.VERTICAL)
IHalfDim = gtx.flip_staggered(IDim)
KHalfDim = gtx.flip_staggered(KDim)
IField = gtx.Field[gtx.Dims[IDim], gtx.int32]
IHalfField = gtx.Field[gtx.Dims[IHalfDim], gtx.int32]
SIZE = 10


@gtx.field_operator
def half_shift_plus(a: IField) -> IHalfField:
    return a(IHalfDim + 0.5)


@gtx.field_operator
def half_shift_back(a: IHalfField) -> IHalfField:
    return a(IDim + 0.5)(IHalfDim - 0.5)


@gtx.field_operator
def half_shift_plus1(a: IHalfField) -> IHalfField:
    return a(IHalfDim + 1)


@gtx.field_operator
def half_shift_half2center(a: IHalfField) -> IField:
    return 2 * a(IDim + 0.5)


@gtx.field_operator
def half_shift_vertical(
    a: gtx.Field[gtx.Dims[KDim], gtx.int32],
) -> gtx.Field[[KHalfDim], gtx.int32]:
    return a(KHalfDim + 0.5)


@gtx.field_operator
def half_shift_multi_dim(
    a: gtx.Field[gtx.Dims[IDim, JDim], gtx.int32],
) -> gtx.Field[[IHalfDim, JDim], gtx.int32]:
    return a(IHalfDim + 0.5)


def _run(fop: Any, name: str, request: pytest.FixtureRequest) -> Any:
    chain = toolchain(request, name)
    return fop if chain is None else fop.with_backend(chain)


def _ints(domain: dict[Any, Any]) -> Any:
    shape = tuple(hi - lo if isinstance(hi, int) else 0 for lo, hi in domain.values())
    data = np.random.default_rng(8).integers(-50, 50, shape).astype(np.int32)
    return gtx.as_field(domain, data)


@pytest.mark.parametrize("name", TOOLCHAINS)
def test_cartesian_half_shifts(name: str, request: pytest.FixtureRequest) -> None:
    a = _ints({IDim: (0, SIZE)})
    out = constructors.zeros({IHalfDim: (0, SIZE)}, dtype=gtx.int32)
    _run(half_shift_plus, name, request)(a, out=out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), a.asnumpy())

    a = _ints({IHalfDim: (0, SIZE)})
    out = constructors.zeros({IHalfDim: (0, SIZE)}, dtype=gtx.int32)
    _run(half_shift_back, name, request)(a, out=out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), a.asnumpy())

    a = _ints({IHalfDim: (1, SIZE + 1)})
    out = constructors.zeros({IHalfDim: (0, SIZE)}, dtype=gtx.int32)
    _run(half_shift_plus1, name, request)(a, out=out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), a.asnumpy())

    a = _ints({IHalfDim: (1, SIZE + 1)})
    out = constructors.zeros({IDim: (0, SIZE)}, dtype=gtx.int32)
    _run(half_shift_half2center, name, request)(a, out=out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), 2 * a.asnumpy())


@pytest.mark.parametrize("name", TOOLCHAINS)
def test_vertical_and_multi_dimensional_half_shifts(
    name: str, request: pytest.FixtureRequest
) -> None:
    a = _ints({KDim: (0, SIZE)})
    out = constructors.zeros({KHalfDim: (0, SIZE)}, dtype=gtx.int32)
    _run(half_shift_vertical, name, request)(a, out=out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), a.asnumpy())

    a = _ints({IDim: (0, SIZE), JDim: (0, 7)})
    out = constructors.zeros({IHalfDim: (0, SIZE), JDim: (0, 7)}, dtype=gtx.int32)
    _run(half_shift_multi_dim, name, request)(a, out=out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), a.asnumpy())


def test_the_staggering_functions() -> None:
    assert gtx.is_staggered(IHalfDim) and not gtx.is_staggered(IDim)
    assert gtx.flip_staggered(IHalfDim) == IDim
    assert gtx.as_non_staggered(IHalfDim) == IDim and gtx.as_non_staggered(IDim) == IDim
