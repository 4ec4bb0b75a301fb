"""`sc.concat_where` conditions on scalar parameters and expressions of them (`K < k_start`,
`(K >= n) & (K < m)`, `I >= start_idx`) on the embedded executor, against NumPy written
here; each branch's reads are checked only where it is selected, at the call."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stencilchain as sc

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F3 = sc.Field[[I, J, K], sc.float64]


@sc.field_operator
def split(f: F3, k_start: sc.int32, n: sc.int32, m: sc.int32) -> F3:
    """Reads above below `k_start`, below from it on; doubled in [n, m)."""
    a = sc.concat_where(K < k_start, f(K + 1), f(K - 1))
    return sc.concat_where((K >= n) & (K < m), 2.0 * a, a)


@sc.field_operator
def lateral(f: F3, start_idx: sc.int64) -> F3:
    """From `start_idx` on along I the point's value, before it the next one's."""
    return sc.concat_where(I >= start_idx + 1, f, f(I + 1))


@sc.program
def columns(
    f: F3, out: F3, side: F3, k_start: sc.int32, n: sc.int32, m: sc.int32, start: sc.int64
) -> None:
    split(f, k_start, n, m, out=out)  # K inferred: every level, each read where selected
    lateral(f, start - 1, out=side)  # a condition on an expression of a parameter


@sc.program
def explicit(f: F3, out: F3, k_start: sc.int32, n: sc.int32) -> None:
    split(f, k_start, n - 1, n + 2, out=out, domain={K: (1, -1)})


def _resolve(value: int, size: int) -> int:
    """A scalar in a condition counts like a domain bound: negative from the end."""
    return size + value if value < 0 else value


def split_reference(f: np.ndarray, ks: int, n: int, m: int, ka: int, kb: int) -> np.ndarray:
    """`split` over K in [ka, kb), zeros elsewhere."""
    nk = f.shape[2]
    out = np.zeros_like(f)
    for k in range(ka, kb):
        a = f[:, :, k + 1] if k < _resolve(ks, nk) else f[:, :, k - 1]
        out[:, :, k] = 2.0 * a if _resolve(n, nk) <= k < _resolve(m, nk) else a
    return out


def lateral_reference(f: np.ndarray, start: int) -> np.ndarray:
    ni = f.shape[0]
    out = f.copy()
    below = _resolve(start, ni)  # the condition I >= (start - 1) + 1
    out[: max(below, 0)] = f[1 : max(below, 0) + 1]
    return out


CASES = [
    (3, 2, 6, 2),  # both conditions inside
    (8, 0, 9, 5),  # k_start = the last level, which alone reads below; all doubled
    (1, -4, -1, 1),  # negative values count from the end
    (5, 6, 2, 4),  # an empty interval [6, 2): nothing doubled
]


@pytest.mark.parametrize(("ks", "n", "m", "start"), CASES)
def test_scalar_conditions_match_numpy(ks: int, n: int, m: int, start: int) -> None:
    f = np.random.default_rng(5).random((6, 3, 9))
    out, side = np.zeros_like(f), np.zeros_like(f)
    columns(f, out, side, np.int32(ks), np.int32(n), np.int32(m), np.int64(start))
    np.testing.assert_array_equal(out, split_reference(f, ks, n, m, 0, 9))
    np.testing.assert_array_equal(side, lateral_reference(f, start))


@pytest.mark.parametrize(("ks", "n"), [(3, 2), (1, 8), (-2, -5)])
def test_an_argument_expression_in_a_condition_is_its_value(ks: int, n: int) -> None:
    f = np.random.default_rng(6).random((2, 2, 9))
    out = np.zeros_like(f)
    explicit(f, out, np.int32(ks), np.int32(n))
    # the field operator sees the values n - 1 and n + 2 (negative: from the end)
    np.testing.assert_array_equal(out, split_reference(f, ks, n - 1, n + 2, 1, 8))


@pytest.mark.parametrize(
    ("ks", "message"),
    [
        (0, "K-1 to K-1 in a concat_where branch selected where K is in [max(m, k_start), inf)"),
        (10, "K+1 to K+1 in a concat_where branch selected where K is in [m, k_start)"),
    ],
)
def test_a_branch_reading_outside_where_a_scalar_selects_it_is_a_domain_error(
    ks: int, message: str
) -> None:
    f = np.ones((6, 3, 9))
    out, side = np.full_like(f, -3.0), np.full_like(f, -3.0)
    with pytest.raises(sc.DomainError) as info:
        columns(f, out, side, np.int32(ks), np.int32(0), np.int32(0), np.int64(2))
    assert str(info.value).startswith("call of split__call0 in columns(): domain K: [0, 9) ")
    assert message in str(info.value)
    assert str(info.value).endswith("at K in [0, 9), leaves the array of size 9 along K")
    assert (out == -3.0).all() and (side == -3.0).all()


def _operator_with_condition(condition: Callable[[Any, Any, Any], Any]) -> None:
    @sc.field_operator
    def op(f: F3, n: sc.int32, x: sc.float64) -> F3:
        return sc.concat_where(condition(f, n, x), f, 2.0 * f)


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        (lambda f, n, x: K < x, "of type float64; a bound is an integer expression"),
        (lambda f, n, x: K < f, "a dimension is compared with an index, not with a field"),
        (lambda f, n, x: K < n % 2, "a bound is built from integer scalar parameters"),
        (lambda f, n, x: K >= n // n, "divides (`//`) only by a positive int literal"),
    ],
)
def test_a_condition_on_a_non_integer_scalar_is_a_definition_error(
    condition: Callable[[Any, Any, Any], Any], message: str
) -> None:
    with pytest.raises(sc.DefinitionError, match=re.escape(message)):
        _operator_with_condition(condition)
