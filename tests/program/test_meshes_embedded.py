"""Unstructured meshes on the embedded executor: neighbour reads through connectivities,
reductions over local dimensions, tables as checked program arguments; against NumPy
references written with plain loops over the tables."""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import ir

from ._support import assert_error_at

Cell, Edge, Vertex = sc.Dimension("Cell"), sc.Dimension("Edge"), sc.Dimension("Vertex")
K = sc.Dimension("K", kind=sc.VERTICAL)
C2EDim = sc.Dimension("C2EDim", kind=sc.LOCAL)
E2VDim = sc.Dimension("E2VDim", kind=sc.LOCAL)
C2E = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=3, skip_values=True)
E2V = sc.Connectivity("E2V", source=Vertex, target=(Edge, E2VDim), max_neighbors=2)

CellF = sc.Field[[Cell], sc.float64]
EdgeF = sc.Field[[Edge], sc.float64]
VertexF = sc.Field[[Vertex], sc.float64]
CellK = sc.Field[[Cell, K], sc.float64]
EdgeK = sc.Field[[Edge, K], sc.float64]
Weights = sc.Field[[Cell, C2EDim], sc.float64]
HERE = os.path.abspath(__file__)

N_CELLS, N_EDGES, N_VERTICES, N_K = 7, 11, 6, 4


def tables(rng: np.random.Generator, dtype: type = np.int32) -> tuple[np.ndarray, np.ndarray]:
    c2e: np.ndarray = rng.integers(0, N_EDGES, size=(N_CELLS, 3)).astype(dtype)
    c2e[1, 2] = -1  # a cell with a missing neighbour
    c2e[4, :] = -1  # a cell with none at all
    e2v: np.ndarray = rng.integers(0, N_VERTICES, size=(N_EDGES, 2)).astype(dtype)
    return c2e, e2v


assert_at = functools.partial(assert_error_at, path=HERE)


# --- neighbour reads and reductions ------------------------------------------------------


@sc.field_operator
def weighted_sum(e: EdgeF, w: Weights) -> CellF:
    return sc.neighbor_sum(w * e(C2E), axis=C2EDim)


@sc.field_operator
def extremes(e: EdgeF) -> tuple[CellF, CellF]:
    return sc.max_over(e(C2E), axis=C2EDim), sc.min_over(e(C2E), axis=C2EDim)


@sc.field_operator
def second_edge(e: EdgeF) -> CellF:
    return e(C2E[1])


@sc.field_operator
def vertex_average(v: VertexF) -> CellF:
    at_edges = sc.neighbor_sum(v(E2V), axis=E2VDim)  # over (Edge,)
    chained = sc.neighbor_sum(v(E2V)(C2E), axis=E2VDim)  # over (Cell, C2EDim)
    return sc.neighbor_sum(chained, axis=C2EDim) + 0.0 * sc.neighbor_sum(at_edges(C2E), axis=C2EDim)


@sc.program
def reductions(
    e: EdgeF, v: VertexF, w: Weights, c2e: sc.Table[C2E], e2v: sc.Table[E2V],
    total: CellF, high: CellF, low: CellF, second: CellF, average: CellF,
) -> None:  # fmt: skip
    weighted_sum(e, w, out=total)
    extremes(e, out=(high, low))
    second_edge(e, out=second)
    vertex_average(v, out=average)


def test_reads_and_reductions_skip_missing_neighbours() -> None:
    rng = np.random.default_rng(1)
    c2e, e2v = tables(rng)
    e, v = rng.standard_normal(N_EDGES), rng.standard_normal(N_VERTICES)
    w = rng.standard_normal((N_CELLS, 3))
    outs = [np.full(N_CELLS, np.nan) for _ in range(5)]
    reductions(e, v, w, c2e, e2v, *outs)
    total, high, low, second, average = outs
    for c in range(N_CELLS):
        present = [n for n in range(3) if c2e[c, n] >= 0]
        assert total[c] == pytest.approx(sum(w[c, n] * e[c2e[c, n]] for n in present), abs=1e-14)
        assert high[c] == max((e[c2e[c, n]] for n in present), default=-np.inf)
        assert low[c] == min((e[c2e[c, n]] for n in present), default=np.inf)
        assert second[c] == (e[c2e[c, 1]] if c2e[c, 1] >= 0 else 0.0)  # missing reads 0
        expected = sum(v[e2v[c2e[c, n], m]] for n in present for m in range(2))
        assert average[c] == pytest.approx(expected, abs=1e-14)


