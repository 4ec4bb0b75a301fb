"""Neighbour tables: the check of their entries, and tables made once and trusted
afterwards (`sc.frozen_table`).

Every entry of a table must lie in [0, n_source), or be -1 where the connectivity allows
skip values (`check_table_entries`): checked before anything runs, so that no toolchain
reads outside an array.

A frozen table is a read-only NumPy array over a private `bytes` object (`TableBytes`)
that nothing can change: NumPy refuses to make an array over `bytes` writeable. The
range of its entries (smallest, largest) is computed once, when it is made, and kept in
a header at the start of that `bytes` object, before the entries. A call then checks the
table against the size of the source dimension with two comparisons (`recorded_range`;
the compiled entry points read the same header in C, see
stencilchain/steps/cpp/module_cpu_tables.h), where a writeable table's entries are read
one by one at every call. See ADR 0030 (docs/adr/0030-tables-checked-once.md).

The range is trusted only for an array whose every element is one of the table's own:
its memory lies in the header's `bytes` object, its dtype is the one the range was taken
in, its strides and its first element's offset are whole elements. So a view of the
table (`table[10:]`, `table[:, ::-1]`) is trusted, and a reinterpretation
(`table.view(np.int16)`, `table.dtype = np.uint32`) is checked entry by entry.

Header: four native int64, `low, high, itemsize, HEADER_VERSION`. `itemsize` is the
entries' item size when they are native signed integers (their range is recorded), 0
otherwise (a float array, say: nothing recorded); an empty table records `low > high`.
"""

from __future__ import annotations

import functools
import struct
import weakref
from typing import Any

import numpy as np

from stencilchain.errors import ArgumentError
from stencilchain.program.connectivity import Connectivity

HEADER_BYTES = 32
HEADER_VERSION = 0x5C7AB1E1  # changes with the header's layout (the C side checks it too)
_NO_ENTRY = (2**63 - 1, -(2**63))  # the recorded (low, high) of an empty table


class TableBytes(bytes):
    """The memory of a frozen table: the header, then the entries. Made by
    `frozen_table` only."""

    __slots__ = ()


def frozen_table(
    table: Any, connectivity: Connectivity | None = None, *, source_size: int | None = None
) -> np.ndarray:
    """A read-only copy of `table` that nothing can change, the range of its entries
    recorded when it is made: a program call checks it against the size of the source
    dimension with two comparisons instead of reading every entry.

    With `connectivity` (and `source_size`, the number of source entities) it is also
    validated now, as a call checks it: shape (n, max_neighbors), int32 or int64, every
    entry in [0, source_size), or -1 where the connectivity has skip values; anything
    else is an ArgumentError (naming the first bad entry)."""
    array = np.ascontiguousarray(table)
    if connectivity is not None:
        _validate(array, connectivity, source_size)
    dtype = array.dtype
    recorded = dtype.kind == "i" and dtype.isnative
    low, high = _NO_ENTRY
    if recorded and array.size:
        low, high = int(array.min()), int(array.max())
    header = np.array([low, high, dtype.itemsize if recorded else 0, HEADER_VERSION], np.int64)
    memory = TableBytes(header.tobytes() + array.tobytes())
    return np.frombuffer(memory, dtype=dtype, offset=HEADER_BYTES).reshape(array.shape)


def recorded_range(table: Any) -> tuple[int, int] | None:
    """The (smallest, largest) entry recorded when `table`'s memory was frozen, or None
    when `table` is not a frozen table, or a view of one, element for element (its
    entries must then be read). An array found to be one is remembered while it lives,
    with what could change in place (its base, dtype, shape and strides), so that the next
    call does not look up its addresses again."""
    if not isinstance(table, np.ndarray) or table.flags.writeable:
        return None
    key = id(table)
    seen = _seen.get(key)
    if seen is not None and seen[0]() is table and seen[1] == _layout(table):
        return seen[2]
    found = _header_range(table)
    if found is not None:
        _seen[key] = (weakref.ref(table, functools.partial(_forget, key)), _layout(table), found)
    return found


