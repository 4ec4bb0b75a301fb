"""Where each field parameter is read from the current point (access extents), the reads
that happen only where a branch of a concat_where is selected (windows), and the
dimensions along which a neighbour table picks where a field is read (gathered)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import int64
from stencilchain.program.regions import complement, intersect

# per parameter name, per dimension, the (min, max) offset at which it is read
Extents = dict[str, dict[Dimension, tuple[int, int]]]
# per parameter name, per dimension, per (interval, shift) of a branch, the (min, max) offset
# of its reads from the point where the concat_where is evaluated (see ir.Window)
Windows = dict[str, dict[Dimension, dict[tuple[ir.Interval, int], tuple[int, int]]]]
# the bound parameters of the field operators being walked: name -> (argument, its scope)
_Scope = Mapping[str, tuple[ir.Expr, "_Scope"]]
# per dimension, the intervals of the enclosing branch on it and the offset of its point
_Guard = Mapping[Dimension, tuple[tuple[ir.Interval, ...], int]]
_ANY = int64  # the dtype of a scan result's extents entry: only its dimensions count


def scan_result_key(scan: str) -> str:
    """The extents entry of the result of the scan operator `scan` called in a field operator."""
    return f"<result of {scan}>"


def scan_reach(reads: tuple[int, int], forward: bool) -> tuple[int, int]:
    """The offsets along a scan's axis, from a call's point, over which a scan whose result
    the call reads at `reads` runs: from the call's first level (or the first read below
    it) for a forward scan, down from its last (or the first read above it) for a backward
    one, so that where a scan starts does not depend on where its result is read."""
    lo, hi = reads
    return (min(lo, 0), hi) if forward else (lo, max(hi, 0))


@dataclasses.dataclass
class Reads:
    """What a field operator reads: `extents` everywhere, `windows` only where a branch
    is selected (along the branch's dimension; along the others its reads are in `extents`)."""

    extents: Extents
    windows: Windows
    # per parameter, the dimensions along which a neighbour table picks where it is read
    # (anywhere in the array: the table's entries are checked to be in range)
    gathered: dict[str, set[Dimension]] = dataclasses.field(default_factory=dict)


def field_operator_reads(
    fop: ir.FieldOperatorDef, fops: Mapping[str, ir.FieldOperatorDef]
) -> Reads:
    """The reads of every field parameter of `fop`, at exact offsets (calls are walked
    through, their parameters bound to the caller's arguments)."""
    walker = ExtentsWalker(fops)
    walker.visit(fop.body, {}, {}, {})
    return Reads(walker.extents, walker.windows, walker.gathered)


def widen(old: tuple[int, int] | None, lo: int, hi: int) -> tuple[int, int]:
    """The range (min, max) of offsets `old` (None: none yet) extended by [lo, hi]."""
    return (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))


def _moved(intervals: tuple[ir.Interval, ...], delta: int) -> tuple[ir.Interval, ...]:
    """`intervals` in the coordinates of a point `delta` further along."""

    def move(bounds: tuple[ir.Bound, ...]) -> tuple[ir.Bound, ...]:
        return tuple(b.moved(delta) for b in bounds)

    return tuple(ir.Interval(move(i.starts), move(i.stops)) for i in intervals)


