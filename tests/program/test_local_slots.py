"""A slot of a local field, `w[E2C2VDim(0)]`, on the embedded executor: a local field given
as an argument read as stored, `f(E2C2V)` read at a slot as `f(E2C2V[slot])` (a missing
neighbour reads 0), on a bounded mesh with skip values; against NumPy loops over the table.
Misuse is a DefinitionError at the user's line; a slot that no table numbers is checked
against the arguments' extent at the call (an ArgumentError)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import stencilchain as sc
from stencilchain import meshes
from stencilchain.errors import DefinitionError

from ._support import assert_located

Edge, Vertex = sc.Dimension("Edge"), sc.Dimension("Vertex")
K = sc.Dimension("K", kind=sc.VERTICAL)
E2C2VDim = sc.Dimension("E2C2VDim", kind=sc.LOCAL)
E2C2V = sc.Connectivity(
    "E2C2V", source=Vertex, target=(Edge, E2C2VDim), max_neighbors=4, skip_values=True
)
HERE = os.path.abspath(__file__)

EdgeK = sc.Field[[Edge, K], sc.float64]
VertexK = sc.Field[[Vertex, K], sc.float64]
EdgeF = sc.Field[[Edge], sc.float64]
VertexF = sc.Field[[Vertex], sc.float64]
Weights = sc.Field[[Edge, E2C2VDim], sc.float64]


@sc.field_operator
def rhombus(u: VertexK, w: Weights) -> tuple[EdgeK, EdgeK]:
    """ICON's spelling: weights of the four rhombus vertices, each slot its own term."""
    at = u(E2C2V)
    first = w[E2C2VDim(0)] * at[E2C2VDim(0)] + w[E2C2VDim(1)] * at[E2C2VDim(1)]
    opposite = (w * at)[E2C2VDim(2)] + w[E2C2VDim(3)] * u(E2C2V[3])
    return first, opposite


@sc.program
def rhombus_terms(
    u: VertexK, w: Weights, e2c2v: sc.Table[E2C2V], first: EdgeK, opposite: EdgeK
) -> None:
    rhombus(u, w, out=(first, opposite))


@sc.program
def rhombus_terms64(
    u: VertexK, w: Weights, e2c2v: sc.Table[E2C2V, sc.int64], first: EdgeK, opposite: EdgeK
) -> None:
    rhombus(u, w, out=(first, opposite))


