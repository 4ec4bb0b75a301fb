"""Domain bounds counted from one field's own range (`sc.start_of`, `sc.end_of`; docs/adr/
0052): their meaning on the embedded executor against NumPy references, the IR and its
specialisation for fields over their own ranges, and every mistake at the user's line.
The compiled toolchains run them in tests/runtime/test_field_bounds_compiled.py."""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import ir
from stencilchain.program.own_ranges import specialise_ranges

from ._support import assert_error_at

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]
HERE = os.path.abspath(__file__)
assert_at = functools.partial(assert_error_at, path=HERE)
NI, NK = 4, 6


@sc.field_operator
def copy(f: F) -> F:
    return f


@sc.field_operator
def up(f: F) -> F:
    return f(K + 1)


@sc.program
def up_to_the_end_of_out(a: F, out: F) -> None:
    up(a, out=out, domain={K: (0, sc.end_of(out, K))})


@sc.program
def copy_to_the_end_of_out(a: F, out: F) -> None:
    copy(a, out=out, domain={K: (0, sc.end_of(out, K))})


@sc.program
def inside_out(a: F, out: F) -> None:
    copy(a, out=out, domain={K: (sc.start_of(out, K) + 1, sc.end_of(out, K) - 1)})


def rand(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape)).normal(size=shape)


def test_the_end_of_a_shorter_output_stops_the_domain() -> None:
    """gt4py's `out=out[:, :]` beside an input one level longer: every level of `out`,
    each reading the level above it."""
    a, out = rand(NI, NK + 1), np.zeros((NI, NK))
    up_to_the_end_of_out(a, out)
    np.testing.assert_array_equal(out, a[:, 1:])


def test_with_fields_of_one_size_the_bound_is_the_end() -> None:
    """The same program on fields of one size: the domain is the whole array, whose last
    level reads past the input: a DomainError before anything is written."""
    a, out = rand(NI, NK), np.full((NI, NK), -7.0)
    with pytest.raises(sc.DomainError, match=r"domain K: \[0, 6\) with reads from K-0 to K\+1"):
        up_to_the_end_of_out(a, out)
    assert (out == -7.0).all()


def test_a_longer_output_than_the_input_names_the_input() -> None:
    """Every bound is checked against every argument's reads before anything runs: the
    end of a longer `out` has `a` read past its own end."""
    a, out = rand(NI, NK), np.full((NI, NK + 1), -7.0)
    with pytest.raises(sc.DomainError, match=r"argument 'a' leaves its range \[0, 6\) along K"):
        copy_to_the_end_of_out(a, out)
    with pytest.raises(sc.DomainError, match=r"reads from K-0 to K\+1 leaves the array of size 7"):
        up_to_the_end_of_out(a, out)
    assert (out == -7.0).all()


def test_the_start_and_end_of_an_output_that_starts_after_zero() -> None:
    """`out` over [2, 10) of K (sc.as_field): the domain is [3, 9)."""
    a = rand(NI, 12)
    data = np.full((NI, 8), -7.0)
    inside_out(a, sc.as_field((I, K), data, start={K: 2}))
    want = np.full((NI, 8), -7.0)
    want[:, 1:7] = a[:, 3:9]
    np.testing.assert_array_equal(data, want)
    # the same output as a plain array over [0, 8): the domain is [1, 7)
    data = np.full((NI, 8), -7.0)
    inside_out(a, data)
    want = np.full((NI, 8), -7.0)
    want[:, 1:7] = a[:, 1:7]
    np.testing.assert_array_equal(data, want)


def test_the_ir_holds_the_field_and_a_specialisation_resolves_it() -> None:
    program = up_to_the_end_of_out.ir
    k = next(dd for dd in program.calls[0].domain.dims if dd.dim == K)
    assert k.stops == (ir.Bound(0, True, field="out"),)
    assert "K: [0, end(out))" in str(program)
    spec = specialise_ranges(program, {"out": ((0, 0), (0, 1))})
    k = next(dd for dd in spec.calls[0].domain.dims if dd.dim == K)
    assert k.stops == (ir.Bound(-1, True),)
    assert spec.fingerprint() != program.fingerprint()


def test_a_plain_end_reading_past_the_array_is_refused_at_definition() -> None:
    """Without `sc.end_of`, the same domain is refused at definition (its reads leave every
    array), so a bound from a field's end is a program of its own, with another
    fingerprint."""
    with pytest.raises(sc.DefinitionError, match="stops at end but the call reads K\\+1"):

        @sc.program
        def up_to_the_end(a: F, out: F) -> None:
            up(a, out=out, domain={K: (0, None)})


def test_a_later_call_infers_its_domain_from_a_field_bound() -> None:
    """`mid` is written up to the end of `out` (one level shorter than `a`); the next call
    reads `mid` at K + 1, so its inferred domain stops one level before that end."""

    @sc.program
    def twice(a: F, mid: F, out: F) -> None:
        up(a, out=mid, domain={K: (0, sc.end_of(out, K))})
        up(mid, out=out)

    a, mid, out = rand(NI, NK + 1), np.zeros((NI, NK + 1)), np.full((NI, NK), -7.0)
    twice(a, mid, out)
    want_mid = np.zeros((NI, NK + 1))
    want_mid[:, :NK] = a[:, 1:]
    np.testing.assert_array_equal(mid, want_mid)
    want = np.full((NI, NK), -7.0)
    want[:, : NK - 1] = want_mid[:, 1:NK]
    np.testing.assert_array_equal(out, want)


def test_mistakes_are_definition_errors_at_the_users_line() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def p(a: F, out: F, n: sc.int32) -> None:
            copy(a, out=out, domain={K: (0, sc.end_of(n, K))})  # L:scalar

    assert_at(info.value, "scalar", "sc.end_of(n, ...)", "a bound counts from the range of a field")
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def q(a: F, out: F) -> None:
            copy(a, out=out, domain={K: (0, sc.end_of(out, J))})  # L:dimension

    assert_at(info.value, "dimension", "sc.end_of(out, J)", "one of its dimensions (I, K)")
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def r(a: F, out: F, n: sc.int32) -> None:
            copy(a, out=out, domain={K: (0, sc.end_of(out, K) - n)})  # L:moved

    assert_at(info.value, "moved", "sc.end_of(out, K) -", "moves only by an int literal")
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def s(a: F, out: F) -> None:
            copy(a, out=out, domain={I: (0, sc.end_of(out, K))})  # L:other

    assert_at(info.value, "other", "the stop of the domain of I", "a bound along K")
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def t(a: F, out: F) -> None:
            tmp = copy(a)
            copy(tmp, out=out, domain={K: (0, sc.end_of(tmp, K))})  # L:temporary

    assert_at(info.value, "temporary", "is a temporary", "range of a field parameter")
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def u(a: F, out: F) -> None:
            copy(a, out=out, domain={K: (0, a)})  # L:field

    assert_at(info.value, "field", "sc.end_of(a, K)")
