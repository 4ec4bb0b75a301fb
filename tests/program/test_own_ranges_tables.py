"""Fields over their own ranges along the dimensions a neighbour table indexes (issue 21),
on the embedded executor, each against a NumPy reference of its own.

Ported from gt4py's feature tests (tests/next_tests/integration_tests/feature_tests/
ffront_tests/test_reductions.py: `test_unstructured_shift_with_non_zero_origin`,
`test_neighbor_sum_with_non_zero_origin`): a vertex field from an origin, read through
E2V by an edge field over the edges whose neighbours all lie from that origin on. Then
what stencilchain adds: an output over part of a table's rows, composed shifts, skip
values, a table whose source is its entity (C2C), half levels beside them, and the errors
(an entry read outside the field it reads, of an argument or a temporary; a table with
fewer rows than its entity's index space), which name the table, the row and the entry,
and leave the outputs as they were.
"""

from __future__ import annotations

import numpy as np
import pytest

import stencilchain as sc

Cell, Edge, Vertex = sc.Dimension("Cell"), sc.Dimension("Edge"), sc.Dimension("Vertex")
K = sc.Dimension("K", kind=sc.VERTICAL)
E2VDim = sc.Dimension("E2VDim", kind=sc.LOCAL)
C2EDim = sc.Dimension("C2EDim", kind=sc.LOCAL)
C2CDim = sc.Dimension("C2CDim", kind=sc.LOCAL)
E2V = sc.Connectivity("E2V", source=Vertex, target=(Edge, E2VDim), max_neighbors=2)
C2E = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=3, skip_values=True)
C2C = sc.Connectivity("C2C", source=Cell, target=(Cell, C2CDim), max_neighbors=2)

VField = sc.Field[[Vertex], sc.float64]
EField = sc.Field[[Edge], sc.float64]
CField = sc.Field[[Cell], sc.float64]
EK = sc.Field[[Edge, K], sc.float64]
CK = sc.Field[[Cell, K], sc.float64]

N_VERTICES, N_EDGES, N_CELLS, NLEV = 9, 18, 6, 4
ORIGIN = 2


def e2v_table() -> np.ndarray:
    """The edges of a ring of vertices: each vertex's to the next one and the one after,
    listed from the lower vertex (so the last ones, which wrap around, start at 0 or 1)."""
    rows = [(v, v + d) for v in range(N_VERTICES) for d in (1, 2)]
    ordered = [(b % N_VERTICES, a) if b >= N_VERTICES else (a, b) for a, b in rows]
    return np.array(ordered, dtype=np.int32)


def c2e_table() -> np.ndarray:
    """Each cell's three edges (cell c: edges 2c + 1, 2c + 2, 2c + 3; the last cell has
    only two, its third slot -1)."""
    table = np.array([[2 * c + 1, 2 * c + 2, 2 * c + 3] for c in range(N_CELLS)], np.int32)
    table[-1, 2] = -1
    return table


def c2c_table() -> np.ndarray:
    return np.array([[(c + 1) % N_CELLS, (c + 2) % N_CELLS] for c in range(N_CELLS)], np.int32)


def c2c_from_one() -> np.ndarray:
    """Neighbours among the cells from 1 on (cell 0's too)."""
    return np.array([[1, 2], [2, 3], [3, 4], [4, 5], [5, 1], [1, 2]], np.int32)


def edges_from_origin(e2v: np.ndarray, all_slots: bool) -> tuple[int, int]:
    """gt4py's choice: from the first edge whose neighbours (the first, or all of them)
    lie from ORIGIN on, to the next one where one does not."""
    ok = (e2v >= ORIGIN).all(axis=1) if all_slots else e2v[:, 0] >= ORIGIN
    start = int(np.argmax(ok))
    stop = start + int(np.argmin(ok[start:])) if not ok[start:].all() else len(ok)
    return start, stop


@sc.field_operator
def first_vertex(a: VField) -> EField:
    return a(E2V[0])


@sc.program
def shift_e2v(a: VField, e2v: sc.Table[E2V], out: EField) -> None:
    first_vertex(a, out=out)


