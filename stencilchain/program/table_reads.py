"""The neighbour-table entries a call of a program specialised for its fields' own ranges
reads, checked against the ranges of the fields they are read of (issue 21).

Along a table's source dimension (Vertex for E2V) a field may cover part of the index space
`[0, n)`: `sc.as_field((Vertex,), a[2:], start={Vertex: 2})`. Every entry is in `[0, n)`
(program/tables.py), but one that the call reads must also lie in the range of the field
read there: the generated code indexes the program's index space, the bindings shift each
field's data pointer by its start, so an entry `e` reads the field's element `e - start`.
`TableReads.check` walks each call's field operator over the call's box, as the embedded
executor evaluates it, with the points along a source dimension held as the entries of
the rows read (`Points`, composed shifts too: `a(E2V[0])(C2E[0])`), and raises the
ArgumentError naming the table, its row and entry, and the field, before any call runs.
Reads of a temporary are checked against where the call that made it wrote it. A missing
neighbour (-1) reads nothing. A check in NumPy, per call: only calls of fields over their
own ranges along a table's source dimension pay it (`TableReads.active`).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping
from typing import Any, Union

import numpy as np

from stencilchain.errors import ArgumentError
from stencilchain.program import ir
from stencilchain.program.arguments import ArgumentChecker
from stencilchain.program.connectivity import Connectivity
from stencilchain.program.device import Device
from stencilchain.program.dimensions import Dimension
from stencilchain.program.domains import resolve_domain, selected
from stencilchain.program.field_values import host_array
from stencilchain.program.records import frozen
from stencilchain.program.semantics import literal_value, operate


@frozen
class Points:
    """Points along a table's source dimension reached through its entries: the entries of
    `rows` x `slots` of a table (parameter name), flat, row by row; `at` the point each
    reads (the entry moved by any shift after it), `valid` which are read (None: all; not
    a missing neighbour, and in the branch that is selected there)."""

    at: np.ndarray
    valid: np.ndarray | None
    entries: np.ndarray
    rows: np.ndarray
    slots: np.ndarray
    table: str

    def moved(self, amount: int) -> Points:
        return dataclasses.replace(self, at=self.at.astype(np.int64) + amount)

    def where(self, keep: np.ndarray) -> Points:
        return dataclasses.replace(self, valid=keep if self.valid is None else self.valid & keep)

    def read(self) -> np.ndarray:
        """The points read (those valid)."""
        return self.at if self.valid is None else self.at[self.valid]

    def first_outside(self, lo: int, hi: int) -> int | None:
        """The position of the first point read outside [lo, hi), or None."""
        read = self.read()
        if not read.size or (int(read.min()) >= lo and int(read.max()) < hi):
            return None
        bad = (self.at < lo) | (self.at >= hi)
        if self.valid is not None:
            bad &= self.valid
        return int(np.flatnonzero(bad)[0])

    def origin(self, k: int) -> tuple[int, int, int]:
        """The row, slot and entry that point `k` came from."""
        width = self.slots.size
        return int(self.rows[k // width]), int(self.slots[k % width]), int(self.entries[k])


Extent = Union[tuple[int, int], Points]
Box = Mapping[Dimension, Extent]


@frozen
class _Arg:
    """A field parameter bound to a program's field (argument or temporary) of this name."""

    name: str


@frozen
class _Lazy:
    """A field parameter of a called field operator, bound to the caller's expression."""

    expr: ir.Expr
    env: Mapping[str, Any]