@sc.field_operator
def upper_flux(f: EdgeK) -> CellK:
    return sc.neighbor_sum(f(K + 1)(C2E) - f(C2E), axis=C2EDim)


@sc.scan_operator(axis=K, init=0.0)
def column_sum(total, x: CellK):  # type: ignore[no-untyped-def]
    return total + x


@sc.program
def mesh_column(f: EdgeK, c2e: sc.Table[C2E], flux: CellK, integral: CellK) -> None:
    upper_flux(f, out=flux)
    column_sum(flux, out=integral, domain={K: (0, -1)})


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("layout", ["C", "F"])
def test_mesh_columns_with_vertical_shifts_and_scans(dtype: type, layout: str) -> None:
    rng = np.random.default_rng(2)
    c2e, _ = tables(rng, dtype)
    f = np.asarray(rng.standard_normal((N_EDGES, N_K)), order=layout)
    flux = np.asarray(np.full((N_CELLS, N_K), np.nan), order=layout)
    integral = np.asarray(np.full((N_CELLS, N_K), np.nan), order=layout)
    program = mesh_column if dtype is np.int32 else mesh_column64
    program(f, c2e, flux, integral)
    expected = np.zeros((N_CELLS, N_K - 1))
    for c in range(N_CELLS):
        for n in range(3):
            if c2e[c, n] >= 0:
                expected[c] += f[c2e[c, n], 1:] - f[c2e[c, n], :-1]
    np.testing.assert_allclose(flux[:, :-1], expected, atol=1e-14)
    assert np.isnan(flux[:, -1]).all()  # the inferred domain stops one level below the top
    np.testing.assert_allclose(integral[:, :-1], np.cumsum(expected, axis=1), atol=1e-13)


@sc.program
def mesh_column64(f: EdgeK, c2e: sc.Table[C2E, sc.int64], flux: CellK, integral: CellK) -> None:
    upper_flux(f, out=flux)
    column_sum(flux, out=integral, domain={K: (0, -1)})


@sc.field_operator
def edge_mean(v: VertexF) -> EdgeF:
    return 0.5 * sc.neighbor_sum(v(E2V), axis=E2VDim)


@sc.field_operator
def cell_sum(e: EdgeF) -> CellF:
    return sc.neighbor_sum(e(C2E), axis=C2EDim)


@sc.program
def through_a_temporary(
    v: VertexF, c2e: sc.Table[C2E], e2v: sc.Table[E2V], e: EdgeF, out: CellF
) -> None:
    cell_sum(edge_mean(v), out=out)  # an edge temporary over every edge, then gathered


def test_a_temporary_over_edges_is_gathered() -> None:
    rng = np.random.default_rng(3)
    c2e, e2v = tables(rng)
    v = rng.standard_normal(N_VERTICES)
    out = np.zeros(N_CELLS)
    through_a_temporary(v, c2e, e2v, np.zeros(N_EDGES), out)
    means = 0.5 * (v[e2v[:, 0]] + v[e2v[:, 1]])
    expected = [sum(means[c2e[c, n]] for n in range(3) if c2e[c, n] >= 0) for c in range(N_CELLS)]
    np.testing.assert_allclose(out, expected, atol=1e-14)


def test_the_ir_prints_neighbour_reads() -> None:
    text = str(reductions.ir)
    assert "neighbor_sum((w * e(C2E)), axis=C2EDim)" in text, text
    assert "e(C2E[1])" in text and "max_over(e(C2E), axis=C2EDim)" in text
    assert "c2e: Table[C2E, int32]" in text


# --- the tables as arguments ----------------------------------------------------------------