@sc.field_operator
def vertex_sum(a: VField) -> EField:
    return sc.neighbor_sum(a(E2V), axis=E2VDim)


@sc.program
def sum_e2v(a: VField, e2v: sc.Table[E2V], out: EField) -> None:
    vertex_sum(a, out=out)


def test_unstructured_shift_with_non_zero_origin() -> None:
    e2v = e2v_table()
    a = np.random.default_rng(1).random(N_VERTICES)
    start, stop = edges_from_origin(e2v, all_slots=False)
    assert 0 < start < stop < N_EDGES
    out = np.full(N_EDGES, -7.0)
    shift_e2v(
        sc.as_field((Vertex,), a[ORIGIN:], start={Vertex: ORIGIN}),
        e2v,
        sc.as_field((Edge,), out[start:stop], start={Edge: start}),
    )
    expected = np.full(N_EDGES, -7.0)
    expected[start:stop] = a[e2v[start:stop, 0]]
    np.testing.assert_array_equal(out, expected)


def test_neighbor_sum_with_non_zero_origin() -> None:
    e2v = e2v_table()
    a = np.random.default_rng(2).random(N_VERTICES)
    start, stop = edges_from_origin(e2v, all_slots=True)
    assert 0 < start < stop < N_EDGES
    out = np.full(N_EDGES, -7.0)
    sum_e2v(
        sc.as_field((Vertex,), a[ORIGIN:], start={Vertex: ORIGIN}),
        e2v,
        sc.as_field((Edge,), out[start:stop], start={Edge: start}),
    )
    expected = np.full(N_EDGES, -7.0)
    expected[start:stop] = a[e2v[start:stop]].sum(axis=1)
    np.testing.assert_array_equal(out, expected)


def test_an_output_over_part_of_the_rows_runs_there() -> None:
    """Along the table's entity dimension (the rows): the domain is the output's range,
    the table's rows span the index space."""
    e2v = e2v_table()
    a = np.random.default_rng(3).random(N_VERTICES)
    out = np.full(N_EDGES - 4, -7.0)
    sum_e2v(a, e2v, sc.as_field((Edge,), out, start={Edge: 3}))  # edges [3, N_EDGES - 1)
    np.testing.assert_array_equal(out, a[e2v[3 : N_EDGES - 1]].sum(axis=1))
    # a plain array shorter than the table: the edges from 0 on
    short = np.full(5, -7.0)
    sum_e2v(a, e2v, short)
    np.testing.assert_array_equal(short, a[e2v[:5]].sum(axis=1))


def test_an_entry_read_outside_the_field_is_refused_before_anything_is_written() -> None:
    e2v = e2v_table()
    a = np.random.default_rng(4).random(N_VERTICES)
    out = np.full(N_EDGES, -7.0)
    start, _ = edges_from_origin(e2v, all_slots=True)
    # one edge before the first whose vertices all lie from ORIGIN on
    bad_row = start - 1
    bad = int(e2v[bad_row][e2v[bad_row] < ORIGIN][0])
    with pytest.raises(
        sc.ArgumentError,
        match=(
            rf"argument 'e2v' of sum_e2v\(\): the table of E2V holds {bad} at row {bad_row}, "
            rf"slot \d, which the call of vertex_sum in sum_e2v\(\) reads of argument 'a', "
            rf"which spans \[{ORIGIN}, {N_VERTICES}\) along Vertex"
        ),
    ):
        sum_e2v(
            sc.as_field((Vertex,), a[ORIGIN:], start={Vertex: ORIGIN}),
            e2v,
            sc.as_field((Edge,), out[bad_row:], start={Edge: bad_row}),
        )
    assert (out == -7.0).all()


