"""Scans as gt4py writes them, on the embedded executor against NumPy loops: values
annotated `float` (fields over the call's dimensions), a state annotated
`tuple[float, float]` and checked against init=, a scan with no field argument (only
scalars and its state) over the dimensions of its out=, and field operators of scalars
(`def add(a: float, b: float) -> float`) called in a scan's body."""

from __future__ import annotations

import os

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.errors import DefinitionError
from tests.program._support import assert_located

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F = sc.Field[[I, J, K], sc.float64]
FK = sc.Field[[K], sc.float64]
HERE = os.path.abspath(__file__)
SHAPE = (3, 2, 6)


@sc.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def thomas_forward(
    state: tuple[float, float], a: float, b: float, c: float, d: float
) -> tuple[float, float]:
    c_below, d_below = state
    denominator = b - a * c_below
    return c / denominator, (d - a * d_below) / denominator


@sc.scan_operator(axis=K, forward=False, init=0.0)
def thomas_backward(x_above: float, c_prime: float, d_prime: float) -> float:
    return d_prime - c_prime * x_above


@sc.field_operator
def solve(a: F, b: F, c: F, d: F) -> F:
    c_prime, d_prime = thomas_forward(a, b, c, d)  # the call's fields give the dimensions
    return thomas_backward(c_prime, d_prime)


@sc.scan_operator(axis=K, init=0.0)
def accumulate(state: float, step: sc.float64) -> float:
    return state + step


@sc.scan_operator(axis=K, forward=False, init=0.0)
def depth(state: float) -> float:
    return state + 1.0


@sc.field_operator
def add(carry: float, foo: float) -> float:
    return carry + foo


@sc.field_operator
def damped(carry: float, foo: float, rate: float) -> float:
    return add(carry, foo) * rate if rate > 0.0 else add(carry, foo)


@sc.scan_operator(axis=K, init=1.0)
def through_field_operators(carry: float, f: float, rate: sc.float64) -> float:
    return damped(carry, add(f, 1.0), rate)  # field operators of scalars, inlined


@sc.program
def gt4py_scans(
    a: F,
    b: F,
    c: F,
    d: F,
    x: F,
    step: sc.float64,
    acc: F,
    column: FK,
    below: FK,
    inlined: F,
) -> None:
    solve(a, b, c, d, out=x)
    accumulate(step, out=acc)  # no field argument: the dimensions of out=
    accumulate(0.5, out=column)  # the same scan over other dimensions
    depth(out=below)
    through_field_operators(a, step, out=inlined)


def inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    a, c = -rng.random(SHAPE), -rng.random(SHAPE)
    b, d = 4.0 + rng.random(SHAPE), rng.random(SHAPE)
    return [a, b, c, d, np.zeros(SHAPE)]


def outputs() -> list[np.ndarray]:
    return [np.zeros(SHAPE), np.zeros(SHAPE[2]), np.zeros(SHAPE[2]), np.zeros(SHAPE)]


def _thomas(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    cp, dp, x = np.zeros_like(a), np.zeros_like(a), np.zeros_like(a)
    cb, db = 0.0, 0.0
    for k in range(n):
        den = b[..., k] - a[..., k] * cb
        cb, db = c[..., k] / den, (d[..., k] - a[..., k] * db) / den
        cp[..., k], dp[..., k] = cb, db
    above = 0.0
    for k in reversed(range(n)):
        above = dp[..., k] - cp[..., k] * above
        x[..., k] = above
    return x


def test_gt4py_spelled_scans() -> None:
    args = inputs()
    acc, column, below, inlined = outputs()
    gt4py_scans(*args, 0.25, acc, column, below, inlined)
    np.testing.assert_allclose(args[4], _thomas(*args[:4]), rtol=1e-13)
    np.testing.assert_allclose(acc, np.broadcast_to(0.25 * np.arange(1, 7), SHAPE))
    np.testing.assert_allclose(column, 0.5 * np.arange(1, 7))
    np.testing.assert_allclose(below, np.arange(6, 0, -1.0))
    carry, expected = np.ones(SHAPE[:2]), np.zeros(SHAPE)
    for k in range(SHAPE[2]):
        carry = (carry + args[0][..., k] + 1.0) * 0.25
        expected[..., k] = carry
    np.testing.assert_allclose(inlined, expected, rtol=1e-14)


def test_a_field_operator_of_scalars_is_not_a_program_call() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.program
        def bad(s: sc.float64, out: F) -> None:
            add(s, 1.0, out=out)  # L:scalar-fop

    assert_located(info.value, "scalar-fop", path=HERE)
    assert "computes a scalar from scalars" in str(info.value)


def test_a_state_annotation_contradicting_init_is_located() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.scan_operator(axis=K, init=0)  # L:state-annotation
        def bad(state: float, a: float) -> float:
            return state + a

    assert_located(info.value, "state-annotation", 1, path=HERE)
    assert "annotated float64, but init= makes it int64" in str(info.value)


def test_a_scan_without_fields_in_a_field_operator_needs_dimensions() -> None:
    with pytest.raises(DefinitionError, match="dimensions of its columns are unknown"):

        @sc.field_operator
        def bad(a: F, s: sc.float64) -> F:
            return a + accumulate(s)


def test_a_program_scalar_for_a_value_read_per_level() -> None:
    """gt4py's test_scalar_scan: a scan called in a program with a scalar parameter (and a
    literal) where it reads a value per level: the same value on every level, as when the
    scan is called in a field operator."""

    @sc.scan_operator(axis=K, init=0.0)
    def add_both(state: float, f: float, s: float) -> float:
        return state + f + s

    @sc.program
    def scalars(f: F, s: sc.float64, x: F, y: F) -> None:
        add_both(f, s, out=x)
        add_both(f, 0.5, out=y)

    f = np.random.default_rng(2).random(SHAPE)
    x, y = np.zeros(SHAPE), np.zeros(SHAPE)
    scalars(f, 0.25, x, y)
    np.testing.assert_allclose(x, np.cumsum(f + 0.25, axis=2), rtol=1e-14)
    np.testing.assert_allclose(y, np.cumsum(f + 0.5, axis=2), rtol=1e-14)
