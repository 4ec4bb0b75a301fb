"""gt4py code whose fields have their own domains, imports only changed: gt4py's origin
tests (an `in` and an `out` field starting after 0, a direct field-operator call over a
domain) and icon4py's half levels (fields of nlev + 1 levels beside fields of nlev), on
every CPU toolchain, against NumPy references written here."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import constructors
from tests.compat._support import LAYOUTS, TOOLCHAINS, laid_out, toolchain

IDim = gtx.Dimension("IDim")
CellDim = gtx.Dimension("CellDim")
KDim = gtx.Dimension("KDim", kind=gtx.DimensionKind.VERTICAL)
Koff = gtx.FieldOffset("Koff", source=KDim, target=(KDim,))
IField = gtx.Field[gtx.Dims[IDim], gtx.int32]
CKField = gtx.Field[gtx.Dims[CellDim, KDim], gtx.float64]
SIZE, NLEV = 10, 5


@gtx.field_operator
def identity(a: IField) -> IField:
    return a


@gtx.program
def copy_program(in_field: IField, out: IField):
    identity(in_field, out=out)


@gtx.program
def copy_inside(a: IField, out: IField):
    identity(a, out=out, domain={IDim: (1, 9)})


@gtx.field_operator
def interpolate_to_full_levels(w: CKField, theta_v: CKField) -> CKField:
    return 0.5 * (w + w(Koff[1])) * theta_v


@gtx.program
def full_levels(w: CKField, theta_v: CKField, out: CKField):
    interpolate_to_full_levels(w, theta_v, out=out)


@gtx.field_operator
def average_to_half_levels(theta_v: CKField) -> CKField:
    return 0.5 * (theta_v + theta_v(Koff[-1]))


@gtx.program
def half_levels(theta_v: CKField, w: CKField, nlev: gtx.int32):
    average_to_half_levels(theta_v, out=w, domain={KDim: (1, nlev)})


def _run(program: Any, name: str, request: pytest.FixtureRequest) -> Any:
    chain = toolchain(request, name)
    return program if chain is None else program.with_backend(chain)


@pytest.mark.parametrize("name", TOOLCHAINS)
def test_out_field_arg_with_non_zero_domain_start(
    name: str, request: pytest.FixtureRequest
) -> None:
    inp = gtx.as_field([IDim], np.arange(SIZE, dtype=np.int32) * 3)
    out = constructors.empty({IDim: (1, SIZE - 2)}, dtype=gtx.int32)
    _run(copy_program, name, request)(inp, out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), inp.asnumpy()[1:-2])


@pytest.mark.parametrize("name", TOOLCHAINS)
def test_in_field_arg_with_non_zero_domain_start(name: str, request: pytest.FixtureRequest) -> None:
    inp = constructors.full({IDim: (1, 9)}, 42, dtype=gtx.int32)
    out = gtx.as_field([IDim], np.arange(SIZE, dtype=np.int32))
    ref = out.asnumpy().copy()
    ref[1:9] = inp.asnumpy()
    _run(copy_inside, name, request)(inp, out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), ref)


@pytest.mark.parametrize("order", LAYOUTS)
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_half_levels(name: str, order: str, request: pytest.FixtureRequest) -> None:
    rng = np.random.default_rng(4)
    w = laid_out(rng.random((4, NLEV + 1)), order)
    theta_v = laid_out(rng.random((4, NLEV)), order)
    out = laid_out(np.zeros((4, NLEV)), order)
    _run(full_levels, name, request)(
        gtx.as_field([CellDim, KDim], w),
        gtx.as_field([CellDim, KDim], theta_v),
        gtx.as_field([CellDim, KDim], out),
        offset_provider={"Koff": KDim},
    )
    np.testing.assert_allclose(out, 0.5 * (w[:, :-1] + w[:, 1:]) * theta_v, rtol=1e-15)
    half = laid_out(np.full((4, NLEV + 1), -1.0), order)
    _run(half_levels, name, request)(
        gtx.as_field([CellDim, KDim], theta_v),
        gtx.as_field([CellDim, KDim], half),
        gtx.int32(NLEV),
        offset_provider={"Koff": KDim},
    )
    ref = np.full((4, NLEV + 1), -1.0)
    ref[:, 1:NLEV] = 0.5 * (theta_v[:, 1:] + theta_v[:, :-1])
    np.testing.assert_allclose(half, ref, rtol=1e-15)