def test_a_field_that_ends_before_the_index_space_is_read_up_to_its_end() -> None:
    """An input shorter than the index space (the last vertices missing): every entry read
    must be below its end; the entries of rows not run may be anything in [0, n)."""
    e2v = e2v_table()
    a = np.random.default_rng(5).random(N_VERTICES)
    end = int(e2v[:4].max()) + 1
    out = np.full(N_EDGES, -7.0)
    wide = np.zeros(N_VERTICES)  # a field over the whole index space, unread
    sum_two_fields(a[:end], wide, e2v, sc.as_field((Edge,), out[:4], start={Edge: 0}))
    expected = np.full(N_EDGES, -7.0)
    expected[:4] = a[e2v[:4]].sum(axis=1)
    np.testing.assert_array_equal(out, expected)
    with pytest.raises(sc.ArgumentError, match=r"argument 'a', which spans \[0, \d+\)"):
        sum_two_fields(a[: end - 1], wide, e2v, out[:4])


@sc.field_operator
def vertex_sum_plus(a: VField, b: VField) -> EField:
    return sc.neighbor_sum(a(E2V), axis=E2VDim) + 0.0 * b(E2V[0])


@sc.program
def sum_two_fields(a: VField, b: VField, e2v: sc.Table[E2V], out: EField) -> None:
    vertex_sum_plus(a, b, out=out)


@sc.field_operator
def cell_from_vertices(a: VField) -> CField:
    return a(E2V[1])(C2E[0]) + first_vertex(a)(C2E[1])


@sc.program
def composed(a: VField, e2v: sc.Table[E2V], c2e: sc.Table[C2E], out: CField) -> None:
    cell_from_vertices(a, out=out)


def test_composed_shifts_check_the_entries_of_the_inner_table() -> None:
    e2v, c2e = e2v_table(), c2e_table()
    a = np.random.default_rng(6).random(N_VERTICES)
    reached = np.concatenate([e2v[c2e[:, 0], 1], e2v[c2e[:, 1], 0]])
    lowest = int(reached.min())
    assert lowest > 0
    out = np.full(N_CELLS, -7.0)
    composed(sc.as_field((Vertex,), a[lowest:], start={Vertex: lowest}), e2v, c2e, out)
    np.testing.assert_array_equal(out, a[e2v[c2e[:, 0], 1]] + a[e2v[c2e[:, 1], 0]])
    out = np.full(N_CELLS, -7.0)
    with pytest.raises(sc.ArgumentError, match=r"argument 'e2v' .*table of E2V holds"):
        composed(sc.as_field((Vertex,), a[lowest + 1 :], start={Vertex: lowest + 1}), e2v, c2e, out)
    assert (out == -7.0).all()


@sc.field_operator
def edge_sum_k(e: EK) -> CK:
    return sc.neighbor_sum(e(C2E), axis=C2EDim)


@sc.program
def sum_c2e_k(e: EK, c2e: sc.Table[C2E], out: CK) -> None:
    edge_sum_k(e, out=out)


def c2e_reference(e: np.ndarray, c2e: np.ndarray, first: int) -> np.ndarray:
    """The sum over each cell's edges of `e` (whose row 0 is edge `first`), -1 skipped."""
    rows = np.where(c2e >= 0, c2e - first, 0)
    return np.where((c2e >= 0)[:, :, None], e[rows], 0.0).sum(axis=1)


def test_skip_values_read_nothing_and_half_levels_go_beside() -> None:
    """C2E's -1 slots are not entries of any edge; the edges over [1, N_EDGES) on half
    levels, the cells on full levels."""
    c2e = c2e_table()
    assert c2e.min() == -1 and c2e[c2e >= 0].min() == 1
    e = np.random.default_rng(7).random((N_EDGES - 1, NLEV + 1))
    out = np.full((N_CELLS, NLEV), -7.0)
    sum_c2e_k(sc.as_field((Edge, K), e, start={Edge: 1}), c2e, out)
    np.testing.assert_allclose(out, c2e_reference(e, c2e, 1)[:, :NLEV], rtol=1e-15)
    c2e[2, 1] = 0  # edge 0, before e's first
    with pytest.raises(sc.ArgumentError, match=r"holds 0 at row 2, slot 1.*argument 'e'"):
        sum_c2e_k(sc.as_field((Edge, K), e, start={Edge: 1}), c2e, out)


