"""A rank's part of a distributed field: its block of the grid and a halo around it."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from stencilchain.program.dimensions import Dimension

if TYPE_CHECKING:
    from stencilchain.distributed.decomposition import Decomposition


@dataclasses.dataclass(frozen=True, eq=False)
class DistributedField:
    """`data` is this rank's block of a field over `dims` with `halos[i]` extra points on
    both sides of dimension `dims[i]` (zero along dimensions that are not split). Pass
    `data` to a program; `interior` is the block itself. Made by `Decomposition.allocate`."""

    decomposition: Decomposition
    dims: tuple[Dimension, ...]
    halos: tuple[int, ...]
    data: np.ndarray[Any, Any]

    @property
    def interior(self) -> np.ndarray[Any, Any]:
        """The points this rank owns (a view of `data` without the halo)."""
        return self.data[
            tuple(slice(h, n - h) for h, n in zip(self.halos, self.data.shape, strict=True))
        ]

    def halo(self, dim: Dimension) -> int:
        """The halo width along `dim` (0 if it has none)."""
        return self.halos[self.dims.index(dim)] if dim in self.dims else 0
