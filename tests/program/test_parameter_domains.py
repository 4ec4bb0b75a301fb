"""Domain bounds given by integer scalar parameters: the IR, the printer, and every
mistake at definition, at the user's line."""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import ir

from ._support import assert_error_at

I, K = sc.Dimension("I"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]
HERE = os.path.abspath(__file__)


@sc.field_operator
def copy(f: F) -> F:
    return f


@sc.field_operator
def up(f: F) -> F:
    return f(K + 1)


assert_at = functools.partial(assert_error_at, path=HERE)


def test_a_parameter_bound_is_in_the_ir_the_fingerprint_and_the_printout() -> None:
    @sc.program
    def p(f: F, out: F, k0: sc.int32, k1: sc.int64) -> None:
        copy(f, out=out, domain={K: (k0, k1)})

    @sc.program
    def q(f: F, out: F, k0: sc.int32, k1: sc.int64) -> None:
        copy(f, out=out, domain={K: (k1, k0)})

    (kd,) = [dd for dd in p.ir.calls[0].domain.dims if dd.dim == K]
    assert kd.starts == (ir.Bound(0, False, param="k0"),)
    assert kd.stops == (ir.Bound(0, False, param="k1"),)
    assert '"param":"k0"' in p.ir.canonical
    assert p.fingerprint() != q.fingerprint()
    assert "K: [k0, k1)" in str(p.ir)
    assert kd.resolve(10, {"k0": -3, "k1": 10}) == (7, 10)


def test_a_literal_and_a_parameter_mix() -> None:
    @sc.program
    def p(f: F, out: F, k1: sc.int32) -> None:
        copy(f, out=out, domain={K: (1, k1)})

    f = np.arange(12.0).reshape(2, 6)
    out = np.zeros_like(f)
    p(f, out, np.int32(-2))
    want = np.zeros_like(f)
    want[:, 1:4] = f[:, 1:4]
    np.testing.assert_array_equal(out, want)


def test_math_of_int_literals_is_a_literal_bound() -> None:
    """gt4py's test_domain writes `minimum(1, 2)` in a bound: an int, as if written 1; a
    negative result counts from the end as a literal does."""

    @sc.program
    def p(f: F, out: F, k1: sc.int32) -> None:
        copy(f, out=out, domain={K: (sc.math.minimum(1, 2), k1), I: (0, sc.math.maximum(-4, -1))})

    assert "K: [1, k1)" in str(p.ir)
    f = np.arange(12.0).reshape(2, 6)
    out = np.zeros_like(f)
    p(f, out, np.int32(-2))
    want = np.zeros_like(f)
    want[:1, 1:4] = f[:1, 1:4]
    np.testing.assert_array_equal(out, want)


def test_a_bound_parameter_that_is_not_an_integer_is_refused() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def p(f: F, out: F, k0: sc.float64) -> None:
            copy(f, out=out, domain={K: (k0, None)})  # L:float

    assert_at(info.value, "float", "parameter 'k0' of type float64", "int32 or int64")
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def q(f: F, out: F, k1: sc.bool_) -> None:
            copy(f, out=out, domain={K: (0, k1)})  # L:bool

    assert_at(info.value, "bool", "parameter 'k1' of type bool", "int32 or int64")
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def r(f: F, out: F) -> None:
            copy(f, out=out, domain={K: (1.0, None)})  # L:literal

    assert_at(info.value, "literal", "start of the domain of K", "got 1.0")


def test_a_field_as_a_bound_is_refused() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def p(f: F, out: F) -> None:
            copy(f, out=out, domain={K: (0, f)})  # L:field

    assert_at(info.value, "field", "stop of the domain of K", "'f'", "a field")


def test_a_parameter_of_another_program_is_refused() -> None:
    stolen = []

    @sc.program
    def first(f: F, out: F, k0: sc.int32) -> None:
        stolen.append(k0)
        copy(f, out=out)

    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def second(f: F, out: F) -> None:
            copy(f, out=out, domain={K: (stolen[0], None)})  # L:other

    assert_at(info.value, "other", "another program")


def test_a_later_inferred_domain_reading_a_field_written_under_a_parameter_bound_is_refused() -> (
    None
):
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def p(f: F, out: F, k0: sc.int32) -> None:
            t = copy(f, domain={K: (k0, None)})
            copy(t, out=out)  # L:inferred

    assert_at(info.value, "inferred", "parameter 'k0'", "explicit domain of K")


def test_reading_a_temporary_with_a_parameter_bound_it_was_not_written_under_is_refused() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def p(f: F, out: F, k1: sc.int32) -> None:
            t = up(f)  # written on [0, end-1)
            copy(t, out=out, domain={K: (0, k1)})  # L:temporary

    assert_at(
        info.value, "temporary", "temporary 'tmp0' up to k1", "below end-1", "given by a parameter"
    )


def test_a_temporary_written_over_the_whole_array_is_read_under_any_parameter_bound() -> None:
    @sc.program
    def p(f: F, out: F, k0: sc.int32, k1: sc.int32) -> None:
        t = copy(f)  # written on [0, end): every read that passes the call's check is inside
        up(t, out=out, domain={K: (k0, k1)})

    f = np.arange(12.0).reshape(2, 6)
    out = np.zeros_like(f)
    p(f, out, np.int32(-3), np.int32(5))
    want = np.zeros_like(f)
    want[:, 3:5] = f[:, 4:6]
    np.testing.assert_array_equal(out, want)
    with pytest.raises(sc.DomainError, match=r"domain K: \[3, 6\)"):
        p(f, out, np.int32(3), np.int32(6))


def test_reading_a_temporary_at_an_offset_past_its_parameter_bounds_is_refused() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def p(f: F, out: F, k0: sc.int32, k1: sc.int32) -> None:
            t = copy(f, domain={K: (k0, k1)})
            up(t, out=out, domain={K: (k0, k1)})  # L:offset

    assert_at(info.value, "offset", "up to k1+1", "below k1")


def test_a_temporary_read_under_the_same_parameter_bounds_is_allowed() -> None:
    @sc.program
    def p(f: F, out: F, k0: sc.int32, k1: sc.int32) -> None:
        t = copy(f, domain={K: (k0, k1)})
        copy(t, out=out, domain={K: (k0, k1)})

    f = np.arange(12.0).reshape(2, 6)
    out = np.zeros_like(f)
    p(f, out, np.int32(-4), np.int32(5))
    want = np.zeros_like(f)
    want[:, 2:5] = f[:, 2:5]
    np.testing.assert_array_equal(out, want)