def run_total(c2e: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(4)
    _, e2v = tables(rng)
    e, v, w = np.ones(N_EDGES), np.ones(N_VERTICES), np.ones((N_CELLS, 3))
    outs = [np.zeros(N_CELLS) for _ in range(5)]
    reductions(e, v, w, c2e, e2v, *outs)
    return outs[0]


def test_an_entry_out_of_range_is_refused_before_anything_is_written() -> None:
    c2e, _ = tables(np.random.default_rng(5))
    c2e[3, 1] = N_EDGES
    rng = np.random.default_rng(4)
    _, e2v = tables(rng)
    outs = [np.full(N_CELLS, 7.0) for _ in range(5)]
    with pytest.raises(sc.ArgumentError) as info:
        reductions(np.ones(N_EDGES), np.ones(N_VERTICES), np.ones((N_CELLS, 3)), c2e, e2v, *outs)
    message = str(info.value)
    assert "'c2e'" in message and "C2E" in message and "(3, 1)" in message, message
    assert f"holds {N_EDGES}" in message and f"[-1, {N_EDGES})" in message
    assert all((o == 7.0).all() for o in outs)


def test_minus_one_is_refused_without_skip_values() -> None:
    c2e, e2v = tables(np.random.default_rng(6))
    e2v[5, 0] = -1
    with pytest.raises(sc.ArgumentError, match=r"E2V holds -1 at \(5, 0\).*without skip values"):
        reductions(
            np.ones(N_EDGES), np.ones(N_VERTICES), np.ones((N_CELLS, 3)), c2e, e2v,
            *(np.zeros(N_CELLS) for _ in range(5)),
        )  # fmt: skip


@pytest.mark.parametrize(
    ("table", "words"),
    [
        (np.zeros((N_CELLS, 3), dtype=np.int64), ["dtype int32", "int64"]),
        (np.zeros((N_CELLS, 4), dtype=np.int32), ["4 columns", "max_neighbors=3"]),
        (np.zeros(N_CELLS, dtype=np.int32), ["2 dimension(s)"]),
        (np.zeros((N_CELLS - 1, 3), dtype=np.int32), ["size 6 along Cell"]),
    ],
)
def test_a_table_of_the_wrong_kind_is_refused(table: np.ndarray, words: list[str]) -> None:
    with pytest.raises(sc.ArgumentError) as info:
        run_total(table)
    for word in words:
        assert word in str(info.value), info.value


def test_a_table_with_more_rows_than_the_fields_have_cells_runs_over_the_fields() -> None:
    """The fields over part of the mesh (their own ranges, docs/dsl.md): the rows after
    the fields' last cell are not read."""
    c2e, _ = tables(np.random.default_rng(4))
    longer = np.concatenate([c2e, np.full((2, 3), -1, np.int32)])
    np.testing.assert_array_equal(run_total(longer), run_total(c2e))


def test_a_table_changed_between_calls_is_checked_again() -> None:
    c2e, _ = tables(np.random.default_rng(7))
    run_total(c2e)
    c2e[0, 0] = -2
    with pytest.raises(sc.ArgumentError, match="holds -2"):
        run_total(c2e)


def test_a_frozen_table_cannot_change_and_records_its_range() -> None:
    from stencilchain.program.tables import recorded_range

    c2e, _ = tables(np.random.default_rng(8))
    frozen = sc.frozen_table(c2e)
    assert not frozen.flags.writeable
    with pytest.raises(ValueError):
        frozen.flags.writeable = True
    np.testing.assert_array_equal(run_total(frozen), run_total(c2e))
    assert recorded_range(frozen) == (int(c2e.min()), int(c2e.max()))
    assert recorded_range(c2e) is None  # a writeable table records nothing: read every call


# --- misuse, at the user's line -------------------------------------------------------------


def test_a_reduction_over_a_dimension_that_is_not_local() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def bad(f: CellK) -> CellF:
            return sc.neighbor_sum(f, axis=K)  # L:not-local

    assert_at(info.value, "not-local", "axis= must be a local dimension", "K")


def test_a_reduction_of_a_field_without_the_local_dimension() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def bad(f: CellK) -> CellK:
            return sc.neighbor_sum(f, axis=C2EDim)  # L:no-local

    assert_at(info.value, "no-local", "not over C2EDim")


def test_a_shift_by_a_connectivity_from_another_dimension() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def bad(f: CellF) -> CellF:
            return f(C2E[0])  # L:wrong-source

    assert_at(info.value, "wrong-source", "C2E reads Edge entities", "Cell")


def test_a_shift_along_a_local_dimension() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def bad(w: Weights) -> Weights:
            return w(C2EDim + 1)  # L:local-shift

    assert_at(info.value, "local-shift", "local dimension C2EDim")


def test_a_connectivity_mixed_with_offsets() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def bad(f: EdgeK) -> CellK:
            return f(C2E[0], K + 1)  # L:mixed

    assert_at(info.value, "mixed", "one at a time")


def test_a_program_without_the_table() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def no_table(e: EdgeF, out: CellF) -> None:
            cell_sum(e, out=out)  # L:no-table

    assert "no table for it" in str(info.value) and "sc.Table[C2E]" in str(info.value)


C2V = sc.Connectivity("C2V", source=Vertex, target=(Cell, C2EDim), max_neighbors=3)


def test_two_connectivities_over_one_local_dimension() -> None:
    with pytest.raises(sc.DefinitionError, match="both number their neighbour slots with C2EDim"):

        @sc.program
        def shared(
            e: EdgeF, v: VertexF, c2e: sc.Table[C2E], c2v: sc.Table[C2V], out: CellF
        ) -> None:
            cell_sum(e, out=out)


def test_a_shift_along_the_source_before_a_neighbour_read() -> None:
    @sc.field_operator
    def shifted(e: EdgeF) -> CellF:
        return e(Edge + 1)(C2E[0])

    with pytest.raises(sc.DefinitionError, match="no order to shift along"):

        @sc.program
        def uses(e: EdgeF, c2e: sc.Table[C2E], out: CellF) -> None:
            shifted(e, out=out)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: sc.Connectivity("C2E", source=Edge, target=(Cell, Edge), max_neighbors=3), ["kind=sc.LOCAL"]),
        (lambda: sc.Connectivity("C2E", source=C2EDim, target=(Cell, C2EDim), max_neighbors=3), ["source="]),
        (lambda: sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=0), ["max_neighbors="]),
        (lambda: C2E[3], ["[0, 3)"]),
    ],
)  # fmt: skip
def test_bad_declarations(make: object, words: list[str]) -> None:
    with pytest.raises(sc.DefinitionError) as info:
        make()  # type: ignore[operator]
    for word in words:
        assert word in str(info.value), info.value