def rhombus_reference(
    u: np.ndarray, w: np.ndarray, table: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    first, opposite = np.zeros((len(table), u.shape[1])), np.zeros((len(table), u.shape[1]))
    gathered = np.where((table >= 0)[:, :, None], u[np.maximum(table, 0)], 0.0)
    for e in range(len(table)):
        first[e] = w[e, 0] * gathered[e, 0] + w[e, 1] * gathered[e, 1]
        opposite[e] = w[e, 2] * gathered[e, 2] + w[e, 3] * gathered[e, 3]
    return first, opposite


def mesh_inputs(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mesh = meshes.rectangle(5, 4)
    table = mesh.table("E2C2V")
    assert (table[:, 3] < 0).any(), "the rectangle's boundary edges miss a vertex"
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((mesh.n_vertices, 3))
    w = rng.standard_normal((mesh.n_edges, 4))
    return u, w, np.asarray(table)


def test_slots_of_local_fields_on_a_mesh_with_skip_values() -> None:
    u, w, table = mesh_inputs(1)
    outs = [np.full((len(table), 3), np.nan) for _ in range(2)]
    rhombus_terms(u, w, table, *outs)
    for got, want in zip(outs, rhombus_reference(u, w, table)):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)


def test_a_stored_slot_is_read_as_stored_where_the_neighbour_is_missing() -> None:
    """The table is not consulted for a local field given as an argument."""

    @sc.field_operator
    def last(w: Weights) -> EdgeF:
        return w[E2C2VDim(3)]

    @sc.program
    def last_weight(w: Weights, e2c2v: sc.Table[E2C2V], out: EdgeF) -> None:
        last(w, out=out)

    _, w, table = mesh_inputs(2)
    out = np.zeros(len(table))
    last_weight(w, table, out)
    np.testing.assert_array_equal(out, w[:, 3])


@sc.field_operator
def odd_slots(w: Weights) -> EdgeF:
    return w[E2C2VDim(1)] + w[E2C2VDim(3)]


@sc.field_operator
def through_a_call(u: VertexF, w: Weights) -> EdgeF:
    """A local field passed to another field operator, which reads its slots."""
    return odd_slots(w * u(E2C2V)) + odd_slots(w)


@sc.program
def slots_in_a_callee(u: VertexF, w: Weights, e2c2v: sc.Table[E2C2V], out: EdgeF) -> None:
    through_a_call(u, w, out=out)


def callee_reference(u: np.ndarray, w: np.ndarray, table: np.ndarray) -> np.ndarray:
    gathered = np.where(table >= 0, u[np.maximum(table, 0)], 0.0)
    return (w[:, 1] * gathered[:, 1] + w[:, 3] * gathered[:, 3]) + (w[:, 1] + w[:, 3])


def test_slots_read_in_a_called_field_operator() -> None:
    u, w, table = mesh_inputs(5)
    out = np.full(len(table), np.nan)
    slots_in_a_callee(u[:, 0].copy(), w, table, out)
    np.testing.assert_allclose(out, callee_reference(u[:, 0], w, table), rtol=1e-14, atol=1e-15)


def test_the_ir_prints_slots() -> None:
    text = str(rhombus_terms.ir)
    assert "w[E2C2VDim(0)]" in text and "(u(E2C2V))[E2C2VDim(1)]" in text


# --- misuse ------------------------------------------------------------------------------


def test_an_int_index() -> None:
    with pytest.raises(DefinitionError, match=r"w\[E2C2VDim\(0\)\]") as info:

        @sc.field_operator
        def f(w: Weights) -> EdgeF:
            return w[0]  # L:int-index

    assert_located(info.value, "int-index", path=HERE)


def test_a_slot_of_a_dimension_that_is_not_local() -> None:
    with pytest.raises(DefinitionError, match="not a local dimension") as info:

        @sc.field_operator
        def f(w: EdgeK) -> EdgeK:
            return w[Edge(0)]  # L:not-local

    assert_located(info.value, "not-local", path=HERE)


def test_a_slot_that_is_not_a_non_negative_int() -> None:
    with pytest.raises(DefinitionError, match="non-negative Python int") as info:

        @sc.field_operator
        def f(w: Weights) -> EdgeF:
            return w[E2C2VDim(-1)]  # L:negative

    assert_located(info.value, "negative", path=HERE)


def test_a_slot_beyond_max_neighbors_of_a_neighbour_read() -> None:
    with pytest.raises(DefinitionError, match=r"max_neighbors=4") as info:

        @sc.field_operator
        def f(u: VertexF) -> EdgeF:
            return u(E2C2V)[E2C2VDim(4)]  # L:beyond

    assert_located(info.value, "beyond", path=HERE)


def test_a_slot_of_a_field_without_that_local_dimension() -> None:
    with pytest.raises(DefinitionError, match="not over E2C2VDim") as info:

        @sc.field_operator
        def f(w: EdgeK) -> EdgeK:
            return w[E2C2VDim(0)]  # L:not-over

    assert_located(info.value, "not-over", path=HERE)


@sc.field_operator
def fifth(w: Weights) -> EdgeF:
    return w[E2C2VDim(4)]


def test_a_slot_beyond_the_tables_max_neighbors_in_a_program() -> None:
    with pytest.raises(DefinitionError, match=r"E2C2V has max_neighbors=4") as info:

        @sc.program
        def p(w: Weights, e2c2v: sc.Table[E2C2V], out: EdgeF) -> None:
            fifth(w, out=out)

    assert "fifth reads slot E2C2VDim(4)" in str(info.value)


def test_a_slot_without_a_table_reads_the_arguments_extent() -> None:
    """No table numbers the slots: the arguments' extent along E2C2VDim is how many there
    are (tests/runtime/test_local_slots_without_table.py runs it on every toolchain)."""

    @sc.program
    def p(w: Weights, out: EdgeF) -> None:
        fifth(w, out=out)

    _, w, _ = mesh_inputs(6)
    wide = np.concatenate([w, w[:, :1] + 1.0], axis=1)
    out = np.zeros(len(w))
    p(wide, out)
    np.testing.assert_array_equal(out, wide[:, 4])
    with pytest.raises(
        sc.ArgumentError, match=r"argument 'w' of p\(\): .*reads slot E2C2VDim\(4\)"
    ):
        p(w, out)


@sc.field_operator
def broadcast_slot(u: EdgeF) -> EdgeF:
    return sc.broadcast(u, (Edge, E2C2VDim))[E2C2VDim(1)]


def test_a_slot_needs_a_table_or_an_argument_over_its_dimension() -> None:
    with pytest.raises(DefinitionError, match="nor is a field parameter over E2C2VDim") as info:

        @sc.program
        def p(u: EdgeF, out: EdgeF) -> None:  # L:no-extent
            broadcast_slot(u, out=out)

    assert_located(info.value, "no-extent", -1, path=HERE)
