"""Splitting a mesh's cells over ranks: METIS (`pymetis`, where it is importable) on the
cells' graph across edges, or, with no dependency, a Hilbert curve through the cell
centres cut into near-equal runs. Pure NumPy: no MPI here.

    part = partition(mesh, 4)                  # "auto": METIS if importable, else Hilbert
    part.method, part.edge_cut, part.imbalance
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import numpy as np
import numpy.typing as npt

from stencilchain.meshes.mesh import Mesh, MeshError

METHODS = ("auto", "hilbert", "metis")
_ORDER = 16  # bits per coordinate of the Hilbert curve: 65,536 x 65,536 cells of the box


@dataclasses.dataclass(frozen=True, eq=False)
class Partition:
    """`owner[c]`: the rank that owns cell c, of `parts` ranks, as `method` split them;
    `edge_cut`: the edges whose two cells have different owners."""

    owner: npt.NDArray[np.int64]
    parts: int
    method: str
    edge_cut: int

    @property
    def sizes(self) -> npt.NDArray[np.int64]:
        """The cells each rank owns."""
        return np.bincount(self.owner, minlength=self.parts).astype(np.int64)

    @property
    def imbalance(self) -> float:
        """The largest part over the mean part, minus one (0.0: perfectly balanced)."""
        sizes = self.sizes
        return float(sizes.max() / sizes.mean() - 1.0)


def partition(mesh: Mesh, parts: int, *, method: str = "auto") -> Partition:
    """`mesh`'s cells split over `parts` ranks. `method`: "hilbert" (a space-filling curve
    through the cell centres, cut into runs of n // parts or n // parts + 1 cells),
    "metis" (pymetis on the graph of cells across edges; MeshError without pymetis), or
    "auto" (metis if pymetis is importable, else hilbert). The result says which."""
    if method not in METHODS:
        raise MeshError(f"partition method {method!r} is not one of {', '.join(METHODS)}")
    if not isinstance(parts, int) or isinstance(parts, bool) or parts < 1:
        raise MeshError(f"partition: parts must be a positive int, got {parts!r}")
    if parts > mesh.n_cells:
        raise MeshError(f"partition: {parts} parts of {mesh!r}: every rank needs a cell")
    metis = _pymetis() if method in ("auto", "metis") else None
    if method == "metis" and metis is None:
        raise MeshError("partition method 'metis' needs pymetis (pip install pymetis)")
    if metis is not None and parts > 1:
        owner, used = _metis(metis, mesh, parts), "metis"
    else:
        owner, used = _hilbert(mesh, parts), "hilbert" if metis is None else "metis"
    return Partition(owner, parts, used, edge_cut(mesh, owner))


def edge_cut(mesh: Mesh, owner: npt.NDArray[np.int64]) -> int:
    """The edges of `mesh` whose two cells `owner` gives to different ranks."""
    e2c = np.asarray(mesh.e2c, dtype=np.int64)
    inner = e2c[:, 1] >= 0
    return int(np.count_nonzero(owner[e2c[inner, 0]] != owner[e2c[inner, 1]]))


def _pymetis() -> Any:
    try:
        return importlib.import_module("pymetis")
    except ImportError:
        return None


def _hilbert(mesh: Mesh, parts: int) -> npt.NDArray[np.int64]:
    centres = np.asarray(mesh.cell_centres)
    low = centres.min(axis=0)
    span = np.maximum(centres.max(axis=0) - low, 1e-300)
    if mesh.period is not None:  # the whole period: a torus's cut then runs along its seams
        low, span = np.zeros(2), np.asarray(mesh.period, dtype=np.float64)
    span = np.full(2, span.max())  # one scale for x and y: the curve's squares stay square
    scaled = (centres - low) / span * ((1 << _ORDER) - 1)
    cells = np.clip(np.round(scaled), 0, (1 << _ORDER) - 1).astype(np.int64)
    order = np.argsort(hilbert_index(cells[:, 0], cells[:, 1], _ORDER), kind="stable")
    n = mesh.n_cells
    base, extra = divmod(n, parts)
    counts = np.full(parts, base, dtype=np.int64)
    counts[:extra] += 1
    owner = np.empty(n, dtype=np.int64)
    owner[order] = np.repeat(np.arange(parts, dtype=np.int64), counts)
    return owner


def hilbert_index(
    x: npt.NDArray[np.int64], y: npt.NDArray[np.int64], order: int
) -> npt.NDArray[np.int64]:
    """The distance along the Hilbert curve of 2**order x 2**order points of each (x, y)."""
    x, y = x.copy(), y.copy()
    d = np.zeros(len(x), dtype=np.int64)
    last = (1 << order) - 1
    s = 1 << (order - 1)
    while s > 0:
        rx = (x & s) > 0
        ry = (y & s) > 0
        d += s * s * ((3 * rx.astype(np.int64)) ^ ry.astype(np.int64))
        flip = ~ry & rx
        x = np.where(flip, last - x, x)
        y = np.where(flip, last - y, y)
        x, y = np.where(~ry, y, x), np.where(~ry, x, y)
        s >>= 1
    return d


def _metis(metis: Any, mesh: Mesh, parts: int) -> npt.NDArray[np.int64]:
    c2e2c = np.asarray(mesh.c2e2c, dtype=np.int64)
    present = c2e2c >= 0
    xadj = np.concatenate([[0], np.cumsum(present.sum(axis=1))])
    _, membership = metis.part_graph(parts, xadj=xadj, adjncy=c2e2c[present])
    return np.asarray(membership, dtype=np.int64)
