"""The errors a user porting gt4py or ICON code meets, each a DefinitionError at the user's
file and line that says what to write: a condition with the dimension on the right, a
dimension or an index condition used as an operand, the suggested broadcast in the order of
the operator's fields, a scan state annotation that contradicts init= (and the rule when
it does not)."""

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
KF = sc.Field[[K], sc.float64]
HERE = os.path.abspath(__file__)


@pytest.mark.parametrize("mirrored", [False, True])
def test_a_condition_with_the_dimension_on_either_side_is_the_same_condition(
    mirrored: bool,
) -> None:
    """`n <= Cell` is `Cell >= n`: with a scalar bound, a condition the field operator runs
    (it no longer says "cannot use Dimension")."""

    @sc.field_operator
    def plain(x: CellK, n: sc.int32) -> CellK:
        return sc.concat_where(Cell >= n, x, 0.0)

    @sc.field_operator
    def either(x: CellK, n: sc.int32) -> CellK:
        if mirrored:
            return sc.concat_where(n <= Cell, x, 0.0)
        return sc.concat_where(Cell >= n, x, 0.0)

    assert either.definition.body == plain.definition.body

    @sc.program
    def run(x: CellK, out: CellK, n: sc.int32) -> None:
        either(x, n, out=out)

    x = np.random.default_rng(1).random((5, 3))
    out = np.full_like(x, -1.0)
    run(x, out, np.int32(2))
    np.testing.assert_array_equal(out, np.where(np.arange(5)[:, None] >= 2, x, 0.0))


def test_a_dimension_as_an_operand() -> None:
    with pytest.raises(DefinitionError, match=r"sc\.index\(K\)") as info:

        @sc.field_operator
        def f(x: CellK) -> CellK:
            return x * K  # L:dimension

    assert_located(info.value, "dimension", path=HERE)


def test_an_index_condition_joined_with_a_value_condition() -> None:
    with pytest.raises(DefinitionError, match="nest them") as info:

        @sc.field_operator
        def f(x: CellK) -> CellK:
            return sc.where((x > 0.0) & (K == 0), x, 0.0)  # L:region

    assert_located(info.value, "region", path=HERE)
    assert r"sc.index(K) == 0" in str(info.value)


def test_the_suggested_broadcast_follows_the_fields_order() -> None:
    """Conditions on K and on Cell among (Cell, K) fields: broadcast to (Cell, K)."""
    with pytest.raises(DefinitionError) as info:

        @sc.field_operator
        def f(x: CellK, n: sc.int32) -> CellK:
            both = (sc.index(K) < n) & (sc.index(Cell) > 0)  # L:order
            return sc.where(both, x, 0.0)

    assert_located(info.value, "order", path=HERE)
    assert "sc.broadcast(x, (Cell, K))" in str(info.value), info.value


# --- scan state annotations ----------------------------------------------------------------


@sc.scan_operator(axis=K, init=0)
def running_sum(state: sc.float64, x: KF):  # type: ignore[no-untyped-def]
    return state + x


@sc.program
def column_sums(x: KF, out: KF) -> None:
    running_sum(x, out=out)


def test_an_annotated_state_takes_a_python_init_as_a_literal() -> None:
    """`state: sc.float64` with `init=0`: the state is float64 and starts at 0.0."""
    assert running_sum.definition.init == (ir.Literal(0.0, sc.float64),)
    x = np.random.default_rng(1).standard_normal(6)
    out = np.zeros(6)
    column_sums(x, out)
    np.testing.assert_allclose(out, np.cumsum(x), rtol=1e-14)


@pytest.mark.parametrize(
    ("init", "words"),
    [
        (0.5, ["annotated state: sc.int32", "init=0.5 is no int32 value"]),
        (np.int64(0), ["init= is a NumPy int64"]),
        ((0, 0), ["init= is a tuple of 2"]),
    ],
)
def test_an_annotated_state_contradicting_init(init: object, words: list[str]) -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.scan_operator(axis=K, init=init)  # L:scan
        def count(state: sc.int32, x: KF):  # type: ignore[no-untyped-def]
            return state + 1

    assert_located(info.value, "scan", 1, path=HERE)
    for word in words:
        assert word in str(info.value)