class TableReads:
    """The check of the table entries that the calls of `program` (a specialisation,
    `own_ranges.specialise_ranges`) read; built once per specialisation."""

    def __init__(self, program: ir.Program) -> None:
        self.program = program
        self.fops = {f.name: f for f in program.field_operators}
        self.tables = {
            p.type.connectivity.name: p.name
            for p in program.params
            if isinstance(p.type, ir.TableType)
        }
        self.temporaries = {t.name for t in program.temporaries}
        self.connectivity = {table: conn for conn, table in self.tables.items()}
        # per (field, dimension) of a field over its own range there: (start, gap)
        self.ranges: dict[tuple[str, Dimension], tuple[int, int]] = {}
        for name, axes in program.ranges:
            for dim, sg in zip(program.field_type(name).dims, axes):
                if sg != (0, 0):
                    self.ranges[(name, dim)] = sg
        # only entries are checked: the rows span the index space (own_ranges.RangeKeys),
        # and a temporary read through a table holds values over all of its source
        # dimension unless a field's range along that dimension narrowed its call
        sources = {
            p.type.connectivity.source for p in program.params if isinstance(p.type, ir.TableType)
        }
        self.active = any(dim in sources for _, dim in self.ranges)

    def check(self, sizes: Mapping[Dimension, int], values: Mapping[str, Any]) -> None:
        """Raise the ArgumentError of the first entry a call reads outside the range of the
        field it reads (`sizes`: the index space, `values`: the arguments by parameter name,
        checked). A domain that leaves a field's range is the DomainError it always was."""
        written: dict[str, dict[Dimension, tuple[int, int]]] = {}
        for call in self.program.calls:
            box = resolve_domain(call, sizes, self.program.name, values)
            fop = self.fops.get(call.callee)
            if box is not None and fop is not None:  # scans read no tables
                env: dict[str, Any] = {}
                for param, arg in zip(fop.params, call.args):
                    if isinstance(arg, ir.Literal):
                        env[param.name] = literal_value(arg)
                        continue
                    assert isinstance(arg, ir.Ref), arg  # a program passes names or literals
                    if isinstance(param.type, ir.FieldType):
                        env[param.name] = _Arg(arg.name)
                    else:
                        env[param.name] = values[arg.name]
                ReadsWalker(self, call, sizes, values, written).visit(fop.body, env, box)
            for name in call.outs:
                if name in self.temporaries:  # an empty domain writes nothing
                    written[name] = (
                        dict(box)
                        if box is not None
                        else {dd.dim: (0, 0) for dd in call.domain.dims}
                    )


