"""One rank's part of a partitioned mesh: the cells it owns, `layers` halo layers of cells
around them, and the edges and vertices of all those cells, numbered locally and with
local tables. Pure NumPy: no MPI here.

Halo layer k of cells holds the cells that share a vertex with layer k - 1 (layer 0: the
owned cells) and are in no earlier layer. An edge (vertex) is owned by the owner of the
cell E2C[e, 0] (V2C[v, 0]); a halo edge or vertex is in layer 1 + the lowest layer of the
local cells it belongs to (layer 1: of owned cells, owned by another rank). Local numbers
run owned first, then halo layer by layer, each in global order, as ICON orders them.

A table's row lists local numbers; a neighbour that is not on the local mesh is -1 (and
marked in `off_mesh`), as a missing neighbour at a bounded mesh's edge is. Any one step
through a table (C2E, E2C, V2C, C2E2C, E2C2V, ...) from an entity of layer k reaches
entities of layer k + 1 at most, so every entity within `layers - d` layers of the owned
ones has complete rows out to d steps: a stencil that reads d steps away is exact on the
owned entities with d layers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from stencilchain.meshes._arrays import BoolArray, IndexArray
from stencilchain.meshes.mesh import Mesh, MeshError

ENTITIES = ("cell", "edge", "vertex")
# Each table's (source, target) entities.
TABLE_ENTITIES = {
    "C2E": ("cell", "edge"), "E2C": ("edge", "cell"), "E2V": ("edge", "vertex"),
    "V2E": ("vertex", "edge"), "C2V": ("cell", "vertex"), "V2C": ("vertex", "cell"),
    "E2C2V": ("edge", "vertex"), "C2E2C": ("cell", "cell"),
}  # fmt: skip


@dataclasses.dataclass(frozen=True, eq=False)
class LocalMesh:
    """Rank `rank`'s mesh with `layers` halo layers of cells. Per entity ("cell", "edge",
    "vertex"): `global_index` (local number -> global number), `owned` (how many lead the
    numbering), `layer_starts` (where each layer starts: layer 0 the owned, then the halo
    layers, and the count at the end), `owner` (each local entity's rank). `tables` by
    name, in local numbers, -1 where `off_mesh` or where the global mesh has none."""

    rank: int
    layers: int
    global_index: Mapping[str, IndexArray]
    owned: Mapping[str, int]
    layer_starts: Mapping[str, tuple[int, ...]]
    owner: Mapping[str, IndexArray]
    tables: Mapping[str, IndexArray]
    off_mesh: Mapping[str, BoolArray]

    def size(self, entity: str) -> int:
        """Local entities of `entity`, owned and halo."""
        return len(self.global_index[entity])

    def halo_layer(self, entity: str, layer: int) -> slice:
        """The local numbers of `entity` in `layer` (0: owned)."""
        starts = self.layer_starts[entity]
        return slice(starts[layer], starts[layer + 1])


def entity_owners(mesh: Mesh, cell_owner: npt.NDArray[np.int64]) -> dict[str, IndexArray]:
    """The owner of every global cell, edge and vertex given the cells' owners."""
    return {
        "cell": np.asarray(cell_owner, dtype=np.int64),
        "edge": np.asarray(cell_owner[np.asarray(mesh.e2c[:, 0], dtype=np.int64)]),
        "vertex": np.asarray(cell_owner[np.asarray(mesh.v2c[:, 0], dtype=np.int64)]),
    }


def local_mesh(mesh: Mesh, cell_owner: npt.ArrayLike, rank: int, layers: int) -> LocalMesh:
    """Rank `rank`'s local mesh of `mesh` whose cells `cell_owner` gives to ranks, with
    `layers` (>= 0) halo layers of cells."""
    owner_of_cell = np.asarray(cell_owner, dtype=np.int64)
    if owner_of_cell.shape != (mesh.n_cells,):
        raise MeshError(f"cell_owner has shape {owner_of_cell.shape}, expected ({mesh.n_cells},)")
    if layers < 0:
        raise MeshError(f"local_mesh: layers must be >= 0, got {layers}")
    c2v = np.asarray(mesh.c2v, dtype=np.int64)
    v2c = np.asarray(mesh.v2c, dtype=np.int64)
    c2e = np.asarray(mesh.c2e, dtype=np.int64)
    level = np.full(mesh.n_cells, -1, dtype=np.int64)
    frontier = np.flatnonzero(owner_of_cell == rank)
    if frontier.size == 0:
        raise MeshError(f"local_mesh: rank {rank} owns no cell")
    level[frontier] = 0
    for layer in range(1, layers + 1):
        around = v2c[np.unique(c2v[frontier])].ravel()
        around = np.unique(around[around >= 0])
        frontier = around[level[around] < 0]
        level[frontier] = layer

    owners = entity_owners(mesh, owner_of_cell)
    cells = np.flatnonzero(level >= 0)
    keys = {"cell": level}
    counts = {"cell": mesh.n_cells, "edge": mesh.n_edges, "vertex": mesh.n_vertices}
    for entity, table in (("edge", c2e), ("vertex", c2v)):
        lowest = np.full(counts[entity], np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(lowest, table[cells].ravel(), np.repeat(level[cells], table.shape[1]))
        present = lowest < np.iinfo(np.int64).max
        keys[entity] = np.where(present, np.where(owners[entity] == rank, 0, lowest + 1), -1)

    global_index, layer_starts, local_owner, owned = {}, {}, {}, {}
    g2l = {}
    for entity in ENTITIES:
        key = keys[entity]
        local = np.flatnonzero(key >= 0)
        local = local[np.lexsort((local, key[local]))]
        global_index[entity] = local
        top = layers + (1 if entity != "cell" else 0)
        starts = np.searchsorted(key[local], np.arange(top + 2), side="left")
        layer_starts[entity] = tuple(int(s) for s in starts)
        owned[entity] = layer_starts[entity][1]
        local_owner[entity] = owners[entity][local]
        inverse = np.full(counts[entity], -1, dtype=np.int64)
        inverse[local] = np.arange(len(local), dtype=np.int64)
        g2l[entity] = inverse

    tables, off_mesh = {}, {}
    for name, (source, target) in TABLE_ENTITIES.items():
        rows = np.asarray(mesh.table(name), dtype=np.int64)[global_index[source]]
        mapped = np.where(rows >= 0, g2l[target][np.maximum(rows, 0)], -1)
        tables[name] = mapped.astype(mesh.index_dtype)
        off_mesh[name] = (rows >= 0) & (mapped < 0)
    return LocalMesh(rank, layers, global_index, owned, layer_starts, local_owner, tables, off_mesh)