class ExtentsWalker(ir.ExprVisitor[None]):
    """Collects the offsets at which each field parameter is read: `visit(expr, pos, scope,
    guard)` walks `expr` evaluated at the offsets `pos` from the current point, with the
    parameters of the field operators called on the way bound in `scope`, inside the
    branches of `guard`."""

    def __init__(self, fops: Mapping[str, ir.FieldOperatorDef]) -> None:
        self.fops = fops
        self.extents: Extents = {}
        self.windows: Windows = {}
        self.gathered: dict[str, set[Dimension]] = {}
        # what was walked already (with what its key's ids belong to, kept alive): a walk
        # records the same reads each time, so a shared sub-expression is walked once per
        # position, scope and guard (docs/adr/0056)
        self._walked: dict[tuple[object, ...], tuple[ir.Expr, _Scope]] = {}

    def visit(
        self, expr: ir.Expr, pos: Mapping[Dimension, int], scope: _Scope, guard: _Guard
    ) -> None:
        key = (id(expr), tuple(pos.items()), id(scope), tuple(guard.items()))
        if key in self._walked:
            return
        self._walked[key] = (expr, scope)
        super().visit(expr, pos, scope, guard)

    def visit_Ref(
        self, expr: ir.Ref, pos: Mapping[Dimension, int], scope: _Scope, guard: _Guard
    ) -> None:
        bound = scope.get(expr.name)
        if bound is not None:
            arg, arg_scope = bound
            self.visit(arg, pos, arg_scope, guard)
            return
        if not isinstance(expr.type, ir.FieldType):
            return
        seen = self.extents.setdefault(expr.name, {})
        for dim in expr.type.dims:
            offset = pos.get(dim, 0)
            if dim not in guard:
                seen[dim] = widen(seen.get(dim), offset, offset)
                continue
            intervals, shift = guard[dim]
            windows = self.windows.setdefault(expr.name, {}).setdefault(dim, {})
            for interval in intervals:
                key = (interval, shift)
                windows[key] = widen(windows.get(key), offset - shift, offset - shift)

    def visit_Shift(
        self, expr: ir.Shift, pos: Mapping[Dimension, int], scope: _Scope, guard: _Guard
    ) -> None:
        inner = dict(pos)
        for dim, amount in expr.offsets:
            inner[dim] = inner.get(dim, 0) + amount
        self.visit(expr.expr, inner, scope, guard)

    def visit_Call(
        self, expr: ir.Call, pos: Mapping[Dimension, int], scope: _Scope, guard: _Guard
    ) -> None:
        callee = self.fops[expr.callee]
        inner = {p.name: (arg, scope) for p, arg in zip(callee.params, expr.args)}
        self.visit(callee.body, pos, inner, guard)

    def visit_ConcatWhere(
        self, expr: ir.ConcatWhere, pos: Mapping[Dimension, int], scope: _Scope, guard: _Guard
    ) -> None:
        shift = pos.get(expr.dim, 0)
        for branch, intervals in (
            (expr.true, expr.intervals),
            (expr.false, complement(expr.intervals)),
        ):
            outer = guard.get(expr.dim)
            if outer is not None:  # inside a branch on the same dimension: both hold
                intervals = intersect(_moved(outer[0], shift - outer[1]), intervals)
            self.visit(branch, pos, scope, {**guard, expr.dim: (intervals, shift)})

    def visit_NeighborShift(
        self, expr: ir.NeighborShift, pos: Mapping[Dimension, int], scope: _Scope, guard: _Guard
    ) -> None:
        """The operand is read anywhere along the source dimension (where the table points),
        at the same offsets along the others."""
        conn = expr.connectivity
        self._gather(
            expr.expr,
            conn.source,
            conn.target,
            (pos, scope, guard),
            lambda name, lo, hi: (
                f"'{name}' is shifted along {conn.source.name} ({lo:+d}..{hi:+d}) and then "
                f"read through {conn.name}: the entities of {conn.source.name} have no "
                "order to shift along; read neighbours through connectivities only"
            ),
            # a table from a dimension to itself (C2C) reads its operand where the entries
            # point, not at the point: a read at the point would narrow a domain by the
            # operand's own range (program/own_ranges.py)
            at_point=conn.source not in conn.target,
        )

    def visit_DynamicShift(
        self, expr: ir.DynamicShift, pos: Mapping[Dimension, int], scope: _Scope, guard: _Guard
    ) -> None:
        """The offset is read at the point; the operand anywhere along `dim` (where the
        offsets point: they are checked to stay in the array, or in the ranges of the
        fields it reads) and at the point along the others, like a neighbour read along its
        source dimension. Not also at the point along `dim`: a read there would narrow a
        domain by the operand's own range (program/own_ranges.py), as for C2C."""
        self.visit(expr.offset, pos, scope, guard)
        dim = expr.dim
        self._gather(
            expr.expr,
            dim,
            (dim,),
            (pos, scope, guard),
            lambda name, lo, hi: (
                f"'{name}' is shifted along {dim.name} ({lo:+d}..{hi:+d}) and then "
                f"read through sc.as_offset({dim.name}, ...): give the whole offset "
                "in the offset field (pass off + 1 for f(K + 1)(sc.as_offset(K, off)))"
            ),
            at_point=False,
        )

    def _gather(
        self,
        operand: ir.Expr,
        along: Dimension,
        dropped: Sequence[Dimension],
        at: tuple[Mapping[Dimension, int], _Scope, _Guard],
        shifted: Callable[[str, int, int], str],
        at_point: bool = True,
    ) -> None:
        """Record `operand` as read anywhere along `along` (where a table or an offset field
        points; also at offset 0 unless `at_point` is False) and at the point's offsets
        along the others (`dropped`: the dimensions the read replaces); a shift of a field
        along `along` before it is `shifted`'s error."""
        pos, scope, guard = at
        inner = ExtentsWalker(self.fops)
        inner.visit(
            operand,
            {d: a for d, a in pos.items() if d not in dropped},
            scope,
            {d: g for d, g in guard.items() if d not in dropped},
        )
        for name, dims in inner.extents.items():
            if dims.get(along, (0, 0)) != (0, 0):
                raise DefinitionError(shifted(name, *dims[along]))
            seen = self.extents.setdefault(name, {})
            for dim, (lo, hi) in dims.items():
                if dim != along or at_point:
                    seen[dim] = widen(seen.get(dim), lo, hi)
            self.gathered.setdefault(name, set()).add(along)
        for name, windowed in inner.windows.items():
            mine = self.windows.setdefault(name, {})
            for dim, by_window in windowed.items():
                target = mine.setdefault(dim, {})
                for key, (lo, hi) in by_window.items():
                    target[key] = widen(target.get(key), lo, hi)
        for name, dims_gathered in inner.gathered.items():
            self.gathered.setdefault(name, set()).update(dims_gathered)

    def visit_ScanCall(
        self, expr: ir.ScanCall, pos: Mapping[Dimension, int], scope: _Scope, guard: _Guard
    ) -> None:
        """A scan reads its arguments at the points where its result is read, and along
        its axis also at every level from where it starts (the call's point, or below it
        for a forward scan read below, above it for a backward one: `scan_reach`). Its
        result becomes a temporary the size of the arrays, so it is also recorded as a
        read of a field named by `scan_result_key` (not an identifier: no parameter has
        that name)."""
        dims = (expr.type if isinstance(expr.type, ir.FieldType) else expr.type.elems[0]).dims
        offset = pos.get(expr.axis, 0)
        for level in sorted(set(scan_reach((offset, offset), expr.forward))):
            at = {**pos, expr.axis: level}
            result = ir.Ref(scan_result_key(expr.callee), ir.FieldType(dims, _ANY))
            self.visit_Ref(result, at, {}, guard)
            self._visit_children(expr, at, scope, guard)

    def _visit_children(
        self, expr: ir.Expr, pos: Mapping[Dimension, int], scope: _Scope, guard: _Guard
    ) -> None:
        """A pointwise node reads its operands where it is read itself."""
        for child in ir.children(expr):
            self.visit(child, pos, scope, guard)

    visit_Literal = _visit_children
    visit_Unary = _visit_children
    visit_Binary = _visit_children
    visit_Where = _visit_children
    visit_MathCall = _visit_children
    visit_Cast = _visit_children
    visit_Broadcast = _visit_children
    visit_Index = _visit_children  # reads no field
    visit_NeighborReduce = _visit_children  # its operand is read at every slot
    visit_LocalSlot = _visit_children  # its operand is read at one slot
    visit_MakeTuple = _visit_children
    visit_TupleGet = _visit_children
