"""Tuples as values on the embedded executor: `sc.astype` of a (nested) tuple, tuples as the
branches of `sc.where` and `sc.concat_where`, each against a NumPy reference; a mismatch of
tuple structure is a DefinitionError at the user's line."""

from __future__ import annotations

import os

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.errors import DefinitionError
from tests.program._support import assert_located

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]
F32 = sc.Field[[I, K], sc.float32]
FK = sc.Field[[K], sc.float64]
HERE = os.path.abspath(__file__)
SHAPE = (5, 6)


@sc.field_operator
def mixed_precision(a: F, b: F, c: F) -> tuple[F32, F32, F32]:
    x, y = sc.astype((a + b, a * b), sc.float32)
    (z,), w = sc.astype(((c,), x), sc.float64)  # nested, and a float32 back to float64
    return x, y, sc.astype(z - w, sc.float32)


@sc.program
def astype_program(a: F, b: F, c: F, x: F32, y: F32, z: F32) -> None:
    mixed_precision(a, b, c, out=(x, y, z))


@sc.field_operator
def where_tuple(a: F, b: F, c: F) -> tuple[F, F, F]:
    p, (q, r) = sc.where(a > 0.5, (a, (b, 1.0)), (b, (a * 2.0, c)))
    return p, q, r


@sc.field_operator
def concat_tuple(a: F, b: F, top: FK) -> tuple[F, F, F]:
    inner = sc.concat_where(K == 0, (b, b), (a(K - 1), a))
    p, (q, r) = sc.concat_where(K >= sc.size(K) - 1, (top, (a(K - 1), 0.0)), (inner[0], inner))
    return p, q, r


@sc.program
def branches_program(a: F, b: F, c: F, top: FK, p: F, q: F, r: F, s: F, t: F, u: F) -> None:
    where_tuple(a, b, c, out=(p, q, r))
    concat_tuple(a, b, top, out=(s, t, u))


def _inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.random(SHAPE), rng.random(SHAPE), rng.random(SHAPE)


def test_astype_of_a_tuple_and_of_a_nested_tuple() -> None:
    a, b, c = _inputs()
    x, y, z = (np.zeros(SHAPE, np.float32) for _ in range(3))
    astype_program(a, b, c, x, y, z)
    np.testing.assert_array_equal(x, (a + b).astype(np.float32))
    np.testing.assert_array_equal(y, (a * b).astype(np.float32))
    expected_z = (c - (a + b).astype(np.float32).astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(z, expected_z)


def test_tuples_as_branches_of_where_and_concat_where() -> None:
    a, b, c = _inputs()
    top = np.random.default_rng(3).random(SHAPE[1])
    outs = [np.full(SHAPE, np.nan) for _ in range(6)]
    branches_program(a, b, c, top, *outs)
    p, q, r, s, t, u = outs
    mask = a > 0.5
    np.testing.assert_array_equal(p, np.where(mask, a, b))
    np.testing.assert_array_equal(q, np.where(mask, b, a * 2.0))
    np.testing.assert_array_equal(r, np.where(mask, 1.0, c))
    # s: top at the last level, else b at level 0, else a one level down
    below = np.concatenate([b[:, :1], a[:, :-1]], axis=1)
    exp_s = below.copy()
    exp_s[:, -1] = top[-1]
    np.testing.assert_array_equal(s, exp_s)
    # t: a(K - 1) at the last level, else (b at level 0, else a(K - 1))
    np.testing.assert_array_equal(t, below)
    # u: 0 at the last level, else b at level 0, else a
    exp_u = np.concatenate([b[:, :1], a[:, 1:-1], np.zeros((SHAPE[0], 1))], axis=1)
    np.testing.assert_array_equal(u, exp_u)


def test_where_branches_of_different_tuple_structure_are_located() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.field_operator
        def bad(a: F, b: F) -> tuple[F, F]:
            return sc.where(a > 0.0, (a, b), (b, (a, b)))  # L:where-mismatch

    assert_located(info.value, "where-mismatch", path=HERE)
    assert "tuple (value, value) and a tuple (value, (value, value))" in str(info.value)


def test_concat_where_of_a_tuple_and_a_value_is_located() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.field_operator
        def bad(a: F, b: F) -> tuple[F, F]:
            return sc.concat_where(K == 0, (a, b), a)  # L:concat-mismatch

    assert_located(info.value, "concat-mismatch", path=HERE)
    assert "one value" in str(info.value) and "sc.concat_where" in str(info.value)


def test_astype_of_a_tuple_with_a_literal_names_it() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.field_operator
        def bad(a: F) -> tuple[F32, F32]:
            return sc.astype((a, 1.5), sc.float32)  # L:astype-literal

    assert_located(info.value, "astype-literal", path=HERE)
    assert "1.5" in str(info.value)
