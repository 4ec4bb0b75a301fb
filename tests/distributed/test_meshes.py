"""Unstructured meshes on many ranks: partitions, local meshes with halo layers, the
exchange and programs with tables on 1, 2 and 4 MPI ranks (`mpiexec`, with a timeout),
and what a partitioned mesh refuses."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain import meshes
from stencilchain.examples import mesh_column, mesh_diffusion, mesh_model, nabla
from stencilchain.meshes.local import TABLE_ENTITIES, local_mesh
from stencilchain.meshes.partition import hilbert_index, partition

from ._launch import launch

MESH_RANKS = Path(__file__).with_name("mesh_ranks.py")
TOOLCHAINS = "run_embedded,run_gtfn_cpu,run_dace_cpu"


def comm_self() -> Any:
    """MPI.COMM_SELF; skips without the mpi extra (partitions and local meshes need none)."""
    return pytest.importorskip("mpi4py.MPI", reason="the mpi extra is not installed").COMM_SELF


def run_mesh_ranks(n: int, *args: str, cache: Path) -> str:
    comm_self()  # the ranks need mpi4py too
    output = launch(n, [str(MESH_RANKS), *args], cache=cache)
    done = sorted(int(rank) for rank in re.findall(rf"ok (\d+) {args[0]}", output))
    assert done == list(range(n)), output
    return output


# Partitions (no MPI) ---------------------------------------------------------------------


def _cut(mesh: meshes.Mesh, owner: np.ndarray) -> int:
    """The edge cut, counted edge by edge."""
    cut = 0
    for left, right in np.asarray(mesh.e2c):
        if right >= 0 and owner[left] != owner[right]:
            cut += 1
    return cut


@pytest.mark.parametrize(("parts", "best_cut"), [(2, 200), (4, 400)])
def test_a_hilbert_split_of_a_torus_is_balanced_with_a_small_cut(parts: int, best_cut: int) -> None:
    """100 x 100 quads (20,000 cells): equal parts, and a cut no longer than the seams of
    the straight split (each of 2 parts is a band with two seams of 100 edges)."""
    mesh = meshes.torus(100, 100)
    split = partition(mesh, parts, method="hilbert")
    assert split.method == "hilbert"
    assert np.array_equal(split.sizes, np.full(parts, 20000 // parts))
    assert split.imbalance == 0.0
    assert split.edge_cut == _cut(mesh, split.owner) == best_cut


def test_parts_of_uneven_size_differ_by_one_cell() -> None:
    mesh = meshes.rectangle(7, 5)
    split = partition(mesh, 3, method="hilbert")
    assert sorted(split.sizes.tolist()) == [23, 23, 24]
    assert split.imbalance == pytest.approx(24 / (70 / 3) - 1)
    assert split.edge_cut == _cut(mesh, split.owner)
    assert split.edge_cut < mesh.n_edges // 4  # runs of the curve, not scattered cells


def test_the_hilbert_curve_visits_every_point_once_by_unit_steps() -> None:
    x, y = (a.ravel() for a in np.meshgrid(np.arange(8), np.arange(8)))
    d = hilbert_index(x.astype(np.int64), y.astype(np.int64), 3)
    order = np.argsort(d)
    assert sorted(d.tolist()) == list(range(64))
    steps = np.abs(np.diff(x[order])) + np.abs(np.diff(y[order]))
    assert (steps == 1).all()


def test_auto_says_which_partitioner_it_used() -> None:
    split = partition(meshes.torus(6, 5), 2)
    try:
        import pymetis  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        assert split.method == "hilbert"
        with pytest.raises(meshes.MeshError, match="needs pymetis"):
            partition(meshes.torus(6, 5), 2, method="metis")
    else:
        assert split.method == "metis"
        assert split.edge_cut == _cut(meshes.torus(6, 5), split.owner)


@pytest.mark.parametrize(
    ("parts", "method", "message"),
    [(0, "hilbert", "parts must be a positive int"), (2, "scotch", "is not one of"),
     (10**6, "hilbert", "every rank needs a cell")],
)  # fmt: skip
def test_bad_partitions_are_refused(parts: int, method: str, message: str) -> None:
    with pytest.raises(meshes.MeshError, match=message):
        partition(meshes.torus(4, 4), parts, method=method)


# Local meshes (no MPI) -------------------------------------------------------------------


@pytest.mark.parametrize("mesh", [meshes.torus(12, 10), meshes.rectangle(11, 9)], ids=repr)
@pytest.mark.parametrize("layers", [0, 1, 2])
def test_local_meshes_number_owned_first_then_layer_by_layer(
    mesh: meshes.Mesh, layers: int
) -> None:
    """Owned entities lead, in global order; halo cells of layer k share a vertex with
    layer k - 1; every table row of an entity inside the outer layer is the global row
    renumbered; together the ranks own every entity exactly once."""
    split = partition(mesh, 4, method="hilbert")
    counts = {"cell": mesh.n_cells, "edge": mesh.n_edges, "vertex": mesh.n_vertices}
    owned_by = {e: np.zeros(n, dtype=int) for e, n in counts.items()}
    c2v = np.asarray(mesh.c2v)
    for rank in range(4):
        local = local_mesh(mesh, split.owner, rank, layers)
        cells = local.global_index["cell"]
        assert np.array_equal(cells[: local.owned["cell"]], np.flatnonzero(split.owner == rank))
        for entity, numbers in local.global_index.items():
            owned_by[entity][numbers[: local.owned[entity]]] += 1
            assert (local.owner[entity][: local.owned[entity]] == rank).all()
            assert (local.owner[entity][local.owned[entity] :] != rank).all()
            for layer in range(len(local.layer_starts[entity]) - 1):
                part = numbers[local.halo_layer(entity, layer)]
                assert (np.diff(part) > 0).all(), (entity, layer)  # global order inside
        for layer in range(1, layers + 1):
            inner = set(c2v[cells[local.halo_layer("cell", layer - 1)]].ravel().tolist())
            for cell in cells[local.halo_layer("cell", layer)]:
                assert inner & set(c2v[cell].tolist()), (rank, layer, cell)
        for name, (source, target) in TABLE_ENTITIES.items():
            table = local.tables[name]
            rows = np.asarray(mesh.table(name))[local.global_index[source]]
            inner_rows = local.layer_starts[source][max(layers, 1)] if layers else None
            mapped = np.where(table >= 0, local.global_index[target][table], -1)
            complete = ~local.off_mesh[name]
            assert np.array_equal(mapped[complete], rows[complete]), name
            if layers and inner_rows is not None:
                assert complete[: local.layer_starts[source][layers]].all(), name
    for entity, times in owned_by.items():
        assert (times == 1).all(), entity


def test_one_rank_has_the_global_mesh() -> None:
    mesh = meshes.torus(5, 4)
    local = local_mesh(mesh, np.zeros(mesh.n_cells, dtype=np.int64), 0, 2)
    for name in TABLE_ENTITIES:
        assert np.array_equal(local.tables[name], mesh.table(name))
    assert local.owned == {"cell": 40, "edge": 60, "vertex": 20}


# Layers and stages, refusals (one rank, in this process) ---------------------------------


@pytest.fixture(scope="module")
def torus_dec() -> Iterator[object]:
    from stencilchain.distributed import MeshDecomposition

    yield MeshDecomposition.create(meshes.torus(6, 5), layers=2, comm=comm_self())


def test_layers_follow_the_table_steps_of_the_reads() -> None:
    from stencilchain.distributed import layers_of

    assert layers_of(mesh_column.PROGRAM) == 1  # C2E
    assert layers_of(nabla.PROGRAM) == 2  # E2V into a temporary, V2E of it
    assert layers_of(mesh_diffusion.PROGRAM) == 4  # four C2E2C steps through temporaries
    assert layers_of(mesh_model.PROGRAM) == 1  # C2E2C, then the columns in place


Cell = mesh_model.Cell
CellF = sc.Field[[Cell], sc.float64]
C2E2C = mesh_model.C2E2C
C2E2CDim = mesh_model.C2E2CDim


@sc.field_operator
def smooth(u: CellF) -> CellF:
    return sc.neighbor_sum(u(C2E2C), axis=C2E2CDim) / 3.0


@sc.program
def two_stages(u: CellF, c2e2c: sc.Table[C2E2C], v: CellF, w: CellF) -> None:
    smooth(u, out=v)
    smooth(v, out=w)  # reads v one step away: v's halo must come from its owners first


def test_a_written_field_read_one_step_away_starts_a_stage(torus_dec: object) -> None:
    from stencilchain import backends
    from stencilchain.distributed import DistributedProgram, MeshDecomposition, layers_of

    assert isinstance(torus_dec, MeshDecomposition)
    run = DistributedProgram(two_stages, backends.run_embedded, torus_dec)
    assert [(s.exchanged, s.written, s.layers) for s in run.stages] == [
        (("u",), ("v",), 1),
        (("v",), ("w",), 1),
    ]
    assert layers_of(two_stages) == 1
    mesh = torus_dec.mesh
    u = np.random.default_rng(1).random(mesh.n_cells)
    fields = [torus_dec.allocate((Cell,)) for _ in range(3)]
    torus_dec.scatter(fields[0], u)
    run(fields[0], torus_dec.table("C2E2C"), fields[1], fields[2])
    c2e2c = np.asarray(mesh.c2e2c)
    expected = np.take(np.take(u, c2e2c).sum(axis=1) / 3.0, c2e2c).sum(axis=1) / 3.0
    got = torus_dec.gather(fields[2])
    assert got is not None
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    assert run.exchanges == 2


@sc.field_operator
def numbered(u: CellF) -> CellF:
    return u + sc.astype(sc.index(Cell), sc.float64)


@sc.program
def uses_index(u: CellF, c2e2c: sc.Table[C2E2C], out: CellF) -> None:
    numbered(u, out=out)


@sc.field_operator
def first_cell_apart(u: CellF) -> CellF:
    return sc.concat_where(Cell == 0, 2.0 * u, u)


@sc.program
def cell_zero(u: CellF, out: CellF) -> None:
    first_cell_apart(u, out=out)


@sc.program
def part_of_the_cells(u: CellF, c2e2c: sc.Table[C2E2C], out: CellF) -> None:
    smooth(u, out=out, domain={Cell: (2, 10)})


@sc.field_operator
def cell_offset(u: CellF) -> CellF:
    return u(Cell + 1)


@sc.program
def shifts_along_cells(u: CellF, out: CellF) -> None:
    cell_offset(u, out=out, domain={Cell: (0, -1)})


V2X = sc.Dimension("V2XDim", kind=sc.LOCAL)
V2X_TABLE = sc.Connectivity("V2X", source=Cell, target=(Cell, V2X), max_neighbors=2)


@sc.field_operator
def pairs(u: CellF) -> CellF:
    return sc.neighbor_sum(u(V2X_TABLE), axis=V2X)


@sc.program
def own_table(u: CellF, v2x: sc.Table[V2X_TABLE], out: CellF) -> None:
    pairs(u, out=out)


@pytest.mark.parametrize(
    ("program", "message"),
    [
        (uses_index, "numbered uses index(Cell)"),
        (cell_zero, "first_cell_apart uses concat_where along Cell"),
        (part_of_the_cells, "the call of smooth runs over part of Cell"),
        (shifts_along_cells, "cell_offset shifts along Cell by an offset"),
        (own_table, "its table v2x is of connectivity V2X, which is none of the mesh's"),
    ],
)
def test_what_depends_on_global_positions_is_refused(
    program: sc.Program, message: str, torus_dec: object
) -> None:
    from stencilchain import backends
    from stencilchain.distributed import DistributedProgram

    with pytest.raises(sc.DecompositionError, match=re.escape(message)):
        DistributedProgram(program, backends.run_embedded, torus_dec)  # type: ignore[arg-type]


def test_a_program_with_tables_on_a_grid_points_to_meshes() -> None:
    from stencilchain import backends
    from stencilchain.distributed import Decomposition, DistributedProgram

    grid = Decomposition.create({Cell: 12}, comm=comm_self(), split=[Cell])
    with pytest.raises(sc.DecompositionError, match="runs on a partitioned mesh"):
        DistributedProgram(two_stages, backends.run_embedded, grid)


def test_too_few_layers_and_foreign_tables_are_refused() -> None:
    from stencilchain import backends
    from stencilchain.distributed import DistributedProgram, MeshDecomposition

    mesh = meshes.torus(6, 5)
    thin = MeshDecomposition.create(mesh, layers=1, comm=comm_self())
    with pytest.raises(sc.DecompositionError, match="create the decomposition with layers=4"):
        DistributedProgram(mesh_diffusion.PROGRAM, backends.run_embedded, thin)
    run = DistributedProgram(two_stages, backends.run_embedded, thin)
    fields = [thin.allocate((Cell,)) for _ in range(3)]
    with pytest.raises(sc.DecompositionError, match=re.escape("decomposition.table('C2E2C')")):
        run(fields[0], np.asarray(mesh.c2e2c), fields[1], fields[2])
    with pytest.raises(sc.DecompositionError, match="not a MeshField of this decomposition"):
        run(np.zeros(mesh.n_cells), thin.table("C2E2C"), fields[1], fields[2])
    with pytest.raises(sc.DecompositionError, match="no size for K"):
        thin.allocate((Cell, mesh_model.K))


# On 1, 2 and 4 ranks ---------------------------------------------------------------------


@pytest.mark.parametrize("ranks", [1, 2, 4])
@pytest.mark.parametrize("method", ["neighbor", "p2p"])
def test_halo_exchange_on_cells_edges_and_vertices(ranks: int, method: str, tmp_path: Path) -> None:
    if ranks == 4 and method == "p2p":
        pytest.skip("4 ranks once (neighbor) keeps the 2-core machine's run short")
    run_mesh_ranks(ranks, "halos", method, cache=tmp_path)


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the launches below: the 2- and 4-rank jobs load what the first built."""
    return tmp_path_factory.mktemp("mesh-cache")


@pytest.fixture(scope="module")
def checksums() -> dict[int, list[str]]:
    return {}


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_mesh_programs_on_ranks_equal_one_process_bit_for_bit(
    ranks: int, shared_cache: Path, checksums: dict[int, list[str]]
) -> None:
    """nabla (torus and rectangle), mesh_diffusion, mesh_column and the mesh model's step
    on embedded, GTFN and DaCe: gathered, bitwise the one-process run of the same
    toolchain; the model's checksums on 1, 2 and 4 ranks are one per toolchain."""
    pytest.importorskip("dace")
    output = run_mesh_ranks(ranks, "programs", TOOLCHAINS, cache=shared_cache)
    lines = sorted(re.findall(r"model (\S+) checksum (\S+) sum (\S+)", output))
    assert [name for name, _, _ in lines] == sorted(TOOLCHAINS.split(",")), output
    checksums[ranks] = [f"{name} {digest} {total}" for name, digest, total in lines]
    for other in checksums.values():
        assert other == checksums[ranks], checksums
