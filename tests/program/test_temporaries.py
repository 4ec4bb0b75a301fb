"""Program-local temporaries: a field-operator call without `out=` makes fields that the
backend allocates and later calls read.

Checked here on the embedded executor and the IR; the compiled toolchains run the
`temporaries` case of tests/runtime/test_gtfn_end_to_end.py, and the DaCe external
workspace is in tests/runtime/test_workspace.py. Definition errors carry the line of the
offending call (`# L:<name>` markers, as in test_errors.py).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import ir
from stencilchain.program.transforms import unread_temporaries

from ._support import marked_line

I = sc.Dimension("I")
J = sc.Dimension("J")
K = sc.Dimension("K")

F64 = sc.Field[[I, J], sc.float64]
F32 = sc.Field[[I, J], sc.float32]
F64_K = sc.Field[[K], sc.float64]

HERE = os.path.abspath(__file__)


def line_of(marker: str) -> int:
    """The line of this file that ends with `# L:<marker>`."""
    return marked_line(HERE, marker)


def assert_error(err: sc.DefinitionError, marker: str, *names: str) -> None:
    """`err` points at the marked line and names every one of `names`."""
    assert err.location is not None
    assert os.path.abspath(err.location[0]) == HERE
    assert err.location[1] == line_of(marker), (err.location, str(err))
    for name in names:
        assert name in str(err), f"{name!r} not in {str(err)!r}"


@sc.field_operator
def lap(f: F64) -> F64:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


@sc.field_operator
def grad(f: F64):  # type: ignore[no-untyped-def]
    return f(I + 1) - f, f(J + 1) - f


@sc.field_operator
def div(gx: F64, gy: F64) -> F64:
    return gx - gx(I - 1) + gy - gy(J - 1)


@sc.field_operator
def half(f: F64) -> F32:
    return sc.astype(f * 0.5, sc.float32)


@sc.field_operator
def widen(h: F32) -> F64:
    return sc.astype(h(I - 1), sc.float64)


@sc.field_operator
def copy(f: F64) -> F64:
    return f


@sc.field_operator
def ramp(k: F64_K) -> F64_K:
    return 2.0 * k


def interior_lap(a: np.ndarray) -> np.ndarray:
    return -4.0 * a[1:-1, 1:-1] + a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2]


# --- meaning ------------------------------------------------------------------------------------


def test_a_temporary_gives_what_a_parameter_gives() -> None:
    @sc.program
    def with_temporary(f: F64, out: F64) -> None:
        t = lap(f)
        lap(t, out=out)

    @sc.program
    def with_parameter(f: F64, tmp: F64, out: F64) -> None:
        lap(f, out=tmp)
        lap(tmp, out=out)

    f = np.random.default_rng(0).random((12, 9))
    a, b = np.full_like(f, 7.0), np.full_like(f, 7.0)
    with_temporary(f, a)
    with_parameter(f, np.zeros_like(f), b)
    np.testing.assert_array_equal(a, b)
    expected = np.full_like(f, 7.0)
    expected[2:-2, 2:-2] = interior_lap(interior_lap(f))
    np.testing.assert_allclose(a, expected, rtol=1e-13)
    # the domain of the second call is inferred from where the temporary holds values
    second = with_temporary.ir.calls[1].domain.dims
    assert [repr(d) for d in second] == ["I: [2, end-2)", "J: [2, end-2)"]


def test_tuple_temporaries_and_dtypes() -> None:
    @sc.program
    def chained(f: F64, d: F64, w: F64) -> None:
        gx, gy = grad(f)
        div(gx, gy, out=d)
        h = half(f)
        widen(h, out=w)

    program = chained.ir
    assert [(t.name, repr(t.type)) for t in program.temporaries] == [
        ("tmp0", "Field[[I, J], float64]"),
        ("tmp1", "Field[[I, J], float64]"),
        ("tmp2", "Field[[I, J], float32]"),
    ]
    assert program.calls[0].outs == ("tmp0", "tmp1")
    assert program.is_temporary("tmp2") and not program.is_temporary("f")
    assert program.field_type("tmp2").dtype is sc.float32
    f = np.random.default_rng(1).random((7, 8))
    d, w = np.zeros_like(f), np.zeros_like(f)
    chained(f, d, w)
    expected_d = np.zeros_like(f)
    expected_d[1:-1, 1:-1] = interior_lap(f)
    np.testing.assert_allclose(d, expected_d, atol=1e-13)
    expected_w = np.zeros_like(f)
    expected_w[1:, :] = (f[:-1, :] * 0.5).astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(w, expected_w)


def test_a_temporary_over_fewer_dimensions() -> None:
    @sc.program
    def columns(f: F64, k: F64_K, out_k: F64_K, out: F64) -> None:
        r = ramp(k)
        ramp(r, out=out_k)
        copy(f, out=out)

    k = np.arange(5.0)
    out_k = np.zeros(5)
    columns(np.ones((2, 3)), k, out_k, np.zeros((2, 3)))
    np.testing.assert_array_equal(out_k, 4.0 * k)


def test_temporary_names_avoid_the_parameters() -> None:
    @sc.program
    def taken(tmp0: F64, tmp1: F64) -> None:
        t = lap(tmp0)
        lap(t, out=tmp1)

    assert [t.name for t in taken.ir.temporaries] == ["tmp0_"]
    assert "temporaries tmp0_: Field[[I, J], float64]" in str(taken.ir)


def test_temporaries_enter_the_fingerprint() -> None:
    @sc.program
    def a(f: F64, out: F64) -> None:
        t = lap(f)
        lap(t, out=out)

    @sc.program
    def b(f: F64, out: F64) -> None:
        t = lap(f)
        copy(t, out=out)

    assert a.ir.canonical != b.ir.canonical
    assert "temporaries" in a.ir.canonical


def test_unread_tuple_elements_are_found() -> None:
    @sc.program
    def one_of_two(f: F64, out: F64) -> None:
        gx, _gy = grad(f)
        copy(gx, out=out)

    assert unread_temporaries(one_of_two.ir) == frozenset({"tmp1"})


def test_an_explicit_domain_inside_what_the_temporary_holds() -> None:
    @sc.program
    def narrowed(f: F64, out: F64) -> None:
        t = copy(f, domain={I: (2, -2)})
        lap(t, out=out, domain={I: (3, -3), J: (1, -1)})

    f = np.random.default_rng(2).random((10, 6))
    out = np.zeros_like(f)
    narrowed(f, out)
    expected = np.zeros_like(f)
    expected[3:-3, 1:-1] = interior_lap(f)[2:-2, :]
    np.testing.assert_allclose(out, expected, atol=1e-13)


# --- mistakes -------------------------------------------------------------------------------------


def test_a_temporary_no_call_reads() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def unused(f: F64, out: F64) -> None:
            copy(f, out=out)
            lap(f)  # L:unused

    assert_error(info.value, "unused", "call of lap in program unused", "temporary 'tmp0'", "out=")


def test_a_temporary_is_written_once() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def twice(f: F64, out: F64) -> None:
            t = lap(f)
            copy(f, out=t)  # L:twice
            copy(t, out=out)

    assert_error(info.value, "twice", "temporary 'tmp0'", "written once")


def test_a_temporary_in_an_expression() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def arithmetic(f: F64, out: F64) -> None:
            t = lap(f)
            copy(t * 2.0, out=out)  # L:arith

    assert_error(info.value, "arith", "temporary 'tmp0'", "@field_operator")


def test_explicit_domain_reads_outside_the_temporary() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def outside(f: F64, out: F64) -> None:
            t = copy(f, domain={I: (2, -2)})
            lap(t, out=out, domain={I: (2, -3)})  # L:outside

    assert_error(
        info.value, "outside", "domain of I", "temporary 'tmp0'", "from 1", "from 2 on", "narrow"
    )


def test_explicit_domain_beyond_the_temporary_end() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def beyond(f: F64, out: F64) -> None:
            t = copy(f, domain={I: (0, -3)})
            lap(t, out=out, domain={I: (1, -1)})  # L:beyond

    assert_error(info.value, "beyond", "temporary 'tmp0'", "up to end", "below end-3")


def test_explicit_domain_counted_from_the_other_end() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def mixed(f: F64, out: F64) -> None:
            t = lap(f)
            copy(t, out=out, domain={I: (1, 5)})  # L:mixed

    assert_error(info.value, "mixed", "temporary 'tmp0'", "for every array size")


def test_embedded_temporaries_are_fresh_each_call() -> None:
    """Nothing of one call's temporaries reaches the next (a read outside what a
    temporary holds is a definition error, so no call can see old values)."""

    @sc.program
    def twice(f: F64, out: F64) -> None:
        t = lap(f)
        lap(t, out=out)

    rng = np.random.default_rng(3)
    f1, f2 = rng.random((8, 8)), rng.random((8, 8))
    o1, o2 = np.zeros((8, 8)), np.zeros((8, 8))
    twice(f1, o1)
    twice(f2, o2)
    expected = np.zeros((8, 8))
    expected[2:-2, 2:-2] = interior_lap(interior_lap(f2))
    np.testing.assert_allclose(o2, expected, atol=1e-12)
    assert isinstance(twice.ir.temporaries[0], ir.Param)
