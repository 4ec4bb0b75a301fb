"""Integers at the edges of ICON's programs on the embedded executor: `sc.index` meets
int32 bounds without casts (it takes the integer dtype of the other operand, as a Python
int literal does), and a dtype called as a constructor, `sc.float64(1)`, is a literal of
that dtype in field operators and as a program's scalar argument; against NumPy."""

from __future__ import annotations

import os

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.errors import DefinitionError
from stencilchain.program import ir

from ._support import assert_located

Cell = sc.Dimension("Cell")
K = sc.Dimension("K", kind=sc.VERTICAL)
CellK = sc.Field[[Cell, K], sc.float64]
CellK32 = sc.Field[[Cell, K], sc.float32]
CellKI = sc.Field[[Cell, K], sc.int32]
HERE = os.path.abspath(__file__)


@sc.field_operator
def between_levels(x: CellK, k_start: sc.int32, k_end: sc.int32, horizontal_end: sc.int32) -> CellK:
    """ICON's spelling: int32 bounds compared with the level and cell indices."""
    levels = (sc.index(K) >= k_start) & (sc.index(K) < k_end)
    return sc.where(levels, sc.where(sc.index(Cell) < horizontal_end, x, 0.0), 0.0)


@sc.field_operator
def level_counts(k_offset: CellKI, n: sc.int32) -> CellKI:
    """An index in int32 arithmetic: the index takes the field's and the scalar's dtype."""
    return k_offset + sc.index(K) * 2 - (sc.index(K) + 1) % n


@sc.field_operator
def constructed(x: CellK32, a: sc.float64) -> CellK32:
    scaled = x * sc.float32(2) + sc.float32(0.5)
    return scaled + sc.astype(a * sc.float64(3), sc.float32) + sc.float32(sc.int32(7))


@sc.program
def edges(
    x: CellK, k_offset: CellKI, x32: CellK32, k_start: sc.int32, k_end: sc.int32,
    horizontal_end: sc.int32, n: sc.int32, a: sc.float64,
    masked: CellK, counts: CellKI, made: CellK32,
) -> None:  # fmt: skip
    between_levels(x, k_start, k_end, horizontal_end, out=masked)
    level_counts(k_offset, n, out=counts)
    constructed(x32, a, out=made)


def inputs(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((6, 5))
    k_offset = rng.integers(-3, 3, size=(6, 5)).astype(np.int32)
    return x, k_offset, x.astype(np.float32)


def references(
    x: np.ndarray, k_offset: np.ndarray, x32: np.ndarray, k_start: int, k_end: int,
    horizontal_end: int, n: int, a: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    masked, counts = np.zeros_like(x), np.zeros_like(k_offset)
    for c in range(x.shape[0]):
        for k in range(x.shape[1]):
            inside = k_start <= k < k_end and c < horizontal_end
            masked[c, k] = x[c, k] if inside else 0.0
            counts[c, k] = k_offset[c, k] + 2 * k - (k + 1) % n
    made = x32 * np.float32(2) + np.float32(0.5) + np.float32(a * 3.0) + np.float32(7)
    return masked, counts, made


def run(program: sc.Program, seed: int) -> tuple[list[np.ndarray], tuple[np.ndarray, ...]]:
    x, k_offset, x32 = inputs(seed)
    scalars = (sc.int32(1), sc.int32(4), sc.int32(5), sc.int32(3), sc.float64(0.25))
    outs = [np.full_like(x, np.nan), np.zeros_like(k_offset), np.full_like(x32, np.nan)]
    program(x, k_offset, x32, *scalars, *outs)
    plain = (int(s) if isinstance(s, np.integer) else float(s) for s in scalars)
    return outs, references(x, k_offset, x32, *plain)  # type: ignore[arg-type]


def test_indices_meet_int32_bounds_and_dtype_constructors_make_literals() -> None:
    outs, expected = run(edges, 1)
    for got, want in zip(outs, expected):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_an_index_takes_the_other_operands_integer_dtype() -> None:
    body = level_counts.definition.body
    assert body.type == ir.FieldType((Cell, K), sc.int32)
    casts = [str(n.type) for n in _nodes(body) if isinstance(n, ir.Cast)]
    assert casts and all("int32" in c for c in casts)


def test_on_its_own_an_index_is_int64() -> None:
    @sc.field_operator
    def f(x: CellK) -> sc.Field[[K], sc.int64]:
        return sc.index(K) + 1

    assert f.return_type == ir.FieldType((K,), sc.int64)


def _nodes(expr: ir.Expr) -> list[ir.Expr]:
    return [expr, *(n for child in ir.children(expr) for n in _nodes(child))]


def test_dtype_constructors_give_numpy_scalars() -> None:
    assert type(sc.float64(1)) is np.float64 and sc.float64(1) == 1.0
    assert type(sc.int32(3)) is np.int32 and type(sc.bool_(True)) is np.bool_
    assert type(sc.float32(np.int64(2))) is np.float32


# --- misuse ------------------------------------------------------------------------------


def test_an_index_does_not_become_a_float() -> None:
    with pytest.raises(DefinitionError, match="mismatched dtypes float64 and int64") as info:

        @sc.field_operator
        def f(x: CellK) -> CellK:
            return x * sc.index(K)  # L:index-float

    assert_located(info.value, "index-float", path=HERE)


def test_a_constructor_literal_is_typed() -> None:
    with pytest.raises(DefinitionError, match="mismatched dtypes float32 and float64") as info:

        @sc.field_operator
        def f(x: CellK32) -> CellK32:
            return x * sc.float64(2)  # L:typed-literal

    assert_located(info.value, "typed-literal", path=HERE)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: sc.int32(3.5), ["sc.int32(3.5)", "sc.astype"]),
        (lambda: sc.int32(2**40), ["int32", "2147483647"]),
        (lambda: sc.bool_(1), ["sc.bool_(1)", "a bool"]),
        (lambda: sc.float32(1e300), ["stays finite"]),
        (lambda: sc.float64("1"), ["sc.astype(x, sc.float64)"]),
    ],
)
def test_a_constructor_converts_nothing_that_changes_meaning(
    make: object, words: list[str]
) -> None:
    with pytest.raises(DefinitionError) as info:
        make()  # type: ignore[operator]
    for word in words:
        assert word in str(info.value)


def test_a_constructor_of_a_traced_value() -> None:
    with pytest.raises(DefinitionError, match=r"sc\.astype") as info:

        @sc.field_operator
        def f(x: CellK) -> CellK:
            return sc.float64(x)  # L:traced

    assert_located(info.value, "traced", path=HERE)
