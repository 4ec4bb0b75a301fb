"""A structured global grid split in blocks over the ranks of a Cartesian communicator.

Two dimensions are split (I and J, by default the first two of the grid), each periodic or
not; every other dimension (K) stays whole on every rank. A rank owns one block; along a
split dimension of n points over p ranks, the first n % p ranks own n // p + 1 points and
the others n // p, so that blocks differ by at most one point.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from stencilchain.distributed._mpi import mpi
from stencilchain.distributed.field import DistributedField
from stencilchain.errors import DecompositionError
from stencilchain.program.dimensions import Dimension

_SCATTER_TAG = 71
_GATHER_TAG = 72


def block(n: int, parts: int, index: int) -> tuple[int, int]:
    """(offset, size) of block `index` of `n` points split into `parts` near-equal blocks."""
    base, extra = divmod(n, parts)
    return index * base + min(index, extra), base + (1 if index < extra else 0)


@dataclasses.dataclass(frozen=True, eq=False)
class Decomposition:
    """`sizes` (every dimension of the global grid) split along `split` over the ranks of
    `comm`, a Cartesian communicator of `grid` ranks (one count per split dimension).

    Make one with `Decomposition.create`; every rank of the communicator must.
    """

    comm: Any  # mpi4py.MPI.Cartcomm
    sizes: Mapping[Dimension, int]
    split: tuple[Dimension, ...]
    periodic: tuple[bool, ...]
    grid: tuple[int, ...]

    @classmethod
    def create(
        cls,
        sizes: Mapping[Dimension, int],
        *,
        comm: Any = None,
        split: Sequence[Dimension] | None = None,
        periodic: bool | Sequence[bool] = False,
        grid: Sequence[int] | None = None,
    ) -> Decomposition:
        """Split the grid of `sizes` over `comm` (default: COMM_WORLD), collectively.

        `split`: the dimensions to split (default: the first two of `sizes`); `periodic`:
        one flag for all of them or one each; `grid`: ranks along each (default: as square
        as MPI's `Compute_dims` makes it). DecompositionError if a block would be empty.
        """
        MPI = mpi("Decomposition.create")
        comm = MPI.COMM_WORLD if comm is None else comm
        sizes = dict(sizes)
        split = tuple(split) if split is not None else tuple(sizes)[:2]
        where = f"a decomposition of {sizes_text(sizes)} over {comm.Get_size()} ranks"
        if not split:
            raise DecompositionError(f"{where}: no dimension to split")
        unknown = [d.name for d in split if d not in sizes]
        if unknown or len(set(split)) != len(split):
            raise DecompositionError(
                f"{where}: split={[d.name for d in split]} must name distinct dimensions "
                f"of the grid ({', '.join(d.name for d in sizes)})"
            )
        flags = (periodic,) * len(split) if isinstance(periodic, bool) else tuple(periodic)
        if len(flags) != len(split):
            raise DecompositionError(
                f"{where}: periodic has {len(flags)} flags for {len(split)} split dimensions"
            )
        ranks = comm.Get_size()
        if grid is None:
            grid = MPI.Compute_dims(ranks, len(split))
        grid = tuple(int(g) for g in grid)
        if len(grid) != len(split) or any(g < 1 for g in grid) or int(np.prod(grid)) != ranks:
            raise DecompositionError(
                f"{where}: grid={list(grid)} must have one positive count per split dimension "
                f"and {ranks} ranks in all"
            )
        for dim, parts in zip(split, grid, strict=True):
            if sizes[dim] < parts:
                raise DecompositionError(
                    f"{where}: {dim.name} has {sizes[dim]} points for {parts} ranks; "
                    "every rank needs at least one"
                )
        cart = comm.Create_cart(list(grid), periods=list(flags), reorder=False)
        return cls(cart, sizes, split, flags, grid)

    @property
    def rank(self) -> int:
        return int(self.comm.Get_rank())

    @property
    def ranks(self) -> int:
        return int(self.comm.Get_size())

    @property
    def coords(self) -> tuple[int, ...]:
        """This rank's position in the grid of ranks, one index per split dimension."""
        return tuple(int(c) for c in self.comm.Get_coords(self.rank))

    def blocks_of(self, rank: int) -> dict[Dimension, tuple[int, int]]:
        """(offset, size) of the block `rank` owns, along every dimension of the grid."""
        coords = dict(zip(self.split, self.comm.Get_coords(rank), strict=True))
        return {
            dim: block(n, self.grid[self.split.index(dim)], int(coords[dim]))
            if dim in coords
            else (0, n)
            for dim, n in self.sizes.items()
        }

    def local_sizes(self) -> dict[Dimension, int]:
        """The size of this rank's block along every dimension of the grid."""
        return {dim: size for dim, (_, size) in self.blocks_of(self.rank).items()}

    def local_offsets(self) -> dict[Dimension, int]:
        """Where this rank's block starts in the global grid, along every dimension."""
        return {dim: offset for dim, (offset, _) in self.blocks_of(self.rank).items()}

    def neighbors(self, dim: Dimension) -> tuple[int, int]:
        """The ranks below and above this one along split dimension `dim` (MPI.PROC_NULL
        at a non-periodic edge; this rank itself along a periodic dimension of one rank)."""
        below, above = self.comm.Shift(self.split.index(dim), 1)
        return int(below), int(above)

    def allocate(
        self,
        dims: Sequence[Dimension],
        dtype: npt.DTypeLike = np.float64,
        *,
        halo: int | Mapping[Dimension, int] = 0,
    ) -> DistributedField:
        """A zeroed local field over `dims` (dimensions of the grid, in array order): this
        rank's block with `halo` points on both sides of each split dimension (one width
        for all, or per dimension; dimensions that are not split have none)."""
        dims = tuple(dims)
        where = f"a field over ({', '.join(d.name for d in dims)})"
        unknown = [d.name for d in dims if d not in self.sizes]
        if unknown:
            raise DecompositionError(
                f"{where}: {', '.join(unknown)} not in the grid ({sizes_text(self.sizes)})"
            )
        widths = {d: halo for d in self.split} if isinstance(halo, int) else dict(halo)
        for dim, width in widths.items():
            if dim not in self.split:
                raise DecompositionError(
                    f"{where}: a halo along {dim.name}, which is not split "
                    f"(split: {', '.join(d.name for d in self.split)})"
                )
            if width < 0:
                raise DecompositionError(f"{where}: a negative halo ({width}) along {dim.name}")
        local = self.local_sizes()
        halos = tuple(widths.get(d, 0) if d in self.split else 0 for d in dims)
        shape = tuple(local[d] + 2 * h for d, h in zip(dims, halos, strict=True))
        return DistributedField(self, dims, halos, np.zeros(shape, dtype=dtype))

    def scatter(
        self, field: DistributedField, global_array: npt.ArrayLike | None, root: int = 0
    ) -> None:
        """Fill the interior of `field` on every rank with its block of `global_array`, an
        array over the whole grid given on `root` (ignored elsewhere). Collective."""
        self._check_own(field, "scatter")
        if self.rank == root:
            array = np.asarray(global_array, dtype=field.data.dtype)
            expected = tuple(self.sizes[d] for d in field.dims)
            if array.shape != expected:
                shapes = f"shape {array.shape}, the grid {expected}"
                raise DecompositionError(f"scatter: the global array has {shapes}")
            requests = [
                self.comm.Isend(
                    np.ascontiguousarray(array[self._block_slices(rank, field.dims)]),
                    dest=rank,
                    tag=_SCATTER_TAG,
                )
                for rank in range(self.ranks)
                if rank != root
            ]
            field.interior[...] = array[self._block_slices(root, field.dims)]
            mpi("scatter").Request.Waitall(requests)
        else:
            buffer = np.empty(field.interior.shape, dtype=field.data.dtype)
            self.comm.Recv(buffer, source=root, tag=_SCATTER_TAG)
            field.interior[...] = buffer

    def gather(self, field: DistributedField, root: int = 0) -> np.ndarray[Any, Any] | None:
        """The interiors of `field` on every rank as one global array on `root` (None on the
        other ranks). Collective."""
        self._check_own(field, "gather")
        if self.rank != root:
            self.comm.Send(np.ascontiguousarray(field.interior), dest=root, tag=_GATHER_TAG)
            return None
        result = np.empty(tuple(self.sizes[d] for d in field.dims), dtype=field.data.dtype)
        result[self._block_slices(root, field.dims)] = field.interior
        for rank in range(self.ranks):
            if rank == root:
                continue
            target = result[self._block_slices(rank, field.dims)]
            buffer = np.empty(target.shape, dtype=result.dtype)
            self.comm.Recv(buffer, source=rank, tag=_GATHER_TAG)
            target[...] = buffer
        return result

    def _block_slices(self, rank: int, dims: Sequence[Dimension]) -> tuple[slice, ...]:
        blocks = self.blocks_of(rank)
        return tuple(slice(blocks[d][0], blocks[d][0] + blocks[d][1]) for d in dims)

    def _check_own(self, field: DistributedField, what: str) -> None:
        if field.decomposition is not self:
            raise DecompositionError(f"{what}: the field belongs to another decomposition")


def sizes_text(sizes: Mapping[Dimension, int]) -> str:
    """`{I: 64, J: 48}`: a size or a width per dimension, as errors show it."""
    return "{" + ", ".join(f"{d.name}: {n}" for d, n in sizes.items()) + "}"
