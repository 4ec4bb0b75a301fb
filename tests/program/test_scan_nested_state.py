"""Scans with a nested tuple state on the embedded executor, against a NumPy loop: called
from a program (out= nested like the state) and inside a field operator; a new state of
another nesting is a DefinitionError at the scan's definition."""

from __future__ import annotations

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.errors import DefinitionError

I, K = sc.Dimension("I"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]
SHAPE = (3, 6)


@sc.scan_operator(axis=K, forward=True, init=(0.0, (1.0, np.int64(0))))
def moments(state, a: F):  # type: ignore[no-untyped-def]
    total, (product, count) = state
    return total + a, (product * (1.0 + a), count + 1)


@sc.field_operator
def mean_and_product(a: F) -> tuple[F, F]:
    total, (product, count) = moments(a)
    return total / sc.astype(count, sc.float64), product


@sc.program
def nested_scan(a: F, t: F, p: F, c: sc.Field[[I, K], sc.int64], m: F, q: F) -> None:
    moments(a, out=(t, (p, c)))
    mean_and_product(a, out=(m, q))


def _reference(a: np.ndarray) -> tuple[np.ndarray, ...]:
    t, p, c = np.zeros(SHAPE), np.zeros(SHAPE), np.zeros(SHAPE, np.int64)
    total, product, count = np.zeros(SHAPE[0]), np.ones(SHAPE[0]), 0
    for k in range(SHAPE[1]):
        total, product, count = total + a[:, k], product * (1.0 + a[:, k]), count + 1
        t[:, k], p[:, k], c[:, k] = total, product, count
    return t, p, c, t / c, p


def _outs() -> list[np.ndarray]:
    return [np.zeros(SHAPE), np.zeros(SHAPE), np.zeros(SHAPE, np.int64)] + [
        np.zeros(SHAPE) for _ in range(2)
    ]


def test_a_nested_state() -> None:
    a = np.random.default_rng(5).random(SHAPE)
    outs = _outs()
    nested_scan(a, *outs)
    for got, expected in zip(outs, _reference(a), strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_a_new_state_of_another_nesting_is_an_error() -> None:
    with pytest.raises(DefinitionError, match=r"nested like its init= \(scalar, \(scalar, "):

        @sc.scan_operator(axis=K, init=(0.0, (0.0, 0.0)))
        def bad(state, a: F):  # type: ignore[no-untyped-def]
            return state[0] + a, state[1][0], state[1][1]