class ReadsWalker(ir.ExprVisitor[Any]):
    """The reads of one call's field operator: `visit(expr, env, box)` visits what
    evaluating `expr` over `box` reads (every element of a tuple, as the executors may) and
    returns the value of a scalar expression (None for a field)."""

    def __init__(
        self,
        reads: TableReads,
        call: ir.ProgramCall,
        sizes: Mapping[Dimension, int],
        values: Mapping[str, Any],
        written: Mapping[str, Mapping[Dimension, tuple[int, int]]],
    ) -> None:
        self.reads = reads
        self.call = call
        self.sizes = sizes
        self.values = values
        self.written = written
        # a shared sub-expression visited once per environment and box object (its reads
        # are the same each time; a box may hold arrays of points, so it is known by
        # identity), with what the key's ids belong to kept alive: docs/adr/0056
        self._visited: dict[tuple[int, int, int], tuple[Any, Any]] = {}

    def visit(self, expr: ir.Expr, env: Mapping[str, Any], box: Box) -> Any:
        key = (id(expr), id(env), id(box))
        known = self._visited.get(key)
        if known is None:
            known = self._visited[key] = (super().visit(expr, env, box), (expr, env, box))
        return known[0]

    def _children(self, expr: ir.Expr, env: Mapping[str, Any], box: Box) -> Any:
        operands = [self.visit(e, env, box) for e in ir.children(expr)]
        if isinstance(expr.type, ir.FieldType):
            return None
        return operate(expr, operands)

    # both branches of a `where` are read everywhere
    visit_Unary = visit_Binary = visit_Where = visit_MathCall = visit_Cast = _children

    def visit_Literal(self, expr: ir.Literal, env: Mapping[str, Any], box: Box) -> Any:
        return literal_value(expr)

    def visit_Index(self, expr: ir.Index, env: Mapping[str, Any], box: Box) -> Any:
        return None

    def visit_Ref(self, expr: ir.Ref, env: Mapping[str, Any], box: Box) -> Any:
        bound = env[expr.name]
        if isinstance(bound, _Lazy):
            return self.visit(bound.expr, bound.env, box)
        if isinstance(bound, _Arg):
            self.check_points(bound.name, box)
            return None
        return bound

    def visit_Shift(self, expr: ir.Shift, env: Mapping[str, Any], box: Box) -> Any:
        moved = dict(box)
        for dim, amount in expr.offsets:
            extent = moved[dim]
            if isinstance(extent, Points):
                moved[dim] = extent.moved(amount)
            else:
                moved[dim] = (extent[0] + amount, extent[1] + amount)
        return self.visit(expr.expr, env, moved)

    def visit_Broadcast(self, expr: ir.Broadcast, env: Mapping[str, Any], box: Box) -> Any:
        self.visit(expr.expr, env, box)
        return None

    def visit_NeighborShift(self, expr: ir.NeighborShift, env: Mapping[str, Any], box: Box) -> Any:
        conn = expr.connectivity
        name = self.reads.tables[conn.name]
        table = host_array(self.values[name])
        if expr.slot is not None:
            first, last = expr.slot, expr.slot + 1
        else:
            local = box.get(conn.local, (0, table.shape[1]))
            assert not isinstance(local, Points), local
            first, last = local
        extent = box[conn.entity]
        if isinstance(extent, Points):  # the rows an outer table's entries reach
            rows = np.unique(extent.read())
            self._check_rows(name, conn, table, rows)
            entries = table[rows, first:last].ravel()
        else:
            rows = np.arange(*extent)
            self._check_rows(name, conn, table, rows)
            entries = table[extent[0] : extent[1], first:last].ravel()
        # a missing neighbour (-1) reads nothing
        valid = entries >= 0 if conn.skip_values is not False else None
        inner: dict[Dimension, Extent] = {
            d: e for d, e in box.items() if d not in (conn.entity, conn.local)
        }
        inner[conn.source] = Points(entries, valid, entries, rows, np.arange(first, last), name)
        self.visit(expr.expr, env, inner)
        return None

    def _check_rows(
        self, name: str, conn: Connectivity, table: np.ndarray, rows: np.ndarray
    ) -> None:
        """The table has the rows the call reads (RangeKeys made it span the index space)."""
        if rows.size and (rows[0] < 0 or rows[-1] >= table.shape[0]):
            raise ArgumentError(
                f"{self._where(name)}: the table of {conn.name} has {table.shape[0]} rows, but "
                f"the call of {self.call.callee} reads it at {conn.entity.name} "
                f"{int(rows[-1] if rows[-1] >= table.shape[0] else rows[0])}"
            )

    def visit_NeighborReduce(
        self, expr: ir.NeighborReduce, env: Mapping[str, Any], box: Box
    ) -> Any:
        self.visit(expr.expr, env, {**box, expr.axis: (0, self.sizes[expr.axis])})
        return None

    def visit_LocalSlot(self, expr: ir.LocalSlot, env: Mapping[str, Any], box: Box) -> Any:
        self.visit(expr.expr, env, {**box, expr.axis: (expr.slot, expr.slot + 1)})
        return None

    def visit_DynamicShift(self, expr: ir.DynamicShift, env: Mapping[str, Any], box: Box) -> Any:
        self.visit(expr.expr, env, {**box, expr.dim: (0, self.sizes[expr.dim])})
        self.visit(expr.offset, env, box)
        return None

    def visit_ConcatWhere(self, expr: ir.ConcatWhere, env: Mapping[str, Any], box: Box) -> Any:
        """Each branch where it is selected, and only there (as the executors evaluate it)."""
        extent = box[expr.dim]
        size = self.sizes[expr.dim]
        if isinstance(extent, Points):
            read = extent.read()
            if not read.size:
                return None
            lo, hi = int(read.min()), int(read.max()) + 1
            inside = selected(expr.intervals, lo, hi, size, env)
            mask = np.zeros(extent.at.shape, bool)
            for a, b in inside:
                mask |= (extent.at >= a) & (extent.at < b)
            self.visit(expr.true, env, {**box, expr.dim: extent.where(mask)})
            self.visit(expr.false, env, {**box, expr.dim: extent.where(~mask)})
            return None
        start, stop = extent
        inside = selected(expr.intervals, start, stop, size, env)
        cuts = sorted({start, stop, *(b for part in inside for b in part)})
        for lo, hi in itertools.pairwise(cuts):
            chosen = expr.true if any(a <= lo and hi <= b for a, b in inside) else expr.false
            self.visit(chosen, env, {**box, expr.dim: (lo, hi)})
        return None

    def visit_Call(self, expr: ir.Call, env: Mapping[str, Any], box: Box) -> Any:
        callee = self.reads.fops[expr.callee]
        inner: dict[str, Any] = {}
        for param, arg in zip(callee.params, expr.args):
            if isinstance(param.type, ir.FieldType):
                inner[param.name] = _Lazy(arg, env)
            else:
                inner[param.name] = self.visit(arg, env, box)
        return self.visit(callee.body, inner, box)

    def visit_MakeTuple(self, expr: ir.MakeTuple, env: Mapping[str, Any], box: Box) -> Any:
        for elem in expr.elems:
            self.visit(elem, env, box)
        return None

    def visit_TupleGet(self, expr: ir.TupleGet, env: Mapping[str, Any], box: Box) -> Any:
        return self.visit(expr.expr, env, box)

    def check_points(self, name: str, box: Box) -> None:
        """The points of `box` reached through table entries, checked against the range of
        field `name` (a program's argument or temporary) along their dimension."""
        for dim in self.reads.program.field_type(name).dims:
            extent = box.get(dim)
            if not isinstance(extent, Points):
                continue
            if name in self.reads.temporaries:
                lo, hi = self.written.get(name, {}).get(dim, (0, self.sizes[dim]))
                holds = f"temporary '{name}', which holds values over [{lo}, {hi})"
            else:
                start, gap = self.reads.ranges.get((name, dim), (0, 0))
                lo, hi = start, self.sizes[dim] - gap
                if (lo, hi) == (0, self.sizes[dim]):
                    continue  # every entry is in [0, n): program/tables.py
                holds = f"argument '{name}', which spans [{lo}, {hi})"
            k = extent.first_outside(lo, hi)
            if k is not None:
                row, slot, entry = extent.origin(k)
                point = int(extent.at[k])
                at = f" at {dim.name} {point}" if point != entry else ""
                raise ArgumentError(
                    f"{self._where(extent.table)}: the table of "
                    f"{self.reads.connectivity[extent.table]} holds {entry} at row {row}, slot "
                    f"{slot}, which the call of {self.call.callee} in "
                    f"{self.reads.program.name}() reads{at} of {holds} along {dim.name}: every "
                    "entry a call reads must lie in the range of the field it reads"
                )

    def _where(self, table: str) -> str:
        return f"argument '{table}' of {self.reads.program.name}()"


def table_read_check(
    program: ir.Program, device: Device = Device.CPU
) -> Callable[[tuple[Any, ...]], None] | None:
    """What checks the table reads of a call of `program` (a specialisation) before it
    runs: the arguments (plain arrays, in parameter order) checked as the specialisation
    checks them, then `TableReads.check`. None when no field of it is over its own range
    along a table's dimension (nothing to check beyond what every call checks)."""
    reads = TableReads(program)
    if not reads.active:
        return None
    checker = ArgumentChecker(program, device)
    names = tuple(p.name for p in program.params)

    def check(args: tuple[Any, ...]) -> None:
        sizes, values = checker.check(args)
        reads.check(sizes, dict(zip(names, values)))

    return check


__all__ = ["Points", "TableReads", "table_read_check"]
