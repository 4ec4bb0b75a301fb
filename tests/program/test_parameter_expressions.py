"""Arithmetic on a program's scalar parameters, on the embedded executor: integer
expressions as domain bounds (`vertical_end - 1`, `upper // 2`, `2 * j - 1`) and
expressions as scalar call arguments (`j - 2`), against NumPy slicing written here."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import ir
from stencilchain.program.bound_exprs import BoundExpr

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F3 = sc.Field[[I, J, K], sc.float64]


@sc.field_operator
def vdiff(f: F3) -> F3:
    return f(K + 1) - f(K - 1)


@sc.field_operator
def below(f: F3, c: sc.int64, alpha: sc.float64) -> F3:
    return sc.where(sc.index(K) < c, alpha * f, -f)


@sc.program
def levels(
    f: F3,
    d: F3,
    t: F3,
    u: F3,
    vertical_end: sc.int32,
    upper: sc.int64,
    j: sc.int64,
    alpha: sc.float64,
) -> None:
    vdiff(f, out=d, domain={K: (vertical_end - 1, vertical_end)})
    vdiff(f, out=t, domain={K: (upper // 2, upper - 1)})
    below(f, j - 2, alpha * 2.0, out=u, domain={K: (1, 2 * j - 1)})


def _resolve(value: int, size: int) -> int:
    """A bound's value: negative counts from the end, like a literal bound."""
    return size + value if value < 0 else value


def reference(f: np.ndarray, ve: int, upper: int, j: int, alpha: float) -> list[np.ndarray]:
    """What `levels` writes into zeroed outputs, by NumPy slicing."""
    nk = f.shape[2]
    d, t, u = (np.zeros_like(f) for _ in range(3))
    a, b = _resolve(ve, nk) - 1, _resolve(ve, nk)
    if a < b:
        d[:, :, a:b] = f[:, :, a + 1 : b + 1] - f[:, :, a - 1 : b - 1]
    a, b = _resolve(upper // 2, nk), _resolve(upper, nk) - 1
    if a < b:
        t[:, :, a:b] = f[:, :, a + 1 : b + 1] - f[:, :, a - 1 : b - 1]
    b = _resolve(2 * j, nk) - 1
    k = np.arange(nk)
    value = np.where(k < j - 2, 2.0 * alpha * f, -f)
    u[:, :, 1:b] = value[:, :, 1:b]
    return [d, t, u]


CASES = [
    (5, 9, 4, 1.5),  # inside
    (9, 7, 5, 0.5),  # up to the last level readable at K+1
    (-2, -1, -1, 2.0),  # negative values count from the end: 2 * j = -2
    (3, 4, 1, 1.0),  # 2 * j - 1 = 1: an empty domain, on purpose
]


@pytest.mark.parametrize(("ve", "upper", "j", "alpha"), CASES)
def test_expressions_of_parameters_match_numpy(ve: int, upper: int, j: int, alpha: float) -> None:
    f = np.random.default_rng(3).random((3, 2, 10))
    got = [np.zeros_like(f) for _ in range(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an explicit domain empty by its parameters: silent
        levels(f, *got, np.int32(ve), np.int64(upper), np.int64(j), alpha)
    for g, w in zip(got, reference(f, ve, upper, j, alpha)):
        np.testing.assert_array_equal(g, w)


def test_a_constant_added_last_is_the_bounds_offset_and_the_rest_an_expression() -> None:
    domain = {dd.dim: dd for dd in levels.ir.calls[1].domain.dims}[K]
    assert domain.starts == (ir.Bound(0, False, BoundExpr("floordiv", "upper", 2)),)
    assert domain.stops == (ir.Bound(-1, False, "upper"),)
    assert repr(domain) == "K: [(upper // 2), upper-1)"


def test_an_expression_bound_outside_the_array_is_a_domain_error_before_anything_runs() -> None:
    f = np.ones((3, 2, 10))
    outs = [np.full_like(f, -3.0) for _ in range(3)]
    with pytest.raises(sc.DomainError) as info:
        levels(f, *outs, np.int32(1), np.int64(9), np.int64(4), 1.0)
    assert (
        "call of vdiff in levels(): domain K: [0, 1) with reads from K-1 to K+1 leaves the "
        "array of size 10 along K" in str(info.value)
    )
    for out in outs:
        assert (out == -3.0).all()


def _program_with_bound(bound: Callable[[Any, Any], Any]) -> None:
    @sc.program
    def p(f: F3, d: F3, n: sc.int32, x: sc.float64) -> None:
        vdiff(f, out=d, domain={K: (1, bound(n, x))})

    p.ir  # noqa: B018


@pytest.mark.parametrize(
    ("bound", "message"),
    [
        (lambda n, x: n // n, "divides (`//`) only by a positive int literal"),
        (lambda n, x: n // -2, "divides (`//`) only by a positive int literal"),
        (lambda n, x: n % 3, "a bound is built from integer scalar parameters"),
        (lambda n, x: x * 2.0, "of type float64; a bound is an integer expression"),
    ],
)
def test_a_bound_that_is_not_an_integer_expression_is_a_definition_error(
    bound: Callable[[Any, Any], Any], message: str
) -> None:
    with pytest.raises(sc.DefinitionError, match=re.escape(message)):
        _program_with_bound(bound)


def test_arithmetic_on_a_field_parameter_is_still_a_definition_error() -> None:
    with pytest.raises(sc.DefinitionError, match="program parameter 'f' used in an expression"):

        @sc.program
        def p(f: F3, d: F3) -> None:
            vdiff(f * 2.0, out=d)

        p.ir  # noqa: B018


def test_a_scalar_expression_of_parameters_cannot_be_tested_by_if() -> None:
    with pytest.raises(sc.DefinitionError, match="never tested by `if`"):

        @sc.program
        def p(f: F3, d: F3, n: sc.int32) -> None:
            if n - 1:
                vdiff(f, out=d)

        p.ir  # noqa: B018
