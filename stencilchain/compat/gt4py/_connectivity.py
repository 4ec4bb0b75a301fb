"""gt4py's connectivities: `as_connectivity([Cell, C2EDim], Edge, table, skip_value=-1)` or
`as_connectivity(domain={Vertex: nv, V2EDim: 6}, codomain=Edge, data=table)`, and the older
`NeighborTableOffsetProvider(table, Cell, Edge, 3)`. Each is immutable and checked once,
when it is made; a program called with it trusts it afterwards (its array is a frozen
table, stencilchain.frozen_table)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from stencilchain.errors import ArgumentError
from stencilchain.program.dimensions import Dimension
from stencilchain.program.tables import frozen_table


@dataclasses.dataclass(frozen=True, order=True)
class TableSpec:
    """What a connectivity declares of its table, as gt4py's offset-provider type: its
    width, whether it may have missing neighbours (the declared `skip_value`), its dtype."""

    max_neighbors: int
    skip_values: bool
    dtype: str = "int32"

    @property
    def key(self) -> tuple[int, bool, str]:
        """The key of the program specialisation made for it ahead of a call
        (program/table_specialisation.py)."""
        return self.max_neighbors, self.skip_values, self.dtype


@dataclasses.dataclass(frozen=True, eq=False)
class Connectivity:
    """An immutable neighbour table from `domain_dims` (entity dimension, local dimension)
    to `codomain` entities; `-1` entries are missing neighbours where `skip_value=-1`.
    `spec` (its width, whether it has missing neighbours, its dtype) is found once."""

    domain_dims: tuple[Dimension, Dimension]
    codomain: Dimension
    table: np.ndarray[Any, Any]
    skip_value: int | None
    spec: TableSpec = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        # as in gt4py, the skip-value property is the declared one (no scan of the table)
        spec = TableSpec(
            int(self.table.shape[1]), self.skip_value is not None, str(self.table.dtype)
        )
        object.__setattr__(self, "spec", spec)

    @property
    def ndarray(self) -> np.ndarray[Any, Any]:
        return self.table

    def asnumpy(self) -> np.ndarray[Any, Any]:
        return self.table

    @property
    def max_neighbors(self) -> int:
        return int(self.table.shape[1])

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.table.shape)

    @property
    def dtype(self) -> np.dtype[Any]:
        dtype: np.dtype[Any] = np.dtype(self.table.dtype)
        return dtype

    def __repr__(self) -> str:
        dims = ", ".join(d.name for d in self.domain_dims)
        return (
            f"Connectivity([{dims}] -> {self.codomain.name}, shape={self.shape}, "
            f"skip_value={self.skip_value})"
        )


def as_connectivity(
    domain: Sequence[Dimension] | Mapping[Dimension, int],
    codomain: Dimension,
    data: Any,
    dtype: Any = None,
    *,
    skip_value: int | None = None,
    allocator: Any = None,
    device: Any = None,
) -> Connectivity:
    """A neighbour table checked now: 2-D, int32 or int64, its shape that of `domain` where
    it gives sizes, every entry a non-negative index or `skip_value` (-1) where given."""
    where = "as_connectivity"
    if allocator is not None or device is not None:
        raise ArgumentError(
            f"{where}: allocator= and device= are not supported; pass a NumPy array (a "
            "GPU toolchain copies tables itself)"
        )
    sizes = dict(domain) if isinstance(domain, Mapping) else None
    dims = tuple(domain)
    if len(dims) != 2 or not all(isinstance(d, Dimension) for d in dims):
        raise ArgumentError(
            f"{where}: domain= is (entity dimension, local dimension), e.g. [Cell, C2EDim] or "
            f"{{Cell: n_cells, C2EDim: 3}}; got {domain!r}"
        )
    if not dims[1].is_local:
        raise ArgumentError(
            f"{where}: the second dimension of domain= numbers the neighbour slots; declare "
            f"{dims[1].name} with kind=DimensionKind.LOCAL"
        )
    if not isinstance(codomain, Dimension) or codomain.is_local:
        raise ArgumentError(f"{where}: codomain= is an entity dimension, got {codomain!r}")
    array = np.asarray(data) if dtype is None else np.asarray(data, dtype=dtype)
    if array.ndim != 2:
        raise ArgumentError(f"{where}: the table must be 2-D, got shape {array.shape}")
    if array.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise ArgumentError(f"{where}: the table's entries are int32 or int64, got {array.dtype}")
    if sizes is not None:
        want = tuple(int(sizes[d]) for d in dims)
        if tuple(array.shape) != want:
            raise ArgumentError(f"{where}: the table has shape {array.shape}, domain= says {want}")
    if skip_value not in (None, -1):
        raise ArgumentError(
            f"{where}: skip_value= is -1 or None (stencilchain marks missing neighbours with "
            f"-1), got {skip_value!r}"
        )
    lowest = -1 if skip_value == -1 else 0
    if array.size and int(array.min()) < lowest:
        bad = np.argwhere(array < lowest)[0]
        raise ArgumentError(
            f"{where}: entry {tuple(int(i) for i in bad)} is {int(array[tuple(bad)])}; "
            + (
                "entries are indices >= 0 or -1 (missing)"
                if lowest == -1
                else "entries are indices >= 0 (give skip_value=-1 for missing neighbours)"
            )
        )
    return Connectivity((dims[0], dims[1]), codomain, frozen_table(array), skip_value)


def NeighborTableOffsetProvider(
    table: Any,
    origin_axis: Dimension,
    neighbor_axis: Dimension,
    max_neighbors: int,
    has_skip_values: bool = True,
) -> _PendingTable:
    """gt4py < 1.0's spelling of a connectivity; its local dimension is the FieldOffset's."""
    array = np.asarray(table)
    if array.ndim != 2 or array.shape[1] != max_neighbors:
        raise ArgumentError(
            f"NeighborTableOffsetProvider: a table of shape (n, {max_neighbors}) is expected, "
            f"got {array.shape}"
        )
    return _PendingTable(array, has_skip_values)


class _PendingTable:
    """A table whose local dimension is named by the FieldOffset it is given for."""

    __slots__ = ("array", "skip_value")

    def __init__(self, array: np.ndarray[Any, Any], has_skip_values: bool) -> None:
        self.array = array
        self.skip_value = -1 if has_skip_values else None
