"""`sc.concat_where` on every CPU toolchain, against the embedded executor: boundary levels
with one-sided reads, conditions from both ends, calls, shifts and nesting inside branches,
C / Fortran / sliced arrays, an explicit sub-range, and the call-time check of reads in a
branch (the same DomainError everywhere)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stencilchain as sc

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F = sc.Field[[I, J, K], sc.float64]

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]
SHAPE = (4, 3, 7)


def runner(fixture: str, request: pytest.FixtureRequest) -> Callable[[sc.Program], Any]:
    toolchain = request.getfixturevalue(fixture)
    return lambda prog: prog.with_backend(toolchain)


def layout(array: np.ndarray, kind: str) -> np.ndarray:
    """`array`'s values in C order, Fortran order, or as a non-contiguous slice."""
    if kind == "C":
        return np.ascontiguousarray(array)
    if kind == "F":
        return np.asfortranarray(array)
    big = np.zeros(tuple(2 * n + 1 for n in array.shape), dtype=array.dtype)
    view = big[1::2, 1::2, 1::2]
    view[...] = array
    return view


@sc.field_operator
def upward(f: F) -> F:
    return f(K + 1) - f


@sc.field_operator
def tendency(f: F, w: F) -> F:
    """Upwind vertical advection, one-sided at the top and bottom, with a level weight."""
    weight = 1.0 + 0.1 * sc.astype(sc.index(K), sc.float64)
    down = f - f(K - 1)
    inner = sc.where(w > 0.0, w * down, w * upward(f))
    interior = sc.concat_where(K == sc.size(K) - 1, w * down, inner)
    return weight * sc.concat_where(K == 0, w * upward(f), interior)


@sc.field_operator
def mixed(f: F, w: F) -> F:
    """Conditions from both ends, a shifted concat_where, one nested on another dimension."""
    below = sc.concat_where(K == 0, f, f(K - 1))
    side = sc.concat_where(I == sc.size(I) - 1, f(I - 1), f(I + 1))
    edge = sc.concat_where((K < 2) | (K >= sc.size(K) - 2), side, below(K - 1) * w(K + 1))
    return sc.concat_where(K != 3, edge, -f) + sc.concat_where(J > 0, 1.0, 2.0)


@sc.program
def both(f: F, w: F, out: F, out2: F) -> None:
    tendency(f, w, out=out)
    mixed(f, w, out=out2)


@sc.program
def sub_range(f: F, w: F, out: F) -> None:
    tendency(f, w, out=out, domain={K: (1, None), I: (1, -1)})


@sc.field_operator
def last_level(f: F) -> F:
    return sc.concat_where(K >= sc.size(K) - 1, f(K - 1), f)


@sc.program
def from_the_end(f: F, out: F) -> None:
    """No size in the domain along K: the condition alone needs it."""
    last_level(f, out=out, domain={K: (1, 5)})


def inputs(kind: str, shape: tuple[int, ...] = SHAPE, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    f, w = rng.random(shape), rng.random(shape) - 0.5
    return [layout(a, kind) for a in (f, w, np.full(shape, np.nan), np.full(shape, np.nan))]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["C", "F", "slice"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_results_equal_the_embedded_executor(
    fixture: str, kind: str, request: pytest.FixtureRequest
) -> None:
    run = runner(fixture, request)
    for shape in (SHAPE, (3, 2, 2)):
        expected = inputs(kind, shape)
        got = inputs(kind, shape)
        both(*expected)
        run(both)(*got)
        np.testing.assert_allclose(got[2], expected[2], rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(got[3], expected[3], rtol=1e-14, atol=1e-14)
        assert not np.isnan(expected[2]).any() and not np.isnan(expected[3]).any()


@pytest.mark.slow
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_an_explicit_sub_range_and_a_domain_error(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    run = runner(fixture, request)
    f, w, out, _ = inputs("C")
    expected = out.copy()
    sub_range(f, w, expected)
    run(sub_range)(f, w, out)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
    np.testing.assert_allclose(out, expected, rtol=1e-14, atol=1e-14)
    g, last, last_expected = f[..., :5].copy(), out[..., :5].copy(), out[..., :5].copy()
    from_the_end(g, last_expected)
    run(from_the_end)(g, last)
    np.testing.assert_array_equal(last, last_expected)
    one = inputs("C", (3, 2, 1))
    with pytest.raises(sc.DomainError) as embedded_error:
        both(*one)
    with pytest.raises(sc.DomainError) as compiled_error:
        run(both)(*one)
    assert str(compiled_error.value) == str(embedded_error.value)
    assert "concat_where branch" in str(compiled_error.value)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
@pytest.mark.parametrize("order", ["C", "F"])
def test_conditions_along_two_dimensions(
    fixture: str, order: str, request: pytest.FixtureRequest
) -> None:
    """`((K > 0) & (K < n)) & (I >= 1)`, `|` and `~` of conditions along two dimensions
    (one concat_where per dimension, nested), against tests/program/test_concat_where.py's
    NumPy reference and the embedded executor."""
    from tests.program import test_concat_where as m

    a = np.array(np.random.default_rng(4).random((4, 5)), order=order)
    expected = [np.zeros_like(a) for _ in range(3)]
    m.joined_conditions(a, 3, *expected)
    outs = [np.zeros_like(a) for _ in range(3)]
    runner(fixture, request)(m.joined_conditions)(a, 3, *outs)
    for got, want, reference in zip(outs, expected, m.joined_reference(a, 3)):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, reference)
