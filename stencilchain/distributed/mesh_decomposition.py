"""An unstructured mesh split over the ranks of a communicator, each rank with its local
mesh (owned cells, halo layers, their edges and vertices; `stencilchain.meshes.local`),
and the fields on it.

    dec = MeshDecomposition.create(meshes.torus(100, 100), layers=1)
    q = dec.allocate((Cell, K), sizes={K: 20})
    dec.scatter(q, initial)             # the global array, given on rank 0
    exchange(q)                         # halo cells from their owners
    run(q.data, dec.table("C2E2C"), ...)

Every rank holds the global mesh (its tables and geometry) while the decomposition is
made; the fields are local. A dimension is on an entity by its name: Cell, Edge and
Vertex (`entities=` maps others).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from stencilchain.distributed._mpi import mpi
from stencilchain.distributed.mesh_halo import METHODS, HaloPattern
from stencilchain.errors import DecompositionError
from stencilchain.meshes._arrays import IndexArray
from stencilchain.meshes.local import ENTITIES, LocalMesh, local_mesh
from stencilchain.meshes.mesh import TABLES, Mesh
from stencilchain.meshes.partition import Partition, partition
from stencilchain.program.dimensions import Dimension
from stencilchain.program.tables import frozen_table

_SCATTER_TAG = 74
_GATHER_TAG = 75
DEFAULT_ENTITIES = {"Cell": "cell", "Edge": "edge", "Vertex": "vertex"}


@dataclasses.dataclass(frozen=True, eq=False)
class MeshField:
    """This rank's part of a field over `dims` on a partitioned mesh: `data` holds every
    local entity of `entity` along axis `axis` (owned first, then the halo), or, for a
    field on no entity (a vertical profile), the same whole array on every rank.
    `interior` is the owned part. Made by `MeshDecomposition.allocate`."""

    decomposition: MeshDecomposition
    dims: tuple[Dimension, ...]
    entity: str | None
    axis: int
    data: np.ndarray[Any, Any]

    @property
    def interior(self) -> np.ndarray[Any, Any]:
        """The entities this rank owns (a view of `data`)."""
        if self.entity is None:
            return self.data
        owned = self.decomposition.local.owned[self.entity]
        return self.data[(slice(None),) * self.axis + (slice(0, owned),)]


@dataclasses.dataclass(frozen=True, eq=False)
class MeshDecomposition:
    """`mesh` split by `partition` over the ranks of `comm`; `local` is this rank's mesh
    with `local.layers` halo layers, `pattern` its halo exchange, sent by `method`
    ("neighbor" or "p2p"). Make one with `MeshDecomposition.create`."""

    comm: Any
    mesh: Mesh
    partition: Partition
    local: LocalMesh
    pattern: HaloPattern
    method: str
    entities: Mapping[str, str]
    everyone: tuple[tuple[Mapping[str, IndexArray], Mapping[str, int]], ...]
    _tables: Mapping[str, IndexArray]
    _filled: Mapping[str, IndexArray]

    @classmethod
    def create(
        cls,
        mesh: Mesh,
        *,
        layers: int,
        comm: Any = None,
        partitioner: str = "auto",
        method: str = "neighbor",
        entities: Mapping[str, str] | None = None,
    ) -> MeshDecomposition:
        """Split `mesh` over `comm` (default: COMM_WORLD), collectively, with `layers` halo
        layers of cells (`layers_of(program)` says how many a program needs).
        `partitioner`: "auto" (METIS if pymetis is importable, else a Hilbert curve),
        "hilbert" or "metis"; `method`: how exchanges travel, "neighbor"
        (Neighbor_alltoallv) or "p2p" (Isend/Irecv); `entities`: dimension name ->
        "cell", "edge" or "vertex" (default: Cell, Edge, Vertex)."""
        MPI = mpi("MeshDecomposition.create")
        comm = MPI.COMM_WORLD if comm is None else comm
        if method not in METHODS:
            raise DecompositionError(f"method {method!r} is not one of {', '.join(METHODS)}")
        names = dict(DEFAULT_ENTITIES if entities is None else entities)
        bad = {n: e for n, e in names.items() if e not in ENTITIES}
        if bad:
            raise DecompositionError(
                f"entities={bad}: each dimension maps to one of {', '.join(ENTITIES)}"
            )
        if not isinstance(layers, int) or layers < 0:
            raise DecompositionError(f"layers must be an int >= 0, got {layers!r}")
        split = partition(mesh, comm.Get_size(), method=partitioner)
        local = local_mesh(mesh, split.owner, comm.Get_rank(), layers)
        pattern = HaloPattern.create(comm, local)
        everyone = tuple(comm.allgather((dict(local.global_index), dict(local.owned))))
        tables = {name: frozen_table(local.tables[name]) for name in TABLES}
        filled = {
            name: frozen_table(np.where(local.off_mesh[name], 0, local.tables[name]))
            for name in TABLES
            if local.off_mesh[name].any()
        }
        return cls(comm, mesh, split, local, pattern, method, names, everyone, tables, filled)

    @property
    def rank(self) -> int:
        return int(self.comm.Get_rank())

    @property
    def ranks(self) -> int:
        return int(self.comm.Get_size())

    def entity_of(self, dim: Dimension) -> str | None:
        """The entity ("cell", "edge", "vertex") that `dim` numbers, or None."""
        return self.entities.get(dim.name)

    def table(self, name: str) -> IndexArray:
        """This rank's table `name` (C2E, E2C2V, ...) in local numbers, read-only, -1 where
        the neighbour is not on the local mesh: pass it for the program's table."""
        key = name.upper()
        if key not in self._tables:
            raise DecompositionError(f"no table {name!r}; a mesh has {', '.join(TABLES)}")
        return self._tables[key]

    def table_without_skips(self, name: str) -> IndexArray:
        """`table(name)` with the neighbours off the local mesh pointing at local entity 0,
        for a connectivity that allows no skip values: only halo entities have such rows,
        and what is computed there is never read by an owned entity (layers_of)."""
        return self._filled.get(name.upper(), self.table(name))

    def allocate(
        self,
        dims: Sequence[Dimension],
        dtype: npt.DTypeLike = np.float64,
        *,
        sizes: Mapping[Dimension, int] | None = None,
    ) -> MeshField:
        """A zeroed local field over `dims` (in array order): at most one entity
        dimension, sized by the local mesh; every other dimension's size in `sizes`."""
        dims = tuple(dims)
        sizes = dict(sizes or {})
        where = f"a field over ({', '.join(d.name for d in dims)})"
        on = [d for d in dims if self.entity_of(d) is not None]
        if len(on) > 1:
            raise DecompositionError(f"{where}: more than one mesh entity dimension")
        missing = [d.name for d in dims if d not in on and d not in sizes]
        if missing:
            raise DecompositionError(f"{where}: no size for {', '.join(missing)} (sizes=)")
        entity = self.entity_of(on[0]) if on else None
        shape = tuple(
            self.local.size(entity) if d in on and entity is not None else int(sizes[d])
            for d in dims
        )
        axis = dims.index(on[0]) if on else 0
        return MeshField(self, dims, entity, axis, np.zeros(shape, dtype=dtype))

    def scatter(self, field: MeshField, global_array: npt.ArrayLike | None, root: int = 0) -> None:
        """Fill every local entity of `field` (owned and halo) on every rank from
        `global_array`, over the whole mesh, given on `root` (ignored elsewhere)."""
        self._check_own(field, "scatter")
        if self.rank == root:
            array = np.asarray(global_array, dtype=field.data.dtype)
            expected = self._global_shape(field)
            if array.shape != expected:
                raise DecompositionError(
                    f"scatter: the global array has shape {array.shape}, the mesh {expected}"
                )
            requests = [
                self.comm.Isend(self._take(array, field, rank), dest=rank, tag=_SCATTER_TAG)
                for rank in range(self.ranks)
                if rank != root
            ]
            field.data[...] = self._take(array, field, root)
            mpi("scatter").Request.Waitall(requests)
        else:
            buffer = np.empty(field.data.shape, dtype=field.data.dtype)
            self.comm.Recv(buffer, source=root, tag=_SCATTER_TAG)
            field.data[...] = buffer

    def gather(self, field: MeshField, root: int = 0) -> np.ndarray[Any, Any] | None:
        """The owned entities of `field` on every rank as one global array on `root`
        (None elsewhere)."""
        self._check_own(field, "gather")
        if field.entity is None:
            return np.array(field.data) if self.rank == root else None
        if self.rank != root:
            self.comm.Send(np.ascontiguousarray(field.interior), dest=root, tag=_GATHER_TAG)
            return None
        result = np.empty(self._global_shape(field), dtype=field.data.dtype)
        moved = np.moveaxis(result, field.axis, 0)
        for rank in range(self.ranks):
            numbers, owned = self.everyone[rank]
            at = numbers[field.entity][: owned[field.entity]]
            if rank == root:
                part = np.asarray(field.interior)
            else:
                shape = list(field.data.shape)
                shape[field.axis] = len(at)
                part = np.empty(shape, dtype=field.data.dtype)
                self.comm.Recv(part, source=rank, tag=_GATHER_TAG)
            moved[at] = np.moveaxis(part, field.axis, 0)
        return result

    def _global_shape(self, field: MeshField) -> tuple[int, ...]:
        counts = {
            "cell": self.mesh.n_cells,
            "edge": self.mesh.n_edges,
            "vertex": self.mesh.n_vertices,
        }
        shape = list(field.data.shape)
        if field.entity is not None:
            shape[field.axis] = counts[field.entity]
        return tuple(shape)

    def _take(self, array: np.ndarray[Any, Any], field: MeshField, rank: int) -> Any:
        if field.entity is None:
            return np.ascontiguousarray(array)
        numbers, _ = self.everyone[rank]
        return np.ascontiguousarray(np.take(array, numbers[field.entity], axis=field.axis))

    def _check_own(self, field: MeshField, what: str) -> None:
        if not isinstance(field, MeshField) or field.decomposition is not self:
            raise DecompositionError(f"{what}: the field belongs to another decomposition")
