"""How far each field parameter is read from the current point (access extents)."""

from __future__ import annotations

from collections.abc import Mapping

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import int64

# per parameter name, per dimension, the (min, max) offset at which it is read
Extents = dict[str, dict[Dimension, tuple[int, int]]]
_Interval = Mapping[Dimension, tuple[int, int]]
_ANY = int64  # the dtype of a scan result's extents entry: only its dimensions count


def scan_result_key(scan: str) -> str:
    """The extents entry of the result of the scan operator `scan` called in a field operator."""
    return f"<result of {scan}>"


def field_operator_extents(
    fop: ir.FieldOperatorDef, fops: Mapping[str, ir.FieldOperatorDef]
) -> Extents:
    """The extents of every field parameter of `fop` that it reads."""
    return field_operator_reads(fop, fops)[0]


def field_operator_reads(
    fop: ir.FieldOperatorDef, fops: Mapping[str, ir.FieldOperatorDef]
) -> tuple[Extents, dict[str, set[Dimension]]]:
    """The extents of every field parameter of `fop` that it reads, and the dimensions
    along which a neighbour table picks where each is read (`ExtentsWalker.gathered`)."""
    walker = ExtentsWalker(fops)
    walker.visit(fop.body, {})
    return walker.extents, walker.gathered


class ExtentsWalker(ir.ExprVisitor[None]):
    """Collects in `extents` the offsets at which each field parameter is read:
    `visit(expr, shift)` walks `expr` read at the offsets `shift` from the current point."""

    def __init__(self, fops: Mapping[str, ir.FieldOperatorDef]) -> None:
        self.fops = fops
        self.extents: Extents = {}
        # per parameter, the dimensions along which a neighbour table picks where it is
        # read (anywhere in the array: the table's entries are checked to be in range)
        self.gathered: dict[str, set[Dimension]] = {}

    def visit_Ref(self, expr: ir.Ref, shift: _Interval) -> None:
        if not isinstance(expr.type, ir.FieldType):
            return
        seen = self.extents.setdefault(expr.name, {})
        for dim in expr.type.dims:
            lo, hi = shift.get(dim, (0, 0))
            old = seen.get(dim)
            seen[dim] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))

    def visit_Shift(self, expr: ir.Shift, shift: _Interval) -> None:
        inner = dict(shift)
        for dim, amount in expr.offsets:
            lo, hi = inner.get(dim, (0, 0))
            inner[dim] = (lo + amount, hi + amount)
        self.visit(expr.expr, inner)

    def visit_Call(self, expr: ir.Call, shift: _Interval) -> None:
        callee = self.fops[expr.callee]
        callee_extents, callee_gathered = field_operator_reads(callee, self.fops)
        for param, arg in zip(callee.params, expr.args):
            for dim in callee_gathered.get(param.name, ()):
                reads = ExtentsWalker(self.fops)
                reads.visit(arg, {})
                for name in reads.extents:
                    self.gathered.setdefault(name, set()).add(dim)
            if not isinstance(param.type, ir.FieldType):
                self.visit(arg, shift)
                continue
            if param.name not in callee_extents:
                continue  # the callee never reads this argument
            inner = dict(shift)
            for dim, (lo, hi) in callee_extents[param.name].items():
                slo, shi = inner.get(dim, (0, 0))
                inner[dim] = (slo + lo, shi + hi)
            self.visit(arg, inner)

    def visit_NeighborShift(self, expr: ir.NeighborShift, shift: _Interval) -> None:
        conn = expr.connectivity
        inner = ExtentsWalker(self.fops)
        inner.visit(expr.expr, {d: r for d, r in shift.items() if d not in conn.target})
        for name, dims in inner.extents.items():
            if dims.get(conn.source, (0, 0)) != (0, 0):
                lo, hi = dims[conn.source]
                raise DefinitionError(
                    f"'{name}' is shifted along {conn.source.name} ({lo:+d}..{hi:+d}) and then "
                    f"read through {conn.name}: the entities of {conn.source.name} have no "
                    "order to shift along; read neighbours through connectivities only"
                )
            seen = self.extents.setdefault(name, {})
            for dim, (lo, hi) in dims.items():
                old = seen.get(dim)
                seen[dim] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
            self.gathered.setdefault(name, set()).add(conn.source)
        for name, dims_gathered in inner.gathered.items():
            self.gathered.setdefault(name, set()).update(dims_gathered)

    def visit_ScanCall(self, expr: ir.ScanCall, shift: _Interval) -> None:
        """A scan reads its arguments at the points where its result is read, and along
        its axis also at every level from where it starts (the call's point, or below it
        for a forward scan read below, above it for a backward one: `scan_domain`). Its
        result becomes a temporary the size of the arrays, so it is also recorded as a
        read of a field named by `scan_result_key` (not an identifier: no parameter has
        that name)."""
        dims = (expr.type if isinstance(expr.type, ir.FieldType) else expr.type.elems[0]).dims
        covered = dict(shift)
        covered[expr.axis] = scan_reach(shift.get(expr.axis, (0, 0)), expr.forward)
        self.visit_Ref(ir.Ref(scan_result_key(expr.callee), ir.FieldType(dims, _ANY)), covered)
        self._visit_children(expr, covered)

    def _visit_children(self, expr: ir.Expr, shift: _Interval) -> None:
        """A pointwise node reads its operands where it is read itself."""
        for child in ir.children(expr):
            self.visit(child, shift)

    visit_Literal = _visit_children
    visit_Unary = _visit_children
    visit_Binary = _visit_children
    visit_Where = _visit_children
    visit_MathCall = _visit_children
    visit_Cast = _visit_children
    visit_Broadcast = _visit_children
    visit_Index = _visit_children  # reads no field
    visit_NeighborReduce = _visit_children  # its operand is read at every slot
    visit_MakeTuple = _visit_children
    visit_TupleGet = _visit_children


def scan_reach(reads: tuple[int, int], forward: bool) -> tuple[int, int]:
    """The offsets along a scan's axis, from a call's point, over which a scan whose result
    the call reads at `reads` runs: from the call's first level (or the first read below
    it) for a forward scan, down from its last (or the first read above it) for a backward
    one, so that where a scan starts does not depend on where its result is read."""
    lo, hi = reads
    return (min(lo, 0), hi) if forward else (lo, max(hi, 0))
