"""Expression helpers for lowering scans called inside field operators into program calls.

The program trace (`ProgramTrace.record_call`) takes a field operator's body, inlined and
written in the program's names, and replaces each `ir.ScanCall`, innermost first, by
`Ref`s to temporaries that program calls make: these functions find the scan calls, the
offsets at which their results are read, and the domains the scans run over (the general
walks, `replace` and `refs_in`, are in program/ir_walk.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.extents import scan_reach, widen
from stencilchain.program.regions import complement, intersect

# the range (lowest, highest) of the offsets of the reads, per dimension
OffsetRanges = dict[Dimension, tuple[int, int]]


def innermost_scan_call(expr: ir.Expr) -> ir.ScanCall | None:
    """The first scan call of `expr` (in field order) whose arguments hold no scan call
    (each shared sub-expression searched once)."""
    searched: set[int] = set()  # nodes below `expr`, alive while it is

    def search(node: ir.Expr) -> ir.ScanCall | None:
        if id(node) in searched:
            return None  # nothing found there the first time
        searched.add(id(node))
        for child in ir.children(node):
            found = search(child)
            if found is not None:
                return found
        return node if isinstance(node, ir.ScanCall) else None

    return search(expr)


def read_offsets(expr: ir.Expr, target: ir.ScanCall) -> OffsetRanges:
    """The range of offsets, per dimension of `target`'s result, at which `expr` reads it
    (a scan reads its own arguments where its result is read)."""
    found: OffsetRanges = {}
    walked: set[tuple[int, tuple[tuple[Dimension, tuple[int, int]], ...]]] = set()

    def walk(node: ir.Expr, shift: OffsetRanges) -> None:
        key = (id(node), tuple(shift.items()))  # a shared node: once per shift
        if key in walked:
            return
        walked.add(key)
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


def scan_domain(
    domain: ir.Domain,
    scan: ir.ScanOperatorDef,
    offsets: OffsetRanges,
    branch: tuple[ir.Interval, int] | None = None,
) -> ir.Domain:
    """Where a scan called in a field operator runs: over the call's `domain` moved by the
    `offsets` at which its result is read, and along its axis from the domain's first level
    (forward; its last, backward) or beyond it where the result is read beyond it
    (`scan_reach`), so that where it starts does not depend on where it is read. A scan in
    a concat_where's branch on its axis (`branch`: the branch's interval, at an offset from
    the call's point) counts from the first (last) level of the domain where the branch
    is selected instead (docs/adr/0024)."""
    covered = dict(offsets)
    covered[scan.axis] = scan_reach(offsets.get(scan.axis, (0, 0)), scan.forward)
    if branch is not None:
        domain = _within(domain, scan.axis, *branch)
    return shifted_domain(domain, scan.dims, covered)


def _within(domain: ir.Domain, axis: Dimension, interval: ir.Interval, shift: int) -> ir.Domain:
    """`domain` narrowed along `axis` to the points `p` with `p + shift` in `interval`."""

    def moved(bounds: tuple[ir.Bound, ...]) -> tuple[ir.Bound, ...]:
        return tuple(b.moved(-shift) for b in bounds)

    dims = tuple(
        dataclasses.replace(
            dd,
            starts=_tightest(dd.starts + moved(interval.starts), max),
            stops=_tightest(dd.stops + moved(interval.stops), min),
        )
        if dd.dim == axis
        else dd
        for dd in domain.dims
    )
    return dataclasses.replace(domain, dims=dims)


def _tightest(
    bounds: tuple[ir.Bound, ...], pick: Callable[[Iterable[int]], int]
) -> tuple[ir.Bound, ...]:
    """One bound per anchor, the tightest, in the order the anchors first appear."""
    by_anchor: dict[tuple[bool, object, str], list[ir.Bound]] = {}
    for b in bounds:
        by_anchor.setdefault(b.anchor, []).append(b)
    return tuple(
        dataclasses.replace(group[0], value=pick(b.value for b in group))
        for group in by_anchor.values()
    )


def scan_branch(expr: ir.Expr, target: ir.ScanCall, where: str) -> tuple[ir.Interval, int] | None:
    """The interval of the concat_where branch along `target`'s axis that every place of
    `target` in `expr` lies in (intersected over nested branches on the axis), with the
    offset from the call's point at which it is evaluated; None where `target` lies in no
    such branch, or in several different ones. A branch selected on several intervals
    along the axis is a DefinitionError: the scan would have no one first level."""
    axis = target.axis
    found: list[tuple[tuple[ir.Interval, ...], int] | None] = []
    walked: set[tuple[int, int, tuple[tuple[ir.Interval, ...], int] | None]] = set()

    def walk(node: ir.Expr, shift: int, guard: tuple[tuple[ir.Interval, ...], int] | None) -> None:
        if (id(node), shift, guard) in walked:  # a shared node: once per shift and guard
            return
        walked.add((id(node), shift, guard))
        if node == target:
            found.append(guard)
            return
        if isinstance(node, ir.Shift):
            walk(node.expr, shift + dict(node.offsets).get(axis, 0), guard)
            return
        if isinstance(node, ir.ConcatWhere) and node.dim == axis:
            for branch, intervals in (
                (node.true, node.intervals),
                (node.false, complement(node.intervals)),
            ):
                if guard is not None:
                    outer = tuple(
                        ir.Interval(
                            tuple(b.moved(shift - guard[1]) for b in i.starts),
                            tuple(b.moved(shift - guard[1]) for b in i.stops),
                        )
                        for i in guard[0]
                    )
                    intervals = intersect(outer, intervals)
                walk(branch, shift, (intervals, shift))
            return
        for child in ir.children(node):
            walk(child, shift, guard)

    walk(expr, 0, None)
    if not found or any(g is None or g != found[0] for g in found):
        return None
    guard = found[0]
    assert guard is not None
    intervals, shift = guard
    intervals = tuple(i for i in intervals if not _outside_every_array(i, shift))
    if not intervals:  # a branch that its enclosing ones never select: the scan runs nowhere
        nowhere = (ir.Bound(0, False),)
        return ir.Interval(nowhere, nowhere), shift
    if len(intervals) != 1:
        raise DefinitionError(
            f"{where}: calls scan operator {target.callee} in a branch of a concat_where "
            f"selected on {len(intervals)} intervals along {axis.name} "
            f"({', '.join(map(repr, intervals))}); a scan in a branch starts where the branch "
            "starts, so its branch must be one interval: split the condition into nested "
            "concat_wheres, each with its own scan call"
        )
    return intervals[0], shift


def shifted_domain(
    domain: ir.Domain, dims: tuple[Dimension, ...], offsets: OffsetRanges
) -> ir.Domain:
    """`domain` over `dims` (a subset of its own, or reached through tables), extended by
    `offsets`: the region where a result read at those offsets from every point of
    `domain` is needed. Its halo is left (0, 0) for the call that runs over it to set. A
    dimension of `dims` that `domain` lacks (a scan over edges whose result a call over
    cells reads through a table) is covered whole: a neighbour read lands anywhere along
    it."""
    by_dim = {dd.dim: dd for dd in domain.dims}
    result = []
    for dim in dims:
        if dim not in by_dim:
            result.append(ir.DimDomain(dim, (ir.Bound(0, False),), (ir.Bound(0, True),), (0, 0)))
            continue
        dd = by_dim[dim]
        lo, hi = offsets.get(dim, (0, 0))
        starts = tuple(b.moved(lo) for b in dd.starts)
        stops = tuple(b.moved(hi) for b in dd.stops)
        result.append(ir.DimDomain(dim, starts, stops, (0, 0)))
    return ir.Domain(tuple(result), explicit=True)


def _dims(expr: ir.ScanCall) -> tuple[Dimension, ...]:
    t = expr.type
    return t.dims if isinstance(t, ir.FieldType) else t.elems[0].dims


def _outside_every_array(interval: ir.Interval, shift: int) -> bool:
    """Whether no point `p` of any array (`[0, size)`) has `p + shift` in `interval` (as
    the complement of `K == 0` has below level 0): a literal stop from the start at or
    below `shift`, or a start from the end at or above it."""
    return any(
        not b.from_end and b.param is None and b.value <= shift for b in interval.stops
    ) or any(b.from_end and b.value >= shift for b in interval.starts)
