"""Expression helpers for lowering scans called inside field operators into program calls.

The program trace (`ProgramTrace.record_call`) takes a field operator's body, inlined and
written in the program's names, and replaces each `ir.ScanCall`, innermost first, by
`Ref`s to temporaries that program calls make: these functions find the scan calls, the
offsets at which their results are read, and the domains the scans run over (the general
walks, `replace` and `refs_in`, are in program/ir_walk.py).
"""

from __future__ import annotations

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.extents import scan_reach, widen

# the range (lowest, highest) of the offsets of the reads, per dimension
OffsetRanges = dict[Dimension, tuple[int, int]]


def innermost_scan_call(expr: ir.Expr) -> ir.ScanCall | None:
    """The first scan call of `expr` (in field order) whose arguments hold no scan call."""
    for child in ir.children(expr):
        found = innermost_scan_call(child)
        if found is not None:
            return found
    return expr if isinstance(expr, ir.ScanCall) else None


def read_offsets(expr: ir.Expr, target: ir.ScanCall) -> OffsetRanges:
    """The range of offsets, per dimension of `target`'s result, at which `expr` reads it
    (a scan reads its own arguments where its result is read)."""
    found: OffsetRanges = {}

    def walk(node: ir.Expr, shift: OffsetRanges) -> None:
        if node == target:
            for dim in _dims(target):
                found[dim] = widen(found.get(dim), *shift.get(dim, (0, 0)))
            return
        if isinstance(node, ir.Shift):
            inner = dict(shift)
            for dim, amount in node.offsets:
                lo, hi = inner.get(dim, (0, 0))
                inner[dim] = (lo + amount, hi + amount)
            walk(node.expr, inner)
            return
        for child in ir.children(node):
            walk(child, shift)

    walk(expr, {})
    return found


def scan_domain(domain: ir.Domain, scan: ir.ScanOperatorDef, offsets: OffsetRanges) -> ir.Domain:
    """Where a scan called in a field operator runs: over the call's `domain` moved by the
    `offsets` at which its result is read, and along its axis from the domain's first level
    (forward; its last, backward) or beyond it where the result is read beyond it
    (`scan_reach`), so that where it starts does not depend on where it is read."""
    covered = dict(offsets)
    covered[scan.axis] = scan_reach(offsets.get(scan.axis, (0, 0)), scan.forward)
    return shifted_domain(domain, scan.dims, covered)


def shifted_domain(
    domain: ir.Domain, dims: tuple[Dimension, ...], offsets: OffsetRanges
) -> ir.Domain:
    """`domain` over `dims` (a subset of its own), extended by `offsets`: the region where
    a result read at those offsets from every point of `domain` is needed. Its halo is
    left (0, 0) for the call that runs over it to set."""
    by_dim = {dd.dim: dd for dd in domain.dims}
    result = []
    for dim in dims:
        dd = by_dim[dim]
        lo, hi = offsets.get(dim, (0, 0))
        starts = tuple(ir.Bound(b.value + lo, b.from_end, b.param) for b in dd.starts)
        stops = tuple(ir.Bound(b.value + hi, b.from_end, b.param) for b in dd.stops)
        result.append(ir.DimDomain(dim, starts, stops, (0, 0)))
    return ir.Domain(tuple(result), explicit=True)


def _dims(expr: ir.ScanCall) -> tuple[Dimension, ...]:
    t = expr.type
    return t.dims if isinstance(t, ir.FieldType) else t.elems[0].dims