@sc.field_operator
def next_cells(c: CField) -> CField:
    return c(C2C[0]) - c(C2C[1])


@sc.program
def differences(c: CField, c2c: sc.Table[C2C], out: CField) -> None:
    next_cells(c, out=out)


def test_a_table_over_one_dimension_reads_at_its_entries_not_its_rows() -> None:
    """C2C: source and entity are Cell. The output over cells [0, 3), the input over
    [1, N_CELLS): the rows run are the output's, the entries read the input's."""
    c2c = c2c_table()
    c = np.random.default_rng(8).random(N_CELLS)
    out = np.full(3, -7.0)
    differences(sc.as_field((Cell,), c[1:], start={Cell: 1}), c2c, out)
    np.testing.assert_array_equal(out, c[c2c[:3, 0]] - c[c2c[:3, 1]])
    wrap = np.full(N_CELLS - 1, -7.0)  # cell N_CELLS - 2 reads cell 0
    with pytest.raises(sc.ArgumentError, match=r"holds 0 at row 4, slot 1.*argument 'c'"):
        differences(sc.as_field((Cell,), c[1:], start={Cell: 1}), c2c, wrap)
    assert (wrap == -7.0).all()


@sc.field_operator
def doubled(a: VField) -> VField:
    return 2.0 * a


@sc.program
def through_a_temporary(a: VField, e2v: sc.Table[E2V], out: EField) -> None:
    t = doubled(a)
    first_vertex(t, out=out)


def test_reads_of_a_temporary_stay_where_it_was_written() -> None:
    e2v = e2v_table()
    a = np.random.default_rng(9).random(N_VERTICES)
    start, stop = edges_from_origin(e2v, all_slots=False)
    out = np.full(N_EDGES, -7.0)
    through_a_temporary(
        sc.as_field((Vertex,), a[ORIGIN:], start={Vertex: ORIGIN}),
        e2v,
        sc.as_field((Edge,), out[start:stop], start={Edge: start}),
    )
    expected = np.full(N_EDGES, -7.0)
    expected[start:stop] = 2.0 * a[e2v[start:stop, 0]]
    np.testing.assert_array_equal(out, expected)
    with pytest.raises(
        sc.ArgumentError,
        match=rf"reads of temporary '\w+', which holds values over \[{ORIGIN}, {N_VERTICES}\)",
    ):
        through_a_temporary(
            sc.as_field((Vertex,), a[ORIGIN:], start={Vertex: ORIGIN}),
            e2v,
            sc.as_field((Edge,), out[:stop], start={Edge: 0}),
        )


def test_a_table_needs_a_row_for_every_point_of_its_rows_index_space() -> None:
    e2v = e2v_table()
    a = np.random.default_rng(10).random(N_VERTICES)
    out = np.full(N_EDGES + 1, -7.0)
    with pytest.raises(
        sc.ArgumentError,
        match=rf"argument 'e2v' .*has {N_EDGES} rows, but fields span \[0, {N_EDGES + 1}\) along Edge",
    ):
        sum_e2v(sc.as_field((Vertex,), a[1:], start={Vertex: 1}), e2v, out)
    assert (out == -7.0).all()


Slot = sc.Field[[Edge, E2VDim], sc.float64]


@sc.field_operator
def weighted(a: VField, w: Slot) -> EField:
    return sc.neighbor_sum(a(E2V) * w, axis=E2VDim)


@sc.program
def weighted_sum(a: VField, w: Slot, e2v: sc.Table[E2V], out: EField) -> None:
    weighted(a, w, out=out)


