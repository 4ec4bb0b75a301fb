"""What icon4py's own stencils write that the gt4py-spelled front end refused until
scripts/icon4py_coverage.py ran them (docs/guide/icon4py-coverage.md): program scalars
annotated `float`/`bool`, generic field aliases over a TypeVar, scan values annotated with a
NumPy dtype (read per level; a scalar argument the same on each level), `x ** 2` of a float
field, math functions of literals, one domain per field of a tuple `out=` over the same
dimensions, and a field operator of scalars returning a tuple called in a scan's body (the
graupel scheme). Each against a NumPy reference written here, embedded and on every CPU
toolchain (with and without transforms and auto-optimization), in C and Fortran order."""

from __future__ import annotations

import importlib.util
from typing import TypeVar

import numpy as np
import pytest

import stencilchain as sc
import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import Dims, Field
from stencilchain.compat.gt4py.experimental import concat_where

from ._support import laid_out

Cell = gtx.Dimension("Cell")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
T = TypeVar("T", np.float64, np.float32, float, bool, np.int32, np.int64)
CellKField = Field[Dims[Cell, K], T]  # icon4py's field_type_aliases
CellField = Field[Dims[Cell], T]
wpfloat, vpfloat = gtx.float64, gtx.float32

TOOLCHAINS = ["embedded", "gtfn_cpu", "gtfn_cpu_no_transforms"]
if importlib.util.find_spec("dace") is not None:
    TOOLCHAINS += ["dace_cpu", "dace_cpu_noopt"]


