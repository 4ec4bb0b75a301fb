"""Scan operators called inside field operators, run embedded, against NumPy references
written here: shifted expressions feeding a scan, its result combined with other fields
and read shifted, tuple states, backward scans, sub-ranges of K, scans in callees, scans
of scans, what the program trace lowers them into, and every misuse with its line.

Each line that an error should point at ends with a `# L:<name>` marker.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import ir

from ._support import assert_error_at

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F = sc.Field[[I, J, K], sc.float64]
F_IJ = sc.Field[[I, J], sc.float64]
SHAPE = (4, 3, 8)
HERE = os.path.abspath(__file__)


assert_at = functools.partial(assert_error_at, path=HERE)


def fields(count: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.random(SHAPE) for _ in range(count)]


@sc.scan_operator(axis=K, init=0.0)
def integral(total, f: F):  # type: ignore[no-untyped-def]
    return total + f


@sc.scan_operator(axis=K, forward=False, init=0.0)
def integral_down(total, f: F, weight: sc.float64):  # type: ignore[no-untyped-def]
    return total + weight * f


@sc.scan_operator(axis=K, init=(0.0, 1.0))
def sum_and_product(state, f: F, g: F):  # type: ignore[no-untyped-def]
    total, product = state
    return total + f, product * g


# --- a shifted expression feeds the scan ------------------------------------------------


@sc.field_operator
def averaged_integral(f: F) -> F:
    return integral(0.5 * (f + f(K + 1)))  # type: ignore[no-any-return]


@sc.program
def integrate_averages(f: F, out: F) -> None:
    averaged_integral(f, out=out)


def test_a_shifted_expression_feeds_a_scan() -> None:
    (f,) = fields(1, 0)
    out = np.full(SHAPE, -1.0)
    integrate_averages(f, out)
    expected = np.full(SHAPE, -1.0)  # f(K + 1): the call covers K up to end - 1
    expected[..., :-1] = np.cumsum(0.5 * (f[..., :-1] + f[..., 1:]), axis=2)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_the_program_shows_the_lowered_calls() -> None:
    text = str(integrate_averages.ir)
    assert (
        "tmp0 = averaged_integral__integral_args0(f) over {I: [0, end), J: [0, end), K: [0, end-1)}"
        in text
    )
    assert "tmp1 = integral(tmp0) over" in text
    assert "out = averaged_integral__call2(tmp1) over" in text
    assert "return (0.5:float64 * (f + f(K+1)))" in text
    program = integrate_averages.ir
    assert [call.callee for call in program.calls] == [
        "averaged_integral__integral_args0",
        "integral",
        "averaged_integral__call2",
    ]
    assert not any(isinstance(f.body, ir.ScanCall) for f in program.field_operators)
    assert [s.name for s in program.scan_operators] == ["integral"]


def test_lowering_is_deterministic() -> None:
    @sc.program
    def integrate_averages(f: F, out: F) -> None:
        averaged_integral(f, out=out)

    assert integrate_averages.fingerprint() == globals()["integrate_averages"].fingerprint()


# --- the result combined with other fields, and read shifted --------------------------------


@sc.field_operator
def weighted_tendency(f: F, g: F, h: F) -> F:
    s = integral(f * g)
    return s * h + g - s(K - 1)


@sc.program
def tendency(f: F, g: F, h: F, out: F) -> None:
    weighted_tendency(f, g, h, out=out)


def test_the_result_is_combined_with_fields_and_read_shifted() -> None:
    f, g, h = fields(3, 1)
    out = np.zeros(SHAPE)
    tendency(f, g, h, out)
    # read at K - 1 and K: the call covers K from 1, the scan runs from 0
    s = np.cumsum(f * g, axis=2)
    expected = np.zeros(SHAPE)
    expected[..., 1:] = s[..., 1:] * h[..., 1:] + g[..., 1:] - s[..., :-1]
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    (scan_call,) = [c for c in tendency.ir.calls if c.callee == "integral"]
    (k_domain,) = [d for d in scan_call.domain.dims if d.dim == K]
    assert (k_domain.starts, k_domain.stops) == ((ir.Bound(0, False),), (ir.Bound(0, True),))


@sc.field_operator
def difference_of_integrals(f: F) -> F:
    return integral(f)(K + 1) - integral(f)(K - 1)  # type: ignore[no-any-return]


@sc.program
def centred_difference(f: F, out: F) -> None:
    difference_of_integrals(f, out=out)


def test_one_scan_read_at_several_offsets_runs_once() -> None:
    (f,) = fields(1, 2)
    out = np.zeros(SHAPE)
    centred_difference(f, out)
    s = np.cumsum(f, axis=2)
    expected = np.zeros(SHAPE)
    expected[..., 1:-1] = s[..., 2:] - s[..., :-2]
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    assert [c.callee for c in centred_difference.ir.calls].count("integral") == 1


# --- tuple states, backward scans, scalars ------------------------------------------------


@sc.field_operator
def moments(f: F, g: F) -> tuple[F, F]:
    total, product = sum_and_product(f(K - 1), 1.0 + g)
    return total * g, product


@sc.program
def running_moments(f: F, g: F, a: F, b: F) -> None:
    moments(f, g, out=(a, b))


def test_a_tuple_state_scan_in_a_field_operator_returning_a_tuple() -> None:
    f, g = fields(2, 3)
    a, b = np.zeros(SHAPE), np.zeros(SHAPE)
    running_moments(f, g, a, b)
    expected_a, expected_b = np.zeros(SHAPE), np.zeros(SHAPE)
    expected_a[..., 1:] = np.cumsum(f[..., :-1], axis=2) * g[..., 1:]
    expected_b[..., 1:] = np.cumprod(1.0 + g[..., 1:], axis=2)
    np.testing.assert_allclose(a, expected_a, rtol=1e-12)
    np.testing.assert_allclose(b, expected_b, rtol=1e-12)


@sc.field_operator
def pressure(rho: F, g: sc.float64) -> F:
    return integral_down(0.5 * (rho + rho(K + 1)), g) + 100.0 * integral_down(rho, 2.0)  # type: ignore[no-any-return]


@sc.program
def hydrostatic(rho: F, p: F, g: sc.float64) -> None:
    pressure(rho, g, out=p)


def test_a_backward_scan_with_a_scalar_parameter_and_a_literal() -> None:
    (rho,) = fields(1, 4)
    p = np.zeros(SHAPE)
    hydrostatic(rho, p, 9.81)
    # the call covers K up to end - 1: both scans start at end - 2, going down
    half = 0.5 * (rho[..., :-1] + rho[..., 1:])
    expected = np.zeros(SHAPE)
    expected[..., :-1] = (
        np.cumsum((9.81 * half)[..., ::-1], axis=2)[..., ::-1]
        + 100.0 * np.cumsum((2.0 * rho[..., :-1])[..., ::-1], axis=2)[..., ::-1]
    )
    np.testing.assert_allclose(p, expected, rtol=1e-12)


# --- the domain of the call ------------------------------------------------------------


@sc.program
def integrate_from_level_two(f: F, out: F) -> None:
    averaged_integral(f, out=out, domain={K: (2, -1)})


def test_a_sub_range_of_k_starts_the_scan_at_the_domain_start() -> None:
    (f,) = fields(1, 5)
    out = np.full(SHAPE, -1.0)
    integrate_from_level_two(f, out)
    expected = np.full(SHAPE, -1.0)
    expected[..., 2:-1] = np.cumsum(0.5 * (f[..., 2:-1] + f[..., 3:]), axis=2)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@sc.program
def tendency_in_a_window(f: F, g: F, h: F, out: F, k0: sc.int64) -> None:
    weighted_tendency(f, g, h, out=out, domain={K: (k0, -1), I: (1, 3)})


def test_a_domain_given_by_a_parameter_shifts_the_scan_with_it() -> None:
    f, g, h = fields(3, 6)
    out = np.zeros(SHAPE)
    tendency_in_a_window(f, g, h, out, 3)
    # read at K - 1: the scan runs over [k0 - 1, end - 1)
    s = np.cumsum((f * g)[..., 2:-1], axis=2)
    expected = np.zeros(SHAPE)
    window = (slice(1, 3), slice(None), slice(3, -1))
    expected[window] = s[1:3, :, 1:] * h[window] + g[window] - s[1:3, :, :-1]
    np.testing.assert_allclose(out, expected, rtol=1e-12)


# --- scans in callees, without out=, and scans of scans ------------------------------------


@sc.field_operator
def outer(f: F, g: F) -> F:
    return averaged_integral(f * g)(K - 1) + g


@sc.program
def calls_a_callee(f: F, g: F, out: F) -> None:
    outer(f, g, out=out)


def test_a_scan_in_a_field_operator_called_by_another() -> None:
    f, g = fields(2, 7)
    out = np.zeros(SHAPE)
    calls_a_callee(f, g, out)
    fg = f * g
    # read at K - 1: the call covers K from 1, the scan runs over [0, end - 1)
    s = np.cumsum(0.5 * (fg[..., :-1] + fg[..., 1:]), axis=2)
    expected = np.zeros(SHAPE)
    expected[..., 1:] = s + g[..., 1:]
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    assert "averaged_integral" not in [f.name for f in calls_a_callee.ir.field_operators]


@sc.field_operator
def doubled(f: F) -> F:
    return 2.0 * f


@sc.program
def through_a_temporary(f: F, out: F) -> None:
    total = averaged_integral(f)
    doubled(total, out=out)


def test_without_out_the_result_is_a_temporary() -> None:
    (f,) = fields(1, 8)
    out = np.full(SHAPE, -1.0)
    through_a_temporary(f, out)
    expected = np.full(SHAPE, -1.0)
    expected[..., :-1] = 2.0 * np.cumsum(0.5 * (f[..., :-1] + f[..., 1:]), axis=2)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@sc.field_operator
def second_integral(f: F) -> F:
    return integral(integral(f)(K + 1) - f)  # type: ignore[no-any-return]


@sc.program
def double_integral(f: F, out: F) -> None:
    second_integral(f, out=out)


def test_a_scan_of_a_scan_runs_the_inner_one_first() -> None:
    (f,) = fields(1, 9)
    out = np.zeros(SHAPE)
    double_integral(f, out)
    # the outer scan covers [0, end - 1); the inner one, read at K + 1, starts at the
    # domain's first level all the same: [0, end)
    inner = np.cumsum(f, axis=2)[..., 1:]
    expected = np.zeros(SHAPE)
    expected[..., :-1] = np.cumsum(inner - f[..., :-1], axis=2)
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    assert [c.callee for c in double_integral.ir.calls] == [
        "integral",
        "second_integral__integral_args1",
        "integral",
        "second_integral__call3",
    ]


@sc.scan_operator(axis=K, init=0.0)
def column_sum(total, f: sc.Field[[K], sc.float64]):  # type: ignore[no-untyped-def]
    return total + f


@sc.field_operator
def with_a_profile(f: F, profile: sc.Field[[K], sc.float64]) -> F:
    return f * column_sum(profile * profile)


@sc.program
def scaled_by_a_profile(f: F, profile: sc.Field[[K], sc.float64], out: F) -> None:
    with_a_profile(f, profile, out=out)


def test_a_scan_over_fewer_dimensions_is_broadcast() -> None:
    (f,) = fields(1, 10)
    profile = np.random.default_rng(11).random(SHAPE[2])
    out = np.zeros(SHAPE)
    scaled_by_a_profile(f, profile, out)
    np.testing.assert_allclose(out, f * np.cumsum(profile**2), rtol=1e-12)


def test_a_name_taken_by_the_user_is_not_reused() -> None:
    @sc.field_operator
    def averaged_integral__integral_args1(f: F) -> F:
        return f + 1.0

    @sc.program
    def both(f: F, tmp: F, out: F) -> None:
        averaged_integral__integral_args1(f, out=tmp)
        averaged_integral(f, out=out)

    names = [call.callee for call in both.ir.calls]
    assert names[:2] == ["averaged_integral__integral_args1", "averaged_integral__integral_args1_"]
    (f,) = fields(1, 12)
    tmp, out = np.zeros(SHAPE), np.zeros(SHAPE)
    both(f, tmp, out)
    np.testing.assert_allclose(out[..., :-1], np.cumsum(0.5 * (f[..., :-1] + f[..., 1:]), axis=2))


# --- misuse ----------------------------------------------------------------------------


def test_a_shift_in_the_scan_body_says_to_shift_the_argument() -> None:
    with pytest.raises(
        sc.DefinitionError, match="shift the argument before calling the scan"
    ) as err:

        @sc.scan_operator(axis=K, init=0.0)
        def shifted(total, f: F):  # type: ignore[no-untyped-def]
            return total + f(K - 1)  # L:body_shift

    assert_at(err.value, "body_shift")
    assert "`shifted(f(K - 1))`" in str(err.value)


def test_a_wrong_argument_type_is_named_like_a_field_operator_call() -> None:
    with pytest.raises(sc.DefinitionError, match=r"argument 'f' of integral: expected Field\[\[I, J, K\], float64\], got Field\[\[I, J\], float64\]") as err:  # fmt: skip

        @sc.field_operator
        def flat(h: F_IJ) -> F:
            return integral(h)  # type: ignore[no-any-return]  # L:wrong_type

    assert_at(err.value, "wrong_type")


def test_a_wrong_argument_count_is_named_like_a_field_operator_call() -> None:
    with pytest.raises(sc.DefinitionError, match="call of scan operator integral: too many positional arguments") as err:  # fmt: skip

        @sc.field_operator
        def two(f: F) -> F:
            return integral(f, f)  # type: ignore[no-any-return]  # L:count

    assert_at(err.value, "count")


def test_out_inside_a_field_operator_is_refused() -> None:
    with pytest.raises(sc.DefinitionError, match="out=/domain= inside a field operator") as err:

        @sc.field_operator
        def writes(f: F) -> F:
            return integral(f, out=f)  # type: ignore[no-any-return]  # L:out

    assert_at(err.value, "out")


def test_a_scalar_expression_argument_is_refused() -> None:
    with pytest.raises(sc.DefinitionError, match="is a scalar expression") as err:

        @sc.field_operator
        def computed_weight(f: F, w: sc.float64) -> F:
            return integral_down(f, 2.0 * w)  # type: ignore[no-any-return]  # L:scalar_expr

    assert_at(err.value, "scalar_expr")


@sc.field_operator
def weighted(f: F, w: sc.float64) -> F:
    return integral_down(f, w)  # type: ignore[no-any-return]


@sc.field_operator
def weight_computed_by_the_caller(f: F, w: sc.float64) -> F:
    return weighted(f, 2.0 * w)  # type: ignore[no-any-return]


def test_a_scalar_expression_reaching_a_scan_through_a_callee_is_refused() -> None:
    with pytest.raises(sc.DefinitionError, match=r"argument 'weight' of scan operator integral_down.* is the scalar expression \(2.0:float64 \* w\)") as err:  # fmt: skip

        @sc.program
        def through_callee(f: F, out: F, w: sc.float64) -> None:
            weight_computed_by_the_caller(f, w, out=out)  # L:through_callee

    assert_at(err.value, "through_callee")


def test_a_scan_called_in_the_body_of_a_scan_is_refused() -> None:
    with pytest.raises(sc.DefinitionError, match="called inside scan operator nested") as err:

        @sc.scan_operator(axis=K, init=0.0)
        def nested(total, f: F):  # type: ignore[no-untyped-def]
            return total + integral(f)  # L:nested

    assert_at(err.value, "nested")


def test_writing_a_field_that_the_scan_reads_around_reads_it_from_before_the_call() -> None:
    """Was refused ("writes 'f', which it also reads at offsets"); the call now reads a
    snapshot of f (docs/adr/0042), as if it wrote another field."""

    @sc.program
    def in_place(f: F) -> None:
        weighted_tendency(f, f, f, out=f)

    (f,) = fields(1, seed=7)
    expected = f.copy()  # where the call does not write, f keeps its values
    tendency(f, f, f, expected)
    in_place(f)
    np.testing.assert_array_equal(f, expected)
    assert in_place.ir.calls[0].callee == "snapshot_of_I_J_K_float64"


def test_a_domain_that_reads_below_the_array_is_refused() -> None:
    with pytest.raises(sc.DefinitionError, match="domain of K starts at 0 but the call reads K-1") as err:  # fmt: skip

        @sc.program
        def from_zero(f: F, g: F, h: F, out: F) -> None:
            weighted_tendency(f, g, h, out=out, domain={K: (0, None)})  # L:from_zero

    assert_at(err.value, "from_zero")


@sc.field_operator
def fixed_series(f: F) -> F:
    return f + integral(sc.broadcast(1.0, (I, J, K)))(K - 1)


@sc.program
def reads_a_scan_of_no_field(f: F, out: F) -> None:
    fixed_series(f, out=out)


def test_a_scan_reading_no_field_still_stays_inside_the_arrays() -> None:
    (f,) = fields(1, 13)
    out = np.zeros(SHAPE)
    reads_a_scan_of_no_field(f, out)
    expected = np.zeros(SHAPE)
    expected[..., 1:] = f[..., 1:] + np.arange(1, SHAPE[2])
    np.testing.assert_allclose(out, expected, rtol=1e-12)


# --- temporaries of earlier calls feed a scan -----------------------------------------------


@sc.field_operator
def centred(f: F) -> F:
    return 0.5 * (f(K + 1) + f(K - 1))


@sc.field_operator
def copied(f: F) -> F:
    return f


@sc.program
def integrate_a_temporary(f: F, out: F) -> None:
    t = centred(f)  # over K: [1, end - 1)
    averaged_integral(t, out=out)


@sc.program
def integrate_the_top_levels(f: F, out: F) -> None:
    t = copied(f, domain={K: (-5, None)})
    averaged_integral(t, out=out)


def test_a_temporary_feeds_a_scan_where_it_was_written() -> None:
    (f,) = fields(1, 14)
    out = np.zeros(SHAPE)
    integrate_a_temporary(f, out)
    t = 0.5 * (f[..., 2:] + f[..., :-2])  # levels 1 .. end - 2
    expected = np.zeros(SHAPE)
    expected[..., 1:-2] = np.cumsum(0.5 * (t[..., :-1] + t[..., 1:]), axis=2)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_a_temporary_written_from_the_end_bounds_the_scan() -> None:
    (f,) = fields(1, 15)
    out = np.zeros(SHAPE)
    integrate_the_top_levels(f, out)
    expected = np.zeros(SHAPE)
    expected[..., -5:-1] = np.cumsum(0.5 * (f[..., -5:-1] + f[..., -4:]), axis=2)
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    assert "K: [max(0, end-5), end-1)" in str(integrate_the_top_levels.ir)
