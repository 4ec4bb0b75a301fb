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


# gt4py's test_unstructured_shift_with_non_zero_origin and
# test_neighbor_sum_with_non_zero_origin, as gt4py writes them: fields sliced (`a[2:]`)
Vertex = gtx.Dimension("Vertex")
Edge = gtx.Dimension("Edge")
E2VDim = gtx.Dimension("E2V", kind=gtx.DimensionKind.LOCAL)
E2V = gtx.FieldOffset("E2V", source=Vertex, target=(Edge, E2VDim))
VField = gtx.Field[gtx.Dims[Vertex], gtx.float64]
EField = gtx.Field[gtx.Dims[Edge], gtx.float64]
ORIGIN, N_VERTICES = 2, 9


@gtx.field_operator
def shift_by_one(inp: VField) -> EField:
    return inp(E2V[0])


@gtx.program
def shift_program(inp: VField, out: EField):
    shift_by_one(inp, out=out)


@gtx.field_operator
def vertex_sum(inp: VField) -> EField:
    return gtx.neighbor_sum(inp(E2V), axis=E2VDim)


@gtx.program
def sum_program(inp: VField, out: EField):
    vertex_sum(inp, out=out)


def _ring() -> np.ndarray:
    """Each vertex's edges to the next vertex and the one after, on a ring, listed from
    the lower vertex."""
    rows = [(v, v + d) for v in range(N_VERTICES) for d in (1, 2)]
    return np.array([(b % N_VERTICES, a) if b >= N_VERTICES else (a, b) for a, b in rows], np.int32)


def _edges_from_origin(e2v: np.ndarray, all_slots: bool) -> tuple[int, int]:
    """gt4py's choice: the first run of edges whose neighbours lie from ORIGIN on."""
    ok = (e2v >= ORIGIN).all(axis=1) if all_slots else e2v[:, 0] >= ORIGIN
    start = int(np.argmax(ok))
    stop = start + int(np.argmin(ok[start:])) if not ok[start:].all() else len(ok)
    return start, stop


@pytest.mark.parametrize("name", TOOLCHAINS)
@pytest.mark.parametrize("reduce", [False, True], ids=["shift", "neighbor_sum"])
def test_unstructured_fields_with_a_non_zero_origin(
    name: str, reduce: bool, request: pytest.FixtureRequest
) -> None:
    e2v = _ring()
    a = np.random.default_rng(6).random(N_VERTICES)
    start, stop = _edges_from_origin(e2v, all_slots=reduce)
    assert 0 < start < stop <= len(e2v)
    inp = gtx.as_field([Vertex], a)
    out = constructors.full({Edge: len(e2v)}, -7.0, dtype=gtx.float64)
    program = sum_program if reduce else shift_program
    backend = toolchain(request, name)
    run = program if backend is None else program.with_backend(backend)
    provider = {"E2V": gtx.as_connectivity([Edge, E2VDim], Vertex, e2v)}
    run(inp[ORIGIN:], out[start:stop], offset_provider=provider)
    expected = np.full(len(e2v), -7.0)
    rows = e2v[start:stop]
    expected[start:stop] = a[rows].sum(axis=1) if reduce else a[rows[:, 0]]
    np.testing.assert_array_equal(out.asnumpy(), expected)
    assert inp[ORIGIN:].domain == {Vertex: (ORIGIN, N_VERTICES)}