@pytest.fixture(params=TOOLCHAINS)
def backend(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    return None if request.param == "embedded" else request.getfixturevalue(request.param)


@pytest.fixture(params=["C", "F"])
def order(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def run(program, backend, *args):  # type: ignore[no-untyped-def]
    (program if backend is None else program.with_backend(backend))(*args, offset_provider={})


@gtx.field_operator
def _scaled(a: CellKField[wpfloat], x: float, flag: bool) -> CellKField[wpfloat]:
    return a * x if flag else a


@gtx.program
def scaled(a: CellKField[wpfloat], out: CellKField[wpfloat], x: float, flag: bool):
    _scaled(a, x, flag, out=out)


def test_program_scalars_annotated_float_and_bool(backend, order) -> None:
    a = laid_out(np.random.default_rng(0).random((5, 4)), order)
    for flag in (True, False):
        out = laid_out(np.zeros((5, 4)), order)
        run(scaled, backend, a, out, 3.0, flag)
        np.testing.assert_array_equal(out, 3.0 * a if flag else a)


def test_a_generic_alias_takes_its_dtype() -> None:
    assert CellKField[np.float64] == sc.Field[[Cell, K], sc.float64]
    assert CellField[vpfloat] == sc.Field[[Cell], sc.float32]
    with pytest.raises(sc.DefinitionError, match="is one of"):
        CellField[np.int16]


@gtx.scan_operator(axis=K, forward=True, init=vpfloat(0.0))
def _decay(state: vpfloat, a: vpfloat, w: vpfloat) -> vpfloat:
    return state * w + a


@gtx.field_operator
def _decayed(a: CellKField[vpfloat], w: vpfloat) -> CellKField[vpfloat]:
    return _decay(a, w)


@gtx.program
def decayed(a: CellKField[vpfloat], w: vpfloat, out: CellKField[vpfloat]):
    _decayed(a, w, out=out)


@gtx.scan_operator(axis=K, forward=False, init=(0.0, 0.0))
def _sweep(state: tuple[wpfloat, wpfloat], a: wpfloat, b: wpfloat) -> tuple[wpfloat, wpfloat]:
    return state[0] + a, state[1] * 0.5 + b


@gtx.field_operator
def _swept(
    a: CellKField[wpfloat], b: CellField[wpfloat]
) -> tuple[CellKField[wpfloat], CellKField[wpfloat]]:
    return _sweep(a, b)


@gtx.program
def swept(
    a: CellKField[wpfloat], b: CellField[wpfloat], x: CellKField[wpfloat], y: CellKField[wpfloat]
):
    _swept(a, b, out=(x, y))


def test_scan_values_annotated_with_dtypes_are_read_per_level(backend, order) -> None:
    rng = np.random.default_rng(1)
    a = laid_out(rng.random((6, 5)).astype(np.float32), order)
    out = laid_out(np.zeros((6, 5), np.float32), order)
    run(decayed, backend, a, np.float32(0.5), out)  # a scalar: the same on each level
    expected, carry = np.zeros_like(a), np.zeros(6, np.float32)
    for k in range(5):
        carry = carry * np.float32(0.5) + a[:, k]
        expected[:, k] = carry
    np.testing.assert_array_equal(out, expected)

    a64, b = laid_out(rng.random((6, 5)), order), rng.random(6)  # b: over Cell only
    x, y = laid_out(np.zeros((6, 5)), order), laid_out(np.zeros((6, 5)), order)
    run(swept, backend, a64, b, x, y)
    ex, ey, s0, s1 = np.zeros((6, 5)), np.zeros((6, 5)), np.zeros(6), np.zeros(6)
    for k in reversed(range(5)):
        s0, s1 = s0 + a64[:, k], s1 * 0.5 + b
        ex[:, k], ey[:, k] = s0, s1
    np.testing.assert_array_equal(x, ex)
    np.testing.assert_array_equal(y, ey)


@gtx.field_operator
def _powers(
    a: CellKField[wpfloat], b: CellKField[vpfloat]
) -> tuple[CellKField[wpfloat], CellKField[vpfloat]]:
    return a**2 + a**3, b**2


@gtx.program
def powers(
    a: CellKField[wpfloat], b: CellKField[vpfloat], x: CellKField[wpfloat], y: CellKField[vpfloat]
):
    _powers(a, b, out=(x, y))


def test_a_float_field_to_an_int_literal_power(backend, order) -> None:
    rng = np.random.default_rng(2)
    a = laid_out(rng.random((4, 3)), order)
    b = laid_out(rng.random((4, 3)).astype(np.float32), order)
    x, y = laid_out(np.zeros((4, 3)), order), laid_out(np.zeros((4, 3), np.float32), order)
    run(powers, backend, a, b, x, y)
    np.testing.assert_allclose(x, a**2.0 + a**3.0, rtol=1e-15)
    np.testing.assert_allclose(y, b ** np.float32(2.0), rtol=1e-6)
    assert y.dtype == np.float32


@gtx.field_operator
def _times_hundred(a: CellKField[wpfloat]) -> CellKField[wpfloat]:
    return a * gtx.exp(2.0 * gtx.log(wpfloat("10.0"))) + gtx.minimum(1.0, 2.0)


@gtx.program
def times_hundred(a: CellKField[wpfloat], out: CellKField[wpfloat]):
    _times_hundred(a, out=out)


def test_math_functions_of_literals(backend, order) -> None:
    a = laid_out(np.random.default_rng(3).random((4, 3)), order)
    out = laid_out(np.zeros((4, 3)), order)
    run(times_hundred, backend, a, out)
    np.testing.assert_allclose(out, a * 100.0 + 1.0, rtol=1e-13)


@gtx.field_operator
def _twice_and_thrice(a: CellKField[wpfloat]) -> tuple[CellKField[wpfloat], CellKField[wpfloat]]:
    return 2.0 * a, 3.0 * a


@gtx.program
def twice_and_thrice(
    a: CellKField[wpfloat],
    x: CellKField[wpfloat],
    y: CellKField[wpfloat],
    start: gtx.int32,
    stop: gtx.int32,
):
    _twice_and_thrice(
        a,
        out=(x, y),
        domain=({Cell: (start, stop), K: (0, 4)}, {Cell: (start, stop), K: (1, 4)}),
    )


def test_one_domain_per_field_of_a_tuple_out_over_the_same_dimensions(backend, order) -> None:
    a = laid_out(np.random.default_rng(4).random((5, 4)), order)
    x, y = laid_out(np.zeros((5, 4)), order), laid_out(np.zeros((5, 4)), order)
    run(twice_and_thrice, backend, a, x, y, np.int32(1), np.int32(4))
    ex, ey = np.zeros((5, 4)), np.zeros((5, 4))
    ex[1:4, :] = 2.0 * a[1:4, :]
    ey[1:4, 1:] = 3.0 * a[1:4, 1:]
    np.testing.assert_array_equal(x, ex)
    np.testing.assert_array_equal(y, ey)


def test_a_tuple_of_domains_of_the_wrong_length_names_the_call() -> None:
    @gtx.program
    def wrong(a: CellKField[wpfloat], x: CellKField[wpfloat], y: CellKField[wpfloat]):
        _twice_and_thrice(a, out=(x, y), domain=({Cell: (0, 2)},))

    z = np.zeros((3, 2))
    with pytest.raises(sc.DefinitionError, match="tuple of 1 domains"):
        wrong(z, z.copy(), z.copy(), offset_provider={})


Edge = gtx.Dimension("Edge")
KField = Field[Dims[K], T]
EdgeField = Field[Dims[Edge], T]
EdgeKField = Field[Dims[Edge, K], T]


@gtx.field_operator
def _damped(
    scal: KField[wpfloat], z: EdgeField[wpfloat], vn: EdgeKField[wpfloat]
) -> EdgeKField[wpfloat]:
    return vn + scal * z  # (K) * (Edge): gt4py orders the result (Edge, K)


@gtx.program
def damped(
    scal: KField[wpfloat], z: EdgeField[wpfloat], vn: EdgeKField[wpfloat], out: EdgeKField[wpfloat]
):
    _damped(scal, z, vn, out=out)


def test_fields_over_dimensions_that_are_not_nested_promote_as_in_gt4py(backend, order) -> None:
    """icon4py's apply_weighted_2nd_and_4th_order_divergence_damping multiplies a K field by
    an Edge field: gt4py promotes the dimensions (horizontal before vertical), the DSL's
    own rule asks for sc.broadcast."""
    rng = np.random.default_rng(5)
    scal, z = rng.random(4), rng.random(6)
    vn = laid_out(rng.random((6, 4)), order)
    out = laid_out(np.zeros((6, 4)), order)
    run(damped, backend, scal, z, vn, out)
    np.testing.assert_array_equal(out, vn + scal[None, :] * z[:, None])
    with pytest.raises(sc.DefinitionError, match="mismatched dimensions"):

        @sc.field_operator
        def own_rule(
            a: sc.Field[[K], sc.float64], b: sc.Field[[Edge], sc.float64]
        ) -> sc.Field[[Edge, K], sc.float64]:
            return a * b


@gtx.field_operator
def _above(a: CellKField[wpfloat], n: gtx.int32) -> CellKField[wpfloat]:
    return concat_where(K >= gtx.maximum(2, n - 2), a * 2.0, a)  # noqa: SIM300


@gtx.program
def above(a: CellKField[wpfloat], out: CellKField[wpfloat], n: gtx.int32, nflat: gtx.int32):
    _above(a, n, out=out, domain={Cell: (0, 3), K: (gtx.maximum(1, nflat), gtx.minimum(n, 6))})


def test_maximum_and_minimum_in_bounds_and_conditions(backend, order) -> None:
    """icon4py's advection stencils bound a concat_where by `maximum(2, end - 2)` and a
    domain by `maximum(1, nflatlev)`: the larger or smaller of two integer expressions of
    program scalars, in both."""
    a = laid_out(np.random.default_rng(6).random((3, 6)), order)
    for n, nflat in ((5, 0), (3, 2), (9, -1)):
        out = laid_out(np.zeros((3, 6)), order)
        run(above, backend, a, out, np.int32(n), np.int32(nflat))
        k = np.arange(6)
        expected = np.zeros((3, 6))
        levels = (k >= max(1, nflat)) & (k < min(n, 6))
        expected[:, levels] = np.where(k >= max(2, n - 2), 2.0 * a, a)[:, levels]
        np.testing.assert_array_equal(out, expected)


@gtx.field_operator
def _split(
    a: CellKField[wpfloat], nflat: gtx.int32, x: wpfloat
) -> tuple[CellKField[wpfloat], CellKField[wpfloat]]:
    below = concat_where(K >= nflat, a * x, a)  # noqa: SIM300 (a condition on a scalar: lowered)
    return below, 3.0 * a


@gtx.program
def split(
    a: CellKField[wpfloat],
    u: CellKField[wpfloat],
    v: CellKField[wpfloat],
    nflat: gtx.int32,
    x: wpfloat,
    start: gtx.int32,
    stop: gtx.int32,
):
    _split(
        a,
        nflat,
        x * 2.0,  # a computed argument: lowered too
        out=(u, v),
        domain=({Cell: (start, stop), K: (1, 5)}, {Cell: (start, stop), K: (0, 4)}),
    )


def test_a_domain_per_field_of_a_lowered_call(backend, order) -> None:
    """icon4py's compute_rho_theta_pgrad_and_update_vn and
    compute_perturbed_quantities_and_interpolation: one domain per field of out= for a call
    that the trace lowers (a condition on a scalar, a computed argument)."""
    a = laid_out(np.random.default_rng(7).random((4, 6)), order)
    u, v = laid_out(np.zeros((4, 6)), order), laid_out(np.zeros((4, 6)), order)
    run(split, backend, a, u, v, np.int32(3), 0.5, np.int32(1), np.int32(3))
    k = np.arange(6)
    eu, ev = np.zeros((4, 6)), np.zeros((4, 6))
    eu[1:3, 1:5] = np.where(k >= 3, a * 1.0, a)[1:3, 1:5]
    ev[1:3, 0:4] = 3.0 * a[1:3, 0:4]
    np.testing.assert_array_equal(u, eu)
    np.testing.assert_array_equal(v, ev)


@gtx.field_operator
def _snow_parameters(
    temperature: wpfloat, qs: wpfloat, snow_exists: bool, option: gtx.int32
) -> tuple[wpfloat, wpfloat, wpfloat]:
    # icon4py's compute_snow_interception_and_collision_parameters, shortened: a field
    # operator of scalars returning a tuple of scalars, with `if`s on them
    if snow_exists:
        if option == 1:
            n0s = gtx.minimum(gtx.exp(wpfloat("-0.1") * temperature), wpfloat("1.0e2"))
        else:
            n0s = gtx.maximum(qs * wpfloat("3.0"), wpfloat("0.5"))
        crim = qs * n0s
        cbsdep = gtx.sqrt(n0s)
    else:
        n0s = wpfloat("8.0")
        crim = wpfloat("0.0")
        cbsdep = wpfloat("0.0")
    return n0s, crim, cbsdep


@gtx.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def _graupel_like(
    state: tuple[wpfloat, wpfloat], temperature: wpfloat, qs: wpfloat, option: gtx.int32
) -> tuple[wpfloat, wpfloat]:
    snow_exists = True if qs > wpfloat("0.5") else False  # noqa: SIM210 (icon4py's spelling)
    n0s, crim, cbsdep = _snow_parameters(temperature, qs, snow_exists, option)
    return state[0] + crim * cbsdep, n0s + wpfloat("0.5") * state[1]


@gtx.field_operator
def _graupel_column(
    temperature: CellKField[wpfloat], qs: CellKField[wpfloat], option: gtx.int32
) -> tuple[CellKField[wpfloat], CellKField[wpfloat]]:
    return _graupel_like(temperature, qs, option)  # as icon4py calls its scan


@gtx.program
def graupel_like(
    temperature: CellKField[wpfloat],
    qs: CellKField[wpfloat],
    option: gtx.int32,
    total: CellKField[wpfloat],
    n0s: CellKField[wpfloat],
):
    _graupel_column(temperature, qs, option, out=(total, n0s))


def test_a_field_operator_of_scalars_returning_a_tuple_in_a_scan(backend, order) -> None:
    """icon4py's icon_graupel calls compute_snow_interception_and_collision_parameters
    (scalars in, a tuple of five scalars out) in its scan's body: inlined there, against
    NumPy loops (tests/program/test_scalar_functions.py has the DSL's spelling)."""
    rng = np.random.default_rng(11)
    temperature, qs = 40.0 * rng.random((5, 6)) - 20.0, rng.random((5, 6))
    for option in (1, 2):
        total, n0s = laid_out(np.zeros((5, 6)), order), laid_out(np.zeros((5, 6)), order)
        args = (laid_out(temperature, order), laid_out(qs, order), np.int32(option))
        run(graupel_like, backend, *args, total, n0s)
        want_total, want_n0s = np.zeros((5, 6)), np.zeros((5, 6))
        for c in range(5):
            acc, previous = 0.0, 0.0
            for k in range(6):
                t, q = temperature[c, k], qs[c, k]
                if q > 0.5:
                    n = min(np.exp(-0.1 * t), 1.0e2) if option == 1 else max(q * 3.0, 0.5)
                    crim, cbsdep = q * n, np.sqrt(n)
                else:
                    n, crim, cbsdep = 8.0, 0.0, 0.0
                acc, previous = acc + crim * cbsdep, n + 0.5 * previous
                want_total[c, k], want_n0s[c, k] = acc, previous
        np.testing.assert_allclose(total, want_total, rtol=1e-13)
        np.testing.assert_allclose(n0s, want_n0s, rtol=1e-13)


def test_a_field_operator_of_scalars_called_directly_is_refused() -> None:
    """gt4py types a direct call or a program's call of a field operator that returns
    scalars as an error (its out= is a field, its result a scalar): refused with a reason."""
    out = gtx.as_field([Cell, K], np.zeros((5, 6)))
    with pytest.raises(gtx.ArgumentError, match="computes scalars from scalars"):
        _snow_parameters(1.0, 0.5, True, np.int32(1), out=(out, out, out), offset_provider={})
