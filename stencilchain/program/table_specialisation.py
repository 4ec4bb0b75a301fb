"""Tables of any width: a program whose connectivity is declared with `max_neighbors=None`
(the width of each call's table) or `skip_values=None` (whether the table has -1 entries)
is traced once, and specialised per call: each table's (width, has -1) pair picks an
ir.Program in which the connectivity is declared with those values, so every backend
compiles it as an ordinary program (one specialisation per pair, made at the first call
with it). Why and what the alternatives were: docs/adr/0029-table-specialisation.md.

With `dtype_from_table=True` (what `stencilchain.compat.gt4py` asks for: gt4py's tables
may be int32 or int64), every table parameter also takes its integer dtype from the call:
the key of such a table is (width, has -1, dtype name), and the specialisation's
parameter is declared with that dtype (ADR 0033)."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from stencilchain.errors import ArgumentError
from stencilchain.program import dtypes, ir
from stencilchain.program.connectivity import Connectivity
from stencilchain.program.ir_walk import nodes
from stencilchain.program.records import frozen
from stencilchain.program.tables import has_skips

# (max_neighbors, skip_values) of one table, and its dtype's name where the call gives it
TableKey = tuple[int, bool] | tuple[int, bool, str]
TABLE_DTYPES = ("int32", "int64")  # the dtypes a table may take from the call


@frozen
class OpenTable:
    """A table parameter of a connectivity that leaves its width or skip values open, or
    one whose dtype the call gives (`open_dtype`, then `dtype` is the declared one)."""

    position: int
    name: str
    connectivity: Connectivity
    dtype: np.dtype[Any]
    open_dtype: bool = False


def open_tables(program: ir.Program, *, dtype_from_table: bool = False) -> tuple[OpenTable, ...]:
    """The program's table parameters whose connectivity each call's table completes;
    with `dtype_from_table`, every table parameter (each call's table gives its dtype)."""
    return tuple(
        OpenTable(i, p.name, p.type.connectivity, p.type.dtype.numpy, dtype_from_table)
        for i, p in enumerate(program.params)
        if isinstance(p.type, ir.TableType) and (dtype_from_table or p.type.connectivity.is_open)
    )


def table_key(program_name: str, table: OpenTable, arg: Any) -> TableKey:
    """The (width, has -1 entries) of a call's table, a declared value where the
    connectivity fixes it, and its dtype's name where the call gives it; an argument that
    is no 2-d integer array of the table's dtype (int32 or int64 where the call gives it)
    is an ArgumentError naming it (as the checks of every other argument would)."""
    conn = table.connectivity
    where = f"argument '{table.name}' of {program_name}()"
    shape = getattr(arg, "shape", None)
    dtype = getattr(arg, "dtype", None)
    if shape is None or dtype is None:
        raise ArgumentError(
            f"{where}: expected an array (the table of {conn.name}, of shape "
            f"(n_{conn.entity.name}, n_neighbours)), got {type(arg).__name__}"
        )
    if len(shape) != 2:
        raise ArgumentError(
            f"{where}: expected 2 dimension(s) ({conn.entity.name}, {conn.local.name}), got an "
            f"array of shape {tuple(shape)}"
        )
    if table.open_dtype:
        if dtype not in _TABLE_NUMPY_DTYPES:
            raise ArgumentError(
                f"{where}: the table of {conn.name} holds int32 or int64 entries, got "
                f"dtype {dtype}; nothing is converted implicitly, pass arr.astype(np.int32)"
            )
    elif dtype != table.dtype:
        raise ArgumentError(
            f"{where}: expected dtype {table.dtype}, got {dtype}; nothing is converted "
            f"implicitly, pass arr.astype(np.{table.dtype.name})"
        )
    width = conn.max_neighbors
    if width is None:
        width = int(shape[1])
        if width < 1:
            raise ArgumentError(
                f"{where}: the table of {conn.name} has no columns; give each "
                f"{conn.entity.name} at least one neighbour slot (-1 where it has none)"
            )
    elif shape[1] != width:
        raise ArgumentError(
            f"{where}: the table of {conn.name} has {shape[1]} columns, but {conn.name} is "
            f"declared with max_neighbors={width}; pass an array of shape "
            f"(n_{conn.entity.name}, {width})"
        )
    skips = conn.skip_values
    if skips is None:
        skips = has_skips(arg)
    if table.open_dtype:
        return width, skips, np.dtype(dtype).name
    return width, skips


_TABLE_NUMPY_DTYPES = tuple(np.dtype(name) for name in TABLE_DTYPES)


def specialise_tables(
    program: ir.Program, keys: Mapping[str, TableKey], *, dtype_from_table: bool = False
) -> ir.Program:
    """`program` with the connectivity of each table parameter named in `keys` declared
    with that (max_neighbors, skip_values), and, with `dtype_from_table`, each table
    parameter with that dtype (the key's third item); a slot read beyond a table's width
    is an ArgumentError naming the table."""
    concrete: dict[object, object] = {}
    for table in open_tables(program, dtype_from_table=dtype_from_table):
        key = keys[table.name]
        width, skips = key[0], key[1]
        dtype = key[2] if len(key) == 3 else None
        conn = table.connectivity
        if (
            type(width) is not int
            or width < 1
            or type(skips) is not bool
            or conn.max_neighbors not in (None, width)
            or conn.skip_values not in (None, skips)
            or (dtype_from_table and dtype not in TABLE_DTYPES)
            or (not dtype_from_table and len(key) != 2)
        ):
            wanted = "(max_neighbors, skip_values" + (", dtype)" if dtype_from_table else ")")
            raise ArgumentError(
                f"{program.name}: table '{table.name}' of {conn.name} "
                f"(max_neighbors={conn.max_neighbors}, skip_values={conn.skip_values}) "
                f"cannot be specialised for {wanted} = {key!r}"
            )
        made_conn = Connectivity(conn.name, conn.source, conn.target, width, skips)
        concrete[conn] = made_conn
        if dtype is not None:
            old = program.params[table.position].type
            assert isinstance(old, ir.TableType)
            concrete[old] = ir.TableType(old.dims, dtypes.BY_NAME[dtype], made_conn)
        _check_slots(program, table, width)
    made = _swap(program, concrete, {})
    assert isinstance(made, ir.Program)
    return made


def _check_slots(program: ir.Program, table: OpenTable, width: int) -> None:
    conn = table.connectivity
    for fop in program.field_operators:
        for node in nodes(fop.body):
            slot: int | None = None
            if isinstance(node, ir.NeighborShift) and node.connectivity == conn:
                slot, written = node.slot, f"{conn.name}[{node.slot}]"
            elif isinstance(node, ir.LocalSlot) and node.axis == conn.local:
                slot, written = node.slot, f"{conn.local.name}({node.slot})"
            if slot is not None and slot >= width:
                raise ArgumentError(
                    f"argument '{table.name}' of {program.name}(): the table of {conn.name} "
                    f"has {width} columns, but field operator {fop.name} reads slot "
                    f"{written}; pass a table with at least {slot + 1} columns"
                )


def _swap(obj: Any, concrete: Mapping[object, object], memo: dict[int, Any]) -> Any:
    """`obj` (an IR value: frozen dataclasses, tuples) with each connectivity and table
    type of `concrete` replaced; what holds none comes back as the same object."""
    if isinstance(obj, Connectivity):
        return concrete.get(obj, obj)
    if isinstance(obj, ir.TableType) and obj in concrete:
        return concrete[obj]
    key = id(obj)
    if key in memo:
        return memo[key]
    made = obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            new = _swap(value, concrete, memo)
            if new is not value:
                changes[f.name] = new
        if changes:
            made = dataclasses.replace(obj, **changes)
    elif type(obj) is tuple:
        items = tuple(_swap(x, concrete, memo) for x in obj)
        if any(a is not b for a, b in zip(items, obj)):
            made = items
    memo[key] = made
    return made


class TableDispatch:
    """A program with open tables on one backend: a dict from the call's table keys to the
    specialisation's executor (made by `make` at the first call with those keys). With
    `dtype_from_table`, every table's key has its dtype too (module docstring)."""

    def __init__(
        self,
        program: ir.Program,
        make: Callable[[ir.Program], Callable[..., None]],
        *,
        jit: bool = True,
        dtype_from_table: bool = False,
    ) -> None:
        self.program = program
        self.make = make
        self.jit = jit
        self.dtype_from_table = dtype_from_table
        self.tables = open_tables(program, dtype_from_table=dtype_from_table)
        self.executors: dict[tuple[TableKey, ...], Callable[..., None]] = {}
        self._count = len(program.params)
        # the argument binder, imported here: defining a program with open tables needs
        # only open_tables(), and its module loads with the first call's
        from stencilchain.program.arguments import bind_arguments

        self._bind = bind_arguments

    def compile(self, **tables: Sequence[Any]) -> None:
        """Compile the specialisation of every combination of the tables given for each
        open table parameter (all must be named): per parameter a list of arrays or of
        `(max_neighbors, skip_values)` pairs (as gt4py's `compile(offset_provider=[...])`;
        `(max_neighbors, skip_values, dtype)` with `dtype_from_table`)."""
        names = [t.name for t in self.tables]
        if set(tables) != set(names):
            raise ArgumentError(
                f"{self.program.name}.compile(): give the tables of every open table "
                f"parameter ({', '.join(names)}), got {', '.join(tables) or 'none'}"
            )
        columns = [
            [
                g if isinstance(g, tuple) else table_key(self.program.name, t, g)
                for g in tables[t.name]
            ]
            for t in self.tables
        ]
        for key in itertools.product(*columns):
            if key not in self.executors:
                executor = self._make(key)
                compile_now = getattr(executor, "compile", None)
                if callable(compile_now):
                    compile_now()

    def _make(self, key: tuple[TableKey, ...]) -> Callable[..., None]:
        keys = {t.name: k for t, k in zip(self.tables, key)}
        made = specialise_tables(self.program, keys, dtype_from_table=self.dtype_from_table)
        executor = self.make(made)
        self.executors[key] = executor
        return executor

    def _text(self, key: tuple[TableKey, ...]) -> str:
        return ", ".join(f"{t.name}={k!r}" for t, k in zip(self.tables, key))

    def __call__(self, /, *args: Any, **kwargs: Any) -> None:
        if kwargs:
            args = self._bind(self.program, args, kwargs)
        if len(args) != self._count:
            names = ", ".join(p.name for p in self.program.params)
            raise ArgumentError(
                f"{self.program.name}() takes {self._count} arguments ({names}), got {len(args)}"
            )
        name = self.program.name
        key = tuple(table_key(name, t, args[t.position]) for t in self.tables)
        executor = self.executors.get(key)
        if executor is None:
            if not self.jit:
                compiled = "; ".join(self._text(k) for k in self.executors)
                what = "max_neighbors, skip_values" + (", dtype" if self.dtype_from_table else "")
                raise ArgumentError(
                    f"{name}() has no specialisation for the tables {self._text(key)} "
                    f"(({what}); compiled: {compiled or 'none'}); compile "
                    "it first, or use with_backend(..., jit=True)"
                )
            executor = self._make(key)
        executor(*args)


__all__ = [
    "TABLE_DTYPES",
    "OpenTable",
    "TableDispatch",
    "TableKey",
    "open_tables",
    "specialise_tables",
    "table_key",
]
