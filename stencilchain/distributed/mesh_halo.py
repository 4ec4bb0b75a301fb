"""Halo exchange on a partitioned mesh: every halo cell, edge and vertex gets its owner's
value, all fields of one exchange packed into one message per neighbour rank.

`HaloPattern.create` learns, once, which local entities each neighbour sends and
receives: each rank asks every owner for the global numbers of its halo entities (one
alltoall), and a distributed graph communicator joins the ranks that talk. An exchange
then packs, per neighbour, the rows of every field (any further dimensions, such as K,
travel with their entity) as bytes, and sends them with one `Neighbor_alltoallv`
("neighbor") or with non-blocking sends and receives ("p2p"); see ADR 0031.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from stencilchain.distributed._mpi import mpi
from stencilchain.errors import DecompositionError
from stencilchain.meshes._arrays import IndexArray
from stencilchain.meshes.local import ENTITIES, LocalMesh

if TYPE_CHECKING:
    from stencilchain.distributed.mesh_decomposition import MeshField

METHODS = ("neighbor", "p2p")
_TAG = 73


@dataclasses.dataclass(frozen=True, eq=False)
class HaloPattern:
    """Who sends what to whom: `sources` (the ranks this one receives from) and `recv`,
    per entity, one array of local numbers per source, to fill; `destinations` and
    `send`, per entity, one array of owned local numbers per destination, to send.
    `graph` is the distributed graph communicator of those edges."""

    sources: tuple[int, ...]
    destinations: tuple[int, ...]
    recv: Mapping[str, tuple[IndexArray, ...]]
    send: Mapping[str, tuple[IndexArray, ...]]
    graph: Any

    @classmethod
    def create(cls, comm: Any, local: LocalMesh) -> HaloPattern:
        """The pattern of `local`, this rank's mesh, collectively over `comm`."""
        ranks = comm.Get_size()
        wanted: list[dict[str, IndexArray]] = [{} for _ in range(ranks)]
        mine: dict[str, dict[int, IndexArray]] = {}
        for entity in ENTITIES:
            halo = np.arange(local.owned[entity], local.size(entity), dtype=np.int64)
            owners = local.owner[entity][halo]
            mine[entity] = {}
            for owner in np.unique(owners):
                at = halo[owners == owner]
                mine[entity][int(owner)] = at
                wanted[int(owner)][entity] = local.global_index[entity][at]
        asked = comm.alltoall(wanted)
        lookup = {e: _inverse(local.global_index[e][: local.owned[e]]) for e in ENTITIES}
        sending: dict[str, dict[int, IndexArray]] = {e: {} for e in ENTITIES}
        for rank, request in enumerate(asked):
            for entity, global_numbers in request.items():
                found = np.array([lookup[entity].get(int(g), -1) for g in global_numbers])
                if (found < 0).any():
                    raise DecompositionError(
                        f"halo pattern: rank {rank} asks rank {local.rank} for {entity} "
                        f"{int(global_numbers[found < 0][0])}, which it does not own"
                    )
                sending[entity][rank] = found.astype(np.int64)
        sources = tuple(sorted({r for e in ENTITIES for r in mine[e]}))
        destinations = tuple(sorted({r for e in ENTITIES for r in sending[e]}))
        empty = np.zeros(0, dtype=np.int64)
        recv = {e: tuple(mine[e].get(r, empty) for r in sources) for e in ENTITIES}
        send = {e: tuple(sending[e].get(r, empty) for r in destinations) for e in ENTITIES}
        graph = comm.Create_dist_graph_adjacent(list(sources), list(destinations), reorder=False)
        return cls(sources, destinations, recv, send, graph)

    def messages(self) -> int:
        """The messages this rank sends per exchange (one per destination)."""
        return len(self.destinations)

    def halo_sizes(self) -> dict[str, int]:
        """The halo entities this rank receives per exchange, by entity."""
        return {e: int(sum(len(a) for a in self.recv[e])) for e in ENTITIES}


def _inverse(numbers: IndexArray) -> dict[int, int]:
    return {int(g): n for n, g in enumerate(numbers)}


def exchange_mesh(fields: Sequence[MeshField], method: str) -> int:
    """Fill the halo entities of `fields` (all of one decomposition) from their owners, in
    one round; the bytes this rank sent. Collective: the same fields on every rank."""
    if method not in METHODS:
        raise DecompositionError(f"exchange: method {method!r} is not one of {METHODS}")
    moving = [(f, f.entity) for f in fields if f.entity is not None]
    if not moving:
        return 0
    pattern = moving[0][0].decomposition.pattern
    if not pattern.sources and not pattern.destinations:
        return 0
    MPI = mpi("exchange")
    send_counts, send_parts = [], []
    for number in range(len(pattern.destinations)):
        parts = [_rows(f, pattern.send[entity][number]) for f, entity in moving]
        send_parts.append(parts)
        send_counts.append(sum(p.size for p in parts))
    recv_counts = [
        sum(len(pattern.recv[entity][number]) * _row_bytes(f) for f, entity in moving)
        for number in range(len(pattern.sources))
    ]
    sendbuf = np.empty(max(1, sum(send_counts)), dtype=np.uint8)
    offset = 0
    for parts in send_parts:
        for part in parts:
            sendbuf[offset : offset + part.size] = part
            offset += part.size
    recvbuf = np.empty(max(1, sum(recv_counts)), dtype=np.uint8)
    send_displs = list(np.cumsum([0, *send_counts[:-1]]).astype(int)) if send_counts else []
    recv_displs = list(np.cumsum([0, *recv_counts[:-1]]).astype(int)) if recv_counts else []
    if method == "neighbor":
        pattern.graph.Neighbor_alltoallv(
            [sendbuf, (send_counts, send_displs), MPI.BYTE],
            [recvbuf, (recv_counts, recv_displs), MPI.BYTE],
        )
    else:
        requests = [
            pattern.graph.Irecv(
                [recvbuf[start : start + count], count, MPI.BYTE], source=source, tag=_TAG
            )
            for source, start, count in zip(pattern.sources, recv_displs, recv_counts, strict=True)
        ]
        requests += [
            pattern.graph.Isend(
                [sendbuf[start : start + count], count, MPI.BYTE], dest=dest, tag=_TAG
            )
            for dest, start, count in zip(
                pattern.destinations, send_displs, send_counts, strict=True
            )
        ]
        MPI.Request.Waitall(requests)
    for number, start in enumerate(recv_displs):
        offset = int(start)
        for field, entity in moving:
            at = pattern.recv[entity][number]
            size = len(at) * _row_bytes(field)
            rows = recvbuf[offset : offset + size].view(field.data.dtype)
            moved = np.moveaxis(field.data, field.axis, 0)
            moved[at] = rows.reshape((len(at), *moved.shape[1:]))
            offset += size
    return int(sum(send_counts))


def _rows(field: MeshField, at: IndexArray) -> np.ndarray[Any, np.dtype[np.uint8]]:
    rows = np.ascontiguousarray(np.moveaxis(field.data, field.axis, 0)[at])
    return rows.reshape(-1).view(np.uint8)


def _row_bytes(field: MeshField) -> int:
    shape = np.moveaxis(field.data, field.axis, 0).shape[1:]
    return int(np.prod(shape, dtype=np.int64)) * int(field.data.dtype.itemsize)
