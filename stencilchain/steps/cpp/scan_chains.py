"""Chains of calls that can run column by column: consecutive calls over one domain, at
least one of them a scan along its axis, each call's outputs temporaries that only the next
call reads at the point (the forward sweep and the back substitution of a tridiagonal
solve; the field operator computing a scan's arguments before it and the one copying its
results after it, as the lowering of a scan called from a field operator makes them).

Scans read their arguments at the current point only, and a field operator in a chain
reads what the call before it made only at the point, so running the whole chain in one
block of columns before the next block computes what running the calls one after another
computes; the temporaries between them then need only a block's columns (a buffer that
stays in cache), not an array of the whole domain that goes through memory twice. A field
operator in a chain may read other arrays at offsets along the axis or any dimension,
so none of them may be written by another call of the chain (a later block would read
what an earlier block wrote).
"""

from __future__ import annotations

from stencilchain.program import ir
from stencilchain.program.call_bodies import call_body
from stencilchain.program.ir_walk import nodes, refs_in
from stencilchain.program.node_traits import Reach, contains, traits_of

# Where a field operator in a chain may read: its body runs in the loop over a block's
# columns at each level, so no neighbour tables, regions or calls of their own.
_CHAINABLE_REACH = frozenset({Reach.NOTHING, Reach.POINT, Reach.OFFSET})


def scan_chains(program: ir.Program, *, field_operators: bool = True) -> list[tuple[int, ...]]:
    """The indices of the calls of each chain of two or more calls, in program order; with
    `field_operators` false, of scans only (field operators whose bodies are not inlined
    are emitted as functions that read arrays, not a chain's buffers)."""
    chains: list[tuple[int, ...]] = []
    current: list[int] = []

    def close() -> None:
        if len(current) > 1:  # every link has a scan on one side
            chains.append(tuple(current))

    for index in range(len(program.calls)):
        if current and _links(program, current, index, field_operators):
            current.append(index)
            continue
        close()
        current = [index] if _has_columns(program, index, field_operators) else []
    close()
    return chains


def chained_temporaries(program: ir.Program, chains: list[tuple[int, ...]]) -> list[str]:
    """The temporaries that calls of `chains` pass to the next call (all but the last's
    outputs), in program order."""
    return [o for chain in chains for index in chain[:-1] for o in program.calls[index].outs]


def chain_scan(program: ir.Program, chain: tuple[int, ...]) -> ir.ScanOperatorDef:
    """The first scan of `chain` (its axis is the chain's)."""
    for index in chain:
        scan = program.scan_operator(program.calls[index].callee)
        if scan is not None:
            return scan
    raise ValueError(f"chain {chain} has no scan")


def _is_scan(program: ir.Program, index: int) -> bool:
    return program.scan_operator(program.calls[index].callee) is not None


def _has_columns(program: ir.Program, index: int, field_operators: bool) -> bool:
    """Call `index` may start a chain: a scan over at least one dimension beside its axis,
    or a field operator that may be in a chain, over at least two dimensions."""
    call = program.calls[index]
    if len(call.domain.dims) < 2:
        return False
    return _is_scan(program, index) or (field_operators and _pointwise(program, index))


def _pointwise(program: ir.Program, index: int) -> bool:
    """Call `index` is a field operator whose body reads only at points and fixed offsets."""
    call = program.calls[index]
    if _is_scan(program, index):
        return False
    fop = program.field_operator(call.callee)
    return not contains(call_body(fop, call.args), lambda t: t.reach not in _CHAINABLE_REACH)


def _reads_at_point_only(program: ir.Program, index: int, names: set[str]) -> bool:
    """Field operator call `index` reads the fields `names` only at the point."""
    call = program.calls[index]
    fop = program.field_operator(call.callee)
    for node in nodes(call_body(fop, call.args)):
        reads_elsewhere = traits_of(node).reach not in (Reach.NOTHING, Reach.POINT)
        if reads_elsewhere and any(r.name in names for r in refs_in(node)):
            return False
    return True


def _box(call: ir.ProgramCall) -> list[tuple[object, ...]]:
    """The bounds of a call's domain (what its loops run over; each call's reads are
    checked on its own before any call runs)."""
    return [(dd.dim, dd.starts, dd.stops) for dd in call.domain.dims]


def _links(program: ir.Program, chain: list[int], after: int, field_operators: bool) -> bool:
    """Call `after` can run column by column right after the calls `chain` in one chain."""
    before = chain[-1]
    first, second = program.calls[before], program.calls[after]
    scan, next_scan = program.scan_operator(first.callee), program.scan_operator(second.callee)
    if scan is None and next_scan is None:
        return False  # two field operators: nothing to gain from a chain
    if next_scan is None and not (field_operators and _pointwise(program, after)):
        return False
    scans = [program.scan_operator(program.calls[k].callee) for k in [*chain, after]]
    if len({s.axis for s in scans if s is not None}) > 1:
        return False
    if _box(first) != _box(second):
        return False
    temporaries = {t.name for t in program.temporaries}
    for out in first.outs:
        if out not in temporaries:
            return False
        for index, call in enumerate(program.calls):
            reads = any(isinstance(a, ir.Ref) and a.name == out for a in call.args)
            if (reads and index != after) or (out in call.outs and index != before):
                return False
    if next_scan is None and not _reads_at_point_only(program, after, set(first.outs)):
        return False
    # no field operator of the chain reads what another call of it writes, but its link
    members = [*chain, after]
    for k in members:
        if _is_scan(program, k):
            continue
        position = members.index(k)
        link = set(program.calls[members[position - 1]].outs) if position > 0 else set()
        names = {r.name for r in refs_in(*program.calls[k].args)}
        for other in members:
            if other != k and (names & set(program.calls[other].outs)) - link:
                return False
    return True


__all__ = ["chain_scan", "chained_temporaries", "scan_chains"]
