"""`sc.concat_where(cond, a, b)` on the embedded executor, against NumPy references written
here: conditions on one dimension, branches that read where only they apply, the domain
inference that accounts for it, the call-time check of such reads, and every misuse at the
user's line."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import ir

from ._support import assert_error_at

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]
FK = sc.Field[[K], sc.float64]
FI = sc.Field[[I], sc.float64]
G = sc.Field[[I, J], sc.float64]
HERE = os.path.abspath(__file__)


assert_at = functools.partial(assert_error_at, path=HERE)


def arrays(shape: tuple[int, ...], count: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.random(shape) for _ in range(count)]


# --- vertical advection: one-sided at the top and bottom, centred in between -------------------


@sc.field_operator
def advection(f: F, w: F) -> F:
    top = w * (f(K + 1) - f)
    bottom = w * (f - f(K - 1))
    interior = 0.5 * w * (f(K + 1) - f(K - 1))
    return sc.concat_where(K == 0, top, sc.concat_where(K == sc.size(K) - 1, bottom, interior))


@sc.program
def advect(f: F, w: F, out: F) -> None:
    advection(f, w, out=out)


def advection_reference(f: np.ndarray, w: np.ndarray) -> np.ndarray:
    out = np.empty_like(f)
    out[:, 1:-1] = 0.5 * w[:, 1:-1] * (f[:, 2:] - f[:, :-2])
    out[:, 0] = w[:, 0] * (f[:, 1] - f[:, 0])
    out[:, -1] = w[:, -1] * (f[:, -1] - f[:, -2])
    return out


def test_advection_covers_every_level_and_matches_numpy() -> None:
    (dk,) = [dd for dd in advect.ir.calls[0].domain.dims if dd.dim == K]
    assert dk.starts == (ir.Bound(0, False),) and dk.stops == (ir.Bound(0, True),)
    assert dk.halo == (0, 0) and dk.windows
    f, w = arrays((4, 7), 2)
    out = np.full_like(f, np.nan)
    advect(f, w, out)
    np.testing.assert_allclose(out, advection_reference(f, w), rtol=0, atol=1e-15)


def test_advection_on_two_levels_and_a_domain_error_on_one() -> None:
    f, w = arrays((3, 2), 2)
    out = np.empty_like(f)
    advect(f, w, out)
    np.testing.assert_allclose(out, advection_reference(f, w), rtol=0, atol=1e-15)
    one = np.ones((3, 1))
    with pytest.raises(sc.DomainError, match=r"domain K: \[0, 1\).*concat_where branch.*size 1"):
        advect(one, one, np.zeros((3, 1)))


def test_the_printout_shows_the_condition_and_the_windows() -> None:
    text = str(advect.ir)
    assert "concat_where(K in [0, 1), " in text
    assert "concat_where(K in [end-1, end), " in text
    assert "K: [0, end) reading f at K+0..K+1 where K+0 in [0, 1)" in text
    # the interior's reads: where neither the outer nor the inner condition holds
    assert "reading f at K-1..K+1 where K+0 in [1, end-1)" in text


# --- conditions ----------------------------------------------------------------------------

CONDITIONS = {
    "K == 0": (lambda: K == 0, lambda k, n: k == 0),
    "K != 2": (lambda: K != 2, lambda k, n: k != 2),
    "K < 2": (lambda: K < 2, lambda k, n: k < 2),
    "K <= 2": (lambda: K <= 2, lambda k, n: k <= 2),
    "K > 2": (lambda: K > 2, lambda k, n: k > 2),
    "K >= size - 2": (lambda: K >= sc.size(K) - 2, lambda k, n: k >= n - 2),
    "K == size - 1": (lambda: K == sc.size(K) - 1, lambda k, n: k == n - 1),
    "K < size": (lambda: K < sc.size(K), lambda k, n: k < n),
    "top or bottom": (
        lambda: (K == 0) | (K == sc.size(K) - 1),
        lambda k, n: (k == 0) | (k == n - 1),
    ),
    "between": (lambda: (K >= 1) & (K < sc.size(K) - 2), lambda k, n: (k >= 1) & (k < n - 2)),
    "not between": (
        lambda: ~((K >= 1) & (K < sc.size(K) - 2)),
        lambda k, n: ~((k >= 1) & (k < n - 2)),
    ),
    "not top or bottom": (
        lambda: ~((K == 0) | (K == sc.size(K) - 1)),
        lambda k, n: ~((k == 0) | (k == n - 1)),
    ),
    "empty": (lambda: (K < 1) & (K > 3), lambda k, n: k < -1),
}


@pytest.mark.parametrize("name", CONDITIONS)
@pytest.mark.parametrize("levels", [1, 2, 6])
def test_conditions_select_like_numpy(name: str, levels: int) -> None:
    condition, reference = CONDITIONS[name]

    @sc.field_operator
    def pick(a: F, b: F) -> F:
        return sc.concat_where(condition(), a, b * 2.0)

    @sc.program
    def p(a: F, b: F, out: F) -> None:
        pick(a, b, out=out)

    a, b = arrays((3, levels), 2)
    out = np.empty_like(a)
    p(a, b, out)
    k = np.arange(levels)[None, :]
    np.testing.assert_array_equal(out, np.where(reference(k, levels), a, 2.0 * b))


def test_literal_branches_make_a_field_over_the_condition_dimension() -> None:
    @sc.field_operator
    def mask(w: FK) -> FK:
        return w * sc.concat_where(K >= sc.size(K) - 2, 1.0, 0.0)

    @sc.program
    def p(w: FK, out: FK) -> None:
        mask(w, out=out)

    out = np.empty(5)
    p(np.full(5, 3.0), out)
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.0, 3.0, 3.0])


# --- branches, calls, shifts, nesting ------------------------------------------------------


@sc.field_operator
def upward(f: F) -> F:
    return f(K + 1) - f


@sc.field_operator
def edges(f: F) -> F:
    # a call inside a branch, a concat_where that is shifted, one nested on another dimension
    below = sc.concat_where(K == 0, f, f(K - 1))
    inner = sc.concat_where(I == 0, f(I + 1), f(I - 1))
    return sc.concat_where(K == sc.size(K) - 1, below(K - 1), upward(f) + below + inner(K + 0))


@sc.program
def edges_program(f: F, out: F) -> None:
    edges(f, out=out)


def edges_reference(f: np.ndarray) -> np.ndarray:
    n = f.shape[1]
    below = np.concatenate([f[:, :1], f[:, :-1]], axis=1)  # below[k] = f[k-1], f[0] at 0
    inner = np.concatenate([f[1:2], f[:-1]], axis=0)  # f(I+1) at I == 0, else f(I-1)
    out = np.empty_like(f)
    out[:, : n - 1] = f[:, 1:] - f[:, : n - 1] + below[:, : n - 1] + inner[:, : n - 1]
    out[:, n - 1] = below[:, n - 2]
    return out


def test_calls_shifts_and_nesting_match_numpy() -> None:
    dims = {dd.dim: dd for dd in edges_program.ir.calls[0].domain.dims}
    assert dims[K].starts == (ir.Bound(0, False),) and dims[K].stops == (ir.Bound(0, True),)
    assert dims[I].starts == (ir.Bound(0, False),) and dims[I].stops == (ir.Bound(0, True),)
    (f,) = arrays((4, 6), 1)
    out = np.full_like(f, np.nan)
    edges_program(f, out)
    np.testing.assert_allclose(out, edges_reference(f), rtol=0, atol=1e-15)


def test_reads_that_leave_the_array_in_a_branch_narrow_an_inferred_domain() -> None:
    @sc.field_operator
    def wrong_side(f: F) -> F:
        return sc.concat_where(K == 0, f(K - 1), f)  # reads below the first level at K == 0

    @sc.program
    def inferred(f: F, out: F) -> None:
        wrong_side(f, out=out)

    @sc.program
    def explicit(f: F, out: F) -> None:
        wrong_side(f, out=out, domain={K: (0, None)})

    (dk,) = [dd for dd in inferred.ir.calls[0].domain.dims if dd.dim == K]
    assert dk.starts == (ir.Bound(1, False),)
    (f,) = arrays((2, 4), 1)
    out = np.zeros_like(f)
    inferred(f, out)
    np.testing.assert_array_equal(out[:, 1:], f[:, 1:])
    np.testing.assert_array_equal(out[:, 0], 0.0)
    with pytest.raises(sc.DomainError, match=r"reads from K-1 to K-1 in a concat_where branch"):
        explicit(f, out)


def test_a_branch_reading_a_temporary_counts_as_reading_it_everywhere() -> None:
    @sc.field_operator
    def copy(f: F) -> F:
        return f

    @sc.program
    def p(f: F, out: F) -> None:
        tmp = copy(f)
        advection(tmp, f, out=out)

    (dk,) = [dd for dd in p.ir.calls[1].domain.dims if dd.dim == K]
    assert dk.starts == (ir.Bound(1, False),) and dk.stops == (ir.Bound(-1, True),)
    f, _ = arrays((2, 5), 2)
    out = np.zeros_like(f)
    p(f, out)
    np.testing.assert_allclose(out[:, 1:-1], advection_reference(f, f)[:, 1:-1], atol=1e-15)


# --- dimensions stay values ----------------------------------------------------------------


def test_dimensions_compare_and_hash_as_values() -> None:
    assert K == sc.Dimension("K") and K != I
    assert (K != sc.Dimension("K")) is False
    assert {K: 1}[sc.Dimension("K")] == 1
    assert K in (I, K) and K not in (I, J)
    assert (K == None) is False  # noqa: E711
    assert K != "K"


# --- misuses ------------------------------------------------------------------------------


def test_if_on_a_condition_is_refused() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def f(a: F) -> F:
            if K == 0:  # L:if
                return a
            return -a

    assert_at(info.value, "if", "K == 0", "sc.concat_where(K == 0, a, b)")


@sc.field_operator
def across_dimensions(a: F, n: sc.int64) -> tuple[F, F, F]:
    """Conditions along two dimensions joined (icon4py's `((K > 0) & (K < nrdmax)) & (Cell
    >= start)`): one concat_where per dimension, nested."""
    both = sc.concat_where(((K > 0) & (K < n)) & (I >= 1), 2.0 * a, -a)
    either = sc.concat_where((K == 0) | (I == 0), 2.0 * a, -a)
    negated = sc.concat_where(~((K == 0) | (I == 0)), 2.0 * a, -a)
    return both, either, negated


@sc.program
def joined_conditions(a: F, n: sc.int64, both: F, either: F, negated: F) -> None:
    across_dimensions(a, n, out=(both, either, negated))


def joined_reference(a: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    i, k = np.indices(a.shape)
    both = np.where((k > 0) & (k < n) & (i >= 1), 2.0 * a, -a)
    either = np.where((k == 0) | (i == 0), 2.0 * a, -a)
    return both, either, np.where(~((k == 0) | (i == 0)), 2.0 * a, -a)


def test_conditions_along_two_dimensions_nest() -> None:
    a = np.random.default_rng(3).random((4, 5))
    outs = [np.zeros_like(a) for _ in range(3)]
    joined_conditions(a, 3, *outs)
    for got, want in zip(outs, joined_reference(a, 3)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("make", "words", "marker"),
    [
        (lambda: K == 1.5, ("K == 1.5", "Python int", "float"), "float"),  # L:float
        (lambda: K < 2.0, ("write the int: K < 2",), "integral"),  # L:integral
        (lambda: K == sc.size(I) - 1, ("its own size, sc.size(K)",), "other"),  # L:other
        (lambda: K == sc.size(K) - 1.0, ("plus or minus a Python int",), "offset"),  # L:offset
        (lambda: K >= True, ("bool",), "bool"),  # L:bool
        (lambda: sc.size("K"), ("sc.size takes a sc.Dimension",), "string"),  # L:string
    ],
    ids=["float", "integral float", "other size", "float offset", "bool", "size of a string"],
)
def test_bad_comparisons_are_refused(make: object, words: tuple[str, ...], marker: str) -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def f(a: F) -> F:
            return sc.concat_where(make(), a, -a)  # type: ignore[operator]

    assert_at(info.value, marker, *words)


def test_a_value_condition_is_refused() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def f(a: F) -> F:
            return sc.concat_where(a > 0.0, a, -a)  # L:value

    assert_at(info.value, "value", "compare a dimension with an index", "sc.where")


def test_a_dimension_condition_in_where_is_refused() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def f(a: F) -> F:
            return sc.where(K == 0, a, -a)  # L:where

    assert_at(info.value, "where", "sc.concat_where(K == 0, a, b)")


def test_a_condition_mixed_with_values_is_refused() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def f(a: F) -> F:
            return sc.concat_where((K == 0) & (a > 0.0), a, -a)  # L:mixed

    assert_at(info.value, "mixed", "combines only with another such condition")


def test_branches_of_other_dtypes_or_dimensions_are_refused() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def f(a: F) -> F:
            return sc.concat_where(K == 0, a, sc.astype(a, sc.float32))  # L:dtype

    assert_at(info.value, "dtype", "mismatched dtypes")
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def g(a: G, b: FI) -> G:
            return sc.concat_where(K == 0, a, a)  # L:dims

    assert_at(info.value, "dims", "mismatched dimensions", "sc.broadcast")


def test_concat_where_in_a_scan_is_refused() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.scan_operator(axis=K, forward=True, init=0.0)
        def s(state, a: F):  # type: ignore[no-untyped-def]
            return sc.concat_where(K == 0, a, state + a)  # L:scan

    assert_at(info.value, "scan", "inside scan operator s")


def test_numpy_integers_and_reflected_comparisons_are_conditions() -> None:
    @sc.field_operator
    def pick(a: F) -> F:
        first = sc.concat_where(np.int64(0) == K, a, 0.0)
        last = sc.concat_where(sc.size(K) - 1 <= K, a, 0.0)
        return first + last + sc.concat_where(1 > K, 0.0, a)

    @sc.program
    def p(a: F, out: F) -> None:
        pick(a, out=out)

    (a,) = arrays((2, 4), 1)
    out = np.empty_like(a)
    p(a, out)
    np.testing.assert_array_equal(out, a * [[1.0, 1.0, 1.0, 2.0]])


def test_fingerprints_tell_conditions_apart_and_agree_across_processes() -> None:
    def program_with(condition: object) -> sc.Program:
        @sc.field_operator
        def pick(a: F) -> F:
            return sc.concat_where(condition, a(K + 1), a)

        @sc.program
        def p(a: F, out: F) -> None:
            pick(a, out=out)

        return p

    prints = {
        program_with(c).fingerprint()
        for c in (K == 0, K == 1, K == sc.size(K) - 2, K <= 0, (K == 0) | (K == 3))
    }
    assert len(prints) == 5
    code = (
        "from stencilchain.examples import vertical_advection as v; print(v.PROGRAM.fingerprint())"
    )
    seen = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        seen.add(result.stdout.strip())
    from stencilchain.examples import vertical_advection

    assert seen == {vertical_advection.PROGRAM.fingerprint()}
