"""Tuples as values on the embedded executor: `sc.astype` of a (nested) tuple, tuples as the
branches of `sc.where` and `sc.concat_where`, each against a NumPy reference; a mismatch of
tuple structure is a DefinitionError at the user's line."""

from __future__ import annotations

import os
from typing import Any

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
    p, (q, r) = sc.concat_where(sc.size(K) - 1 <= K, (top, (a(K - 1), 0.0)), (inner[0], inner))
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


# --- tuple arguments and nested tuple results ------------------------------------------

Pair = tuple[F, tuple[F, sc.float64]]


@sc.field_operator
def combine(x: Pair, y: F) -> tuple[F, tuple[F, F]]:
    a, (b, s) = x
    return a + y, (b * s, x[0] - b)


@sc.field_operator
def outer(x: Pair, y: F) -> tuple[F, tuple[F, F]]:
    p, (q, r) = combine(x, y)  # a field operator with a tuple parameter, called inside one
    return p(K - 1), (q, r)


@sc.field_operator
def second(t: tuple[F, tuple[F, F]], scale: sc.float64) -> F:
    return t[0] + scale * t[1][0] - t[1][1]


@sc.program
def tuple_program(x: Pair, y: F, o1: F, o2: F, o3: F, o4: F) -> None:
    outer(x, y, out=(o1, (o2, o3)))
    tmp = combine((x[1][0], (x[0], 2.0)), y)  # a tuple built in the program, a temporary
    second(tmp, x[1][1], out=o4)


def _tuple_reference(
    a: np.ndarray, b: np.ndarray, s: float, y: np.ndarray
) -> tuple[np.ndarray, ...]:
    o1 = np.full(SHAPE, np.nan)
    o1[:, 1:] = (a + y)[:, :-1]
    o2, o3 = b * s, a - b
    o2[:, 0] = o3[:, 0] = np.nan  # one call, one domain: K from 1, for the shift in o1
    t0, t10, t11 = b + y, a * 2.0, b - a
    return o1, o2, o3, t0 + s * t10 - t11


def test_tuple_arguments_and_nested_results() -> None:
    a, b, y = _inputs()
    outs = [np.full(SHAPE, np.nan) for _ in range(4)]
    tuple_program((a, (b, 0.5)), y, *outs)
    for got, expected in zip(outs, _tuple_reference(a, b, 0.5, y), strict=True):
        np.testing.assert_array_equal(got, expected)


def test_tuple_arguments_by_keyword() -> None:
    a, b, y = _inputs()
    outs = [np.full(SHAPE, np.nan) for _ in range(4)]
    tuple_program(y=y, x=(a, (b, 0.5)), o1=outs[0], o2=outs[1], o3=outs[2], o4=outs[3])
    np.testing.assert_array_equal(outs[3], _tuple_reference(a, b, 0.5, y)[3])


@pytest.mark.parametrize(
    ("x", "named"),
    [
        (lambda a, b: (a, b), "'x[1]' must be a tuple (field, scalar)"),
        (lambda a, b: (a, (b,)), "'x[1]' must be a tuple (field, scalar), got a tuple of 1"),
        (lambda a, b: a, "'x' must be a tuple (field, (field, scalar))"),
        (lambda a, b: ((a, a), (b, 0.5)), "'x[0]' of tuple_program(): expected a numpy array"),
        (lambda a, b: (a, (b.astype(np.float32), 0.5)), "'x[1][0]'"),
        (lambda a, b: (a, (b, "half")), "'x[1][1]'"),
    ],
)
def test_a_wrong_tuple_argument_is_named(x: Any, named: str) -> None:
    a, b, y = _inputs()
    outs = [np.full(SHAPE, np.nan) for _ in range(4)]
    with pytest.raises(sc.errors.ArgumentError) as info:
        tuple_program(x(a, b), y, *outs)
    assert named in str(info.value)
    assert "x_1" not in str(info.value)


def test_a_call_with_a_wrong_tuple_structure_is_located() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.program
        def bad(a: F, b: F, o1: F, o2: F, o3: F) -> None:
            combine((a, b), a, out=(o1, (o2, o3)))  # L:call-structure

    assert_located(info.value, "call-structure", path=HERE)
    assert "argument 'x[1]' must be a tuple (field, scalar)" in str(info.value)


def test_a_wrong_tuple_element_is_named_inside_a_field_operator() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.field_operator
        def bad(a: F, b: F32) -> tuple[F, tuple[F, F]]:
            return combine((a, (b, 1.0)), a)  # L:element-type

    assert_located(info.value, "element-type", path=HERE)
    assert "argument 'x[1][0]' of combine" in str(info.value)


def test_out_of_another_nesting_is_located() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.program
        def bad(x: Pair, y: F, o1: F, o2: F, o3: F) -> None:
            combine(x, y, out=(o1, o2, o3))  # L:out-structure

    assert_located(info.value, "out-structure", path=HERE)
    assert "'out' must be a tuple (field, (field, field)), got a tuple of 3" in str(info.value)


def test_a_nested_return_annotation_is_checked() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.field_operator
        def bad(a: F) -> tuple[F, tuple[F, F]]:
            return a, a, a

    assert "annotated to return tuple[" in str(info.value)
