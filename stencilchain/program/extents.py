"""Where each field parameter is read from the current point (access extents), and the
reads that happen only where a branch of a concat_where is selected (windows)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
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


@dataclasses.dataclass
class Reads:
    """What a field operator reads: `extents` everywhere, `windows` only where a branch
    is selected (along the branch's dimension; along the others its reads are in `extents`)."""

    extents: Extents
    windows: Windows

    def names(self) -> set[str]:
        return set(self.extents) | set(self.windows)


def field_operator_reads(
    fop: ir.FieldOperatorDef, fops: Mapping[str, ir.FieldOperatorDef]
) -> Reads:
    """The reads of every field parameter of `fop`, at exact offsets (calls are walked
    through, their parameters bound to the caller's arguments)."""
    walker = ExtentsWalker(fops)
    walker.visit(fop.body, {}, {}, {})
    return Reads(walker.extents, walker.windows)


def _widen(old: tuple[int, int] | None, lo: int, hi: int) -> tuple[int, int]:
    return (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))


def _moved(intervals: tuple[ir.Interval, ...], delta: int) -> tuple[ir.Interval, ...]:
    """`intervals` in the coordinates of a point `delta` further along."""

    def move(bounds: tuple[ir.Bound, ...]) -> tuple[ir.Bound, ...]:
        return tuple(ir.Bound(b.value + delta, b.from_end) for b in bounds)

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
                seen[dim] = _widen(seen.get(dim), offset, offset)
                continue
            intervals, shift = guard[dim]
            windows = self.windows.setdefault(expr.name, {}).setdefault(dim, {})
            for interval in intervals:
                key = (interval, shift)
                windows[key] = _widen(windows.get(key), offset - shift, offset - shift)

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
    visit_MakeTuple = _visit_children
    visit_TupleGet = _visit_children
