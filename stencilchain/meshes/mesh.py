"""The `Mesh` value: counts, neighbour tables and geometry of a triangle mesh, immutable.

Build one with `torus`, `rectangle`, `read_mesh` or `Mesh.from_tables`; the tables and
quantities are described in the `stencilchain.meshes` docstring.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from stencilchain.meshes import _validation
from stencilchain.meshes._arrays import FloatArray, IndexArray
from stencilchain.meshes._geometry import geometry
from stencilchain.meshes._validation import MeshError
from stencilchain.program.tables import frozen_table

__all__ = ["TABLES", "Mesh", "MeshError", "resolve_index_dtype"]

TABLES = ("C2E", "E2C", "E2V", "V2E", "C2V", "V2C", "E2C2V", "C2E2C")
_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def resolve_index_dtype(dtype: npt.DTypeLike) -> np.dtype[Any]:
    """np.int32 or np.int64 (or their names), as a dtype; anything else is an error."""
    try:
        resolved = np.dtype(dtype)
    except TypeError:
        resolved = None
    if resolved not in _INDEX_DTYPES:
        raise ValueError(f"index_dtype must be np.int32 or np.int64, got {dtype!r}")
    return resolved


def _read_only(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """An immutable copy (`sc.frozen_table`: backed by bytes, so nothing can make it
    writeable again; a table's range of entries recorded when it is made, so that a call
    checks it with two comparisons)."""
    frozen: npt.NDArray[Any] = frozen_table(array)
    return frozen


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Mesh:
    """A triangle mesh: tables (int32 or int64, -1 for a missing neighbour) and float64
    geometry, all read-only. `period` is (Lx, Ly) on a torus, None on a bounded mesh."""

    name: str
    period: tuple[float, float] | None
    vertex_coords: FloatArray  # (vertices, 2)
    c2e: IndexArray
    e2c: IndexArray
    e2v: IndexArray
    v2e: IndexArray
    c2v: IndexArray
    v2c: IndexArray
    e2c2v: IndexArray
    c2e2c: IndexArray
    cell_centres: FloatArray  # (cells, 2), centroids
    cell_areas: FloatArray  # (cells,)
    edge_centres: FloatArray  # (edges, 2), midpoints
    edge_lengths: FloatArray  # (edges,)
    edge_tangents: FloatArray  # (edges, 2), unit, from E2V[e, 0] to E2V[e, 1]
    edge_normals: FloatArray  # (edges, 2), unit, from E2C[e, 0] to E2C[e, 1]
    dual_edge_lengths: FloatArray  # (edges,), the median-dual face's length
    dual_normals: FloatArray  # (edges, 2), unit, the dual face's, from E2V[e, 0] to E2V[e, 1]
    dual_areas: FloatArray  # (vertices,), the median-dual cell's area
    c2e_signs: FloatArray  # (cells, 3), +1.0 where edge_normals points out of the cell
    v2e_signs: FloatArray  # (vertices, V2E columns), +1.0 / -1.0 for dual_normals, 0.0 padding

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, np.ndarray):
                object.__setattr__(self, field.name, _read_only(value))

    @classmethod
    def from_tables(
        cls,
        tables: Mapping[str, npt.ArrayLike],
        vertex_coords: npt.ArrayLike,
        *,
        period: tuple[float, float] | None = None,
        name: str = "mesh",
        index_dtype: npt.DTypeLike = np.int32,
        validate: bool = True,
    ) -> Mesh:
        """A mesh from its eight tables (by name, see TABLES) and vertex coordinates
        (vertices, 2); the geometry is computed. `validate` checks the tables first and
        raises a MeshError naming the table and its first bad row."""
        dtype = resolve_index_dtype(index_dtype)
        coords = np.array(vertex_coords, dtype=np.float64)
        if coords.ndim != 2 or coords.shape[1] != 2:
            raise MeshError(f"vertex_coords has shape {coords.shape}, expected (vertices, 2)")
        if period is not None:
            period = (float(period[0]), float(period[1]))
            if not (period[0] > 0 and period[1] > 0):
                raise MeshError(f"period must be two positive lengths (Lx, Ly), got {period}")
        arrays = {n: np.asarray(tables[n]) for n in TABLES if n in tables}
        unknown = sorted(set(tables) - set(TABLES))
        if unknown:
            raise MeshError(f"unknown tables {unknown}; a mesh has {', '.join(TABLES)}")
        counts = {
            "cell": len(arrays["C2V"]) if "C2V" in arrays else 0,
            "edge": len(arrays["E2V"]) if "E2V" in arrays else 0,
            "vertex": len(coords),
        }
        if validate:
            _validation.check_shapes(arrays, counts)
            if not np.all(np.isfinite(coords)):
                bad = np.flatnonzero(~np.isfinite(coords).all(axis=1))[0]
                raise MeshError(f"vertex_coords row {bad} is {coords[bad].tolist()}: not finite")
        wide = {n: np.asarray(a, dtype=np.int64) for n, a in arrays.items()}
        if validate:
            _validation.check_tables(wide, counts)
        if dtype == np.int32 and max(counts.values()) > np.iinfo(np.int32).max:
            raise MeshError(f"{counts} entities do not fit int32 indices; use np.int64")
        quantities = geometry(wide, coords, period)
        if validate:
            _validation.check_orientation(wide["C2V"], quantities["cell_areas"])
        fields: dict[str, Any] = {n.lower(): a.astype(dtype, copy=False) for n, a in wide.items()}
        fields.update(quantities)
        return cls(name=name, period=period, vertex_coords=coords, **fields)

    @property
    def n_cells(self) -> int:
        return len(self.c2v)

    @property
    def n_edges(self) -> int:
        return len(self.e2v)

    @property
    def n_vertices(self) -> int:
        return len(self.vertex_coords)

    @property
    def index_dtype(self) -> np.dtype[Any]:
        return self.c2e.dtype

    @property
    def area(self) -> float:
        """The domain's area: the sum of the cells' areas."""
        return float(self.cell_areas.sum())

    def table(self, name: str) -> IndexArray:
        """The table named `name` (one of TABLES, any case), e.g. `mesh.table("C2E")`."""
        key = name.upper()
        if key not in TABLES:
            raise KeyError(f"no table {name!r}; a mesh has {', '.join(TABLES)}")
        table: IndexArray = getattr(self, key.lower())
        return table

    @property
    def tables(self) -> dict[str, IndexArray]:
        """Every table by name, in TABLES order."""
        return {name: self.table(name) for name in TABLES}

    def with_index_dtype(self, dtype: npt.DTypeLike) -> Mesh:
        """The same mesh with tables of `dtype` (np.int32 or np.int64)."""
        resolved = resolve_index_dtype(dtype)
        if resolved == self.index_dtype:
            return self
        if resolved == np.int32 and max(self.n_cells, self.n_edges, self.n_vertices) > (
            np.iinfo(np.int32).max
        ):
            raise MeshError(f"{self!r} does not fit int32 indices")
        changed: dict[str, Any] = {n.lower(): t.astype(resolved) for n, t in self.tables.items()}
        return dataclasses.replace(self, **changed)

    def validate(self) -> None:
        """Check the tables' consistency and the cells' orientation; a MeshError (a
        ValueError) names the table, its first bad row and what would be right."""
        counts = {"cell": self.n_cells, "edge": self.n_edges, "vertex": self.n_vertices}
        _validation.check_shapes(self.tables, counts)
        wide = {n: np.asarray(t, dtype=np.int64) for n, t in self.tables.items()}
        _validation.check_tables(wide, counts)
        _validation.check_orientation(wide["C2V"], self.cell_areas)

    def __repr__(self) -> str:
        kind = f"periodic {self.period[0]:g} x {self.period[1]:g}" if self.period else "bounded"
        return (
            f"Mesh({self.name!r}: {self.n_cells} cells, {self.n_edges} edges, "
            f"{self.n_vertices} vertices, {kind}, {self.index_dtype})"
        )