def has_skips(table: Any) -> bool:
    """Whether `table` has -1 entries: the range recorded when a frozen table
    (`sc.frozen_table`) was made, or one `min` over any other table."""
    found = recorded_range(table)
    if found is not None:
        return found[0] < 0
    return bool(table.size) and bool(table.min() < 0)


def _forget(key: int, _: object) -> None:
    _seen.pop(key, None)


def _layout(table: np.ndarray) -> tuple[object, ...]:
    return (id(table.base), table.dtype, table.shape, table.strides)


# id(array) -> (weak reference, layout, range) of arrays found to be frozen tables
_seen: dict[int, tuple[weakref.ref[np.ndarray], tuple[object, ...], tuple[int, int]]] = {}


def _header_range(table: np.ndarray) -> tuple[int, int] | None:
    memory: object = table.base
    while isinstance(memory, np.ndarray):
        memory = memory.base
    if type(memory) is not TableBytes or len(memory) < HEADER_BYTES:
        return None
    low, high, itemsize, version = struct.unpack_from("=4q", memory)
    dtype = table.dtype
    if version != HEADER_VERSION or itemsize == 0 or dtype.kind != "i" or not dtype.isnative:
        return None
    if dtype.itemsize != itemsize or any(s % itemsize for s in table.strides):
        return None
    if table.size:
        payload = np.frombuffer(memory, np.uint8, offset=HEADER_BYTES)
        begin = int(payload.__array_interface__["data"][0])
        first = int(table.__array_interface__["data"][0])  # the address of table[0, ..., 0]
        lowest, highest = first, first + itemsize
        for n, stride in zip(table.shape, table.strides):
            reach = (n - 1) * stride
            if reach < 0:
                lowest += reach
            else:
                highest += reach
        end = begin + payload.size
        if lowest < begin or highest > end or (first - begin) % itemsize:
            return None
    return low, high


def check_table_entries(where: str, conn: Connectivity, table: Any, source_size: int) -> None:
    """Every entry of a neighbour table lies in [0, n_source), or is -1 where the
    connectivity allows skip values: checked before anything runs, so that no toolchain
    reads outside an array. A frozen table's recorded range is compared, a writeable
    table's entries are read (one vectorized pass)."""
    low = -1 if conn.skip_values else 0
    recorded = recorded_range(table)
    if recorded is None:  # a writeable table: its smallest and largest entries
        recorded = (table.min(), table.max()) if table.size else _NO_ENTRY
    if low <= recorded[0] and recorded[1] < source_size:
        return
    bad = (table < low) | (table >= source_size)
    if not bad.any():
        return  # a view of a frozen table, in range where the whole table is not
    position = tuple(int(i) for i in np.argwhere(bad)[0])
    allowed = (
        f"[-1, {source_size}) (-1: no neighbour)"
        if conn.skip_values
        else f"[0, {source_size}) ({conn.name} is declared without skip values, "
        "so -1 is not allowed)"
    )
    raise ArgumentError(
        f"{where}: table of {conn.name} holds {table[position]} at {position}, outside "
        f"{allowed}: {conn.source.name} has {source_size} entities"
    )


def _validate(array: np.ndarray, conn: Connectivity, source_size: int | None) -> None:
    where = f"sc.frozen_table(..., {conn.name})"
    if array.ndim != 2 or array.shape[1] != conn.max_neighbors:
        raise ArgumentError(
            f"{where}: expected an array of shape (n_{conn.entity.name}, "
            f"{conn.max_neighbors}), got shape {array.shape}"
        )
    if array.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise ArgumentError(
            f"{where}: expected int32 or int64 entries, got dtype {array.dtype}; nothing is "
            f"converted implicitly, pass table.astype(np.int32)"
        )
    if source_size is not None:
        check_table_entries(where, conn, array, source_size)
