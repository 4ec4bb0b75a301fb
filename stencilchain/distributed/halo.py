"""Halo exchange: each rank's halos filled with its neighbours' edge points.

Dimensions are exchanged one after the other, each with non-blocking sends and receives
of packed slabs for every field at once. A slab spans the whole local array along the
other dimensions, halos included, so a dimension exchanged later carries what the earlier
ones received: corners (diagonal neighbours) are filled without messages of their own.
A periodic dimension wraps around, also on one rank (a rank sends to itself).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stencilchain.distributed._mpi import mpi
from stencilchain.distributed.decomposition import Decomposition
from stencilchain.distributed.field import DistributedField
from stencilchain.distributed.mesh_decomposition import MeshDecomposition, MeshField
from stencilchain.distributed.mesh_halo import exchange_mesh
from stencilchain.errors import DecompositionError
from stencilchain.program.dimensions import Dimension


def exchange(*fields: DistributedField | MeshField) -> None:
    """Fill the halos of `fields` (all of one decomposition) from the neighbouring ranks.
    Collective: every rank of the decomposition calls it with the same fields in the
    same order. Halos at a non-periodic edge of the grid are left as they are. Fields on
    a partitioned mesh (`MeshField`) travel in one round (distributed/mesh_halo.py)."""
    if not fields:
        return
    decomposition = fields[0].decomposition
    if any(field.decomposition is not decomposition for field in fields):
        raise DecompositionError("exchange: the fields belong to different decompositions")
    if isinstance(decomposition, MeshDecomposition):
        exchange_mesh([f for f in fields if isinstance(f, MeshField)], decomposition.method)
        return
    assert isinstance(decomposition, Decomposition)
    grid_fields = tuple(f for f in fields if isinstance(f, DistributedField))
    MPI = mpi("exchange")
    for dim in decomposition.split:
        _exchange_along(MPI, decomposition, dim, grid_fields)


def _exchange_along(
    MPI: Any, decomposition: Decomposition, dim: Dimension, fields: tuple[DistributedField, ...]
) -> None:
    below, above = decomposition.neighbors(dim)
    thinnest = decomposition.sizes[dim] // decomposition.grid[decomposition.split.index(dim)]
    requests: list[Any] = []
    received: list[tuple[np.ndarray[Any, Any], tuple[slice, ...], np.ndarray[Any, Any]]] = []
    sent: list[np.ndarray[Any, Any]] = []
    for number, field in enumerate(fields):
        width = field.halo(dim)
        if width == 0:
            continue
        if width > thinnest:
            raise DecompositionError(
                f"exchange: field {number} has a halo of {width} along {dim.name}, wider than "
                f"the thinnest block ({thinnest} points of {decomposition.sizes[dim]} over "
                f"{decomposition.grid[decomposition.split.index(dim)]} ranks)"
            )
        axis = field.dims.index(dim)
        n = field.data.shape[axis] - 2 * width

        def part(
            start: int, stop: int, axis: int = axis, field: DistributedField = field
        ) -> tuple[slice, ...]:
            return tuple(
                slice(start, stop) if a == axis else slice(None) for a in range(field.data.ndim)
            )

        up, down = 2 * number, 2 * number + 1  # tags of what travels upwards, downwards
        for source, tag, target in (
            (below, up, part(0, width)),
            (above, down, part(n + width, n + 2 * width)),
        ):
            buffer = np.empty(field.data[target].shape, dtype=field.data.dtype)
            requests.append(decomposition.comm.Irecv(buffer, source=source, tag=tag))
            if source != MPI.PROC_NULL:  # nothing arrives from beyond a non-periodic edge
                received.append((field.data, target, buffer))
        for dest, tag, origin in (
            (above, up, part(n, n + width)),
            (below, down, part(width, 2 * width)),
        ):
            packed = np.ascontiguousarray(field.data[origin])
            sent.append(packed)  # alive until the sends complete
            requests.append(decomposition.comm.Isend(packed, dest=dest, tag=tag))
    MPI.Request.Waitall(requests)
    for data, target, buffer in received:
        data[target] = buffer