def test_the_table_type_is_a_field_of_its_connectivity() -> None:
    t = sc.Table[C2E, sc.int64]
    assert isinstance(t, ir.TableType) and t.dims == (Cell, C2EDim) and t.dtype == sc.int64
    with pytest.raises(TypeError, match="int32 or int64"):
        sc.Table[C2E, sc.float64]


# --- on the meshes of stencilchain.meshes -------------------------------------------------

C2E2CDim = sc.Dimension("C2E2C", kind=sc.LOCAL)
C2E2C = sc.Connectivity(
    "C2E2C", source=Cell, target=(Cell, C2E2CDim), max_neighbors=3, skip_values=True
)


@sc.field_operator
def diffused(u: CellF, nu: sc.float64) -> CellF:
    return u + nu * sc.neighbor_sum(u(C2E2C) - u, axis=C2E2CDim)


@sc.program
def diffusion_step(u: CellF, c2e2c: sc.Table[C2E2C], nu: sc.float64, out: CellF) -> None:
    diffused(u, nu, out=out)


@pytest.mark.parametrize("kind", ["torus", "rectangle"])
def test_diffusion_through_cell_neighbours_conserves_the_integral(kind: str) -> None:
    from stencilchain import meshes

    mesh = meshes.torus(9, 7) if kind == "torus" else meshes.rectangle(9, 7)
    u = np.random.default_rng(9).random(mesh.n_cells)
    total = u.sum()
    reference = u.copy()
    table = mesh.c2e2c
    for _ in range(5):
        new = np.empty_like(u)
        diffusion_step(u, table, 0.1, new)
        present = table >= 0
        neighbours = np.where(present, reference[np.where(present, table, 0)], 0.0)
        laplacian = (np.where(present, neighbours - reference[:, None], 0.0)).sum(axis=1)
        reference = reference + 0.1 * laplacian
        np.testing.assert_allclose(new, reference, rtol=1e-14, atol=1e-15)
        u = new
    assert u.sum() == pytest.approx(total, rel=1e-13)
    if kind == "rectangle":
        assert (table == -1).any()  # missing neighbours were skipped