def test_a_local_dimension_is_still_one_size() -> None:
    """Along a table's local dimension (its slots) every field has the table's width;
    along its rows a local field may cover part of them."""
    e2v = e2v_table()
    a = np.random.default_rng(11).random(N_VERTICES)
    w = np.ones((N_EDGES, 1))
    out = np.zeros(N_EDGES)
    with pytest.raises(
        sc.ArgumentError, match=r"argument 'w' .*along E2VDim.*table 'e2v' of E2V numbers its slots"
    ):
        weighted_sum(a, sc.as_field((Edge, E2VDim), w, start={E2VDim: 1}), e2v, out)
    w2 = np.random.default_rng(12).random((N_EDGES - 2, 2))
    out = np.full(N_EDGES - 2, -7.0)
    weighted_sum(
        a,
        sc.as_field((Edge, E2VDim), w2, start={Edge: 1}),
        e2v,
        sc.as_field((Edge,), out, start={Edge: 1}),
    )
    np.testing.assert_allclose(out, (a[e2v[1:-1]] * w2).sum(axis=1), rtol=1e-15)


@sc.field_operator
def guarded(a: VField) -> VField:
    return sc.concat_where(Vertex >= ORIGIN, a, -1.0)


@sc.field_operator
def first_guarded(a: VField) -> EField:
    return guarded(a)(E2V[0])


@sc.program
def guarded_shift(a: VField, e2v: sc.Table[E2V], out: EField) -> None:
    first_guarded(a, out=out)


def test_a_branch_reached_through_a_table_reads_only_where_it_is_selected() -> None:
    """`concat_where(Vertex >= ORIGIN, a, -1.0)` read through E2V: the entries before the
    origin select the literal, so `a` from the origin on is read inside its range."""
    e2v = e2v_table()
    a = np.random.default_rng(13).random(N_VERTICES)
    out = np.full(N_EDGES, -7.0)
    guarded_shift(sc.as_field((Vertex,), a[ORIGIN:], start={Vertex: ORIGIN}), e2v, out)
    np.testing.assert_array_equal(out, np.where(e2v[:, 0] >= ORIGIN, a[e2v[:, 0]], -1.0))
    with pytest.raises(sc.ArgumentError, match=r"argument 'a', which spans \[3, 9\)"):
        guarded_shift(sc.as_field((Vertex,), a[ORIGIN + 1 :], start={Vertex: ORIGIN + 1}), e2v, out)


@sc.field_operator
def pair(a: VField, b: VField) -> tuple[VField, VField]:
    return a, 2.0 * b


@sc.field_operator
def first_of_pair(a: VField, b: VField) -> EField:
    return pair(a, b)[1](E2V[0])


@sc.program
def through_a_tuple(a: VField, b: VField, e2v: sc.Table[E2V], out: EField) -> None:
    first_of_pair(a, b, out=out)


def test_every_element_of_a_tuple_counts_as_read() -> None:
    """The element taken is `b`'s, but the tuple is read whole (an executor may compute
    every element): `a`'s range is held to the entries too."""
    e2v = e2v_table()
    a, b = np.random.default_rng(14).random((2, N_VERTICES))
    out = np.full(N_EDGES, -7.0)
    through_a_tuple(a, b, e2v, out)
    np.testing.assert_array_equal(out, 2.0 * b[e2v[:, 0]])
    with pytest.raises(sc.ArgumentError, match=r"argument 'a', which spans \[1, 9\)"):
        through_a_tuple(sc.as_field((Vertex,), a[1:], start={Vertex: 1}), b, e2v, out)


@sc.field_operator
def with_next(c: CField) -> CField:
    return c + c(C2C[0])


@sc.program
def plus_next(c: CField, c2c: sc.Table[C2C], out: CField) -> None:
    with_next(c, out=out)


def test_a_read_at_the_point_beside_one_through_c2c_still_narrows_the_domain() -> None:
    """`c + c(C2C[0])`: `c` is read at the point too, so its range narrows the domain
    (the read through the table alone does not: the test of `differences` above)."""
    c2c = c2c_from_one()
    c = np.random.default_rng(15).random(N_CELLS)
    out = np.full(N_CELLS, -7.0)
    plus_next(sc.as_field((Cell,), c[1:], start={Cell: 1}), c2c, out)
    expected = np.full(N_CELLS, -7.0)
    expected[1:] = c[1:] + c[c2c[1:, 0]]
    np.testing.assert_array_equal(out, expected)
