"""Chains of scan calls that can run column by column: consecutive calls of scans along one
axis over one domain, each call's outputs temporaries that only the next call reads (the
forward sweep and the back substitution of a tridiagonal solve).

Scans read their arguments at the current point only, so running the whole chain in one
block of columns before the next block computes what running the calls one after another
computes; the temporaries between them then need only a block's columns (a buffer that
stays in cache), not an array of the whole domain that goes through memory twice.
"""

from __future__ import annotations

from stencilchain.program import ir


def scan_chains(program: ir.Program) -> list[tuple[int, ...]]:
    """The indices of the calls of each chain of two or more calls, in program order."""
    chains: list[tuple[int, ...]] = []
    current: list[int] = []
    for index in range(len(program.calls)):
        if current and _links(program, current[-1], index):
            current.append(index)
            continue
        if len(current) > 1:
            chains.append(tuple(current))
        current = [index] if _has_columns(program, index) else []
    if len(current) > 1:
        chains.append(tuple(current))
    return chains


def chained_temporaries(program: ir.Program, chains: list[tuple[int, ...]]) -> list[str]:
    """The temporaries that calls of `chains` pass to the next call (all but the last's
    outputs), in program order."""
    return [o for chain in chains for index in chain[:-1] for o in program.calls[index].outs]


def _has_columns(program: ir.Program, index: int) -> bool:
    """Call `index` is a scan over at least one dimension beside its axis."""
    call = program.calls[index]
    scan = program.scan_operator(call.callee)
    return scan is not None and len(call.domain.dims) > 1


def _links(program: ir.Program, before: int, after: int) -> bool:
    """Call `after` can run column by column right after call `before` in one chain."""
    first, second = program.calls[before], program.calls[after]
    scan, next_scan = program.scan_operator(first.callee), program.scan_operator(second.callee)
    if scan is None or next_scan is None or scan.axis != next_scan.axis:
        return False
    if first.domain.dims != second.domain.dims:
        return False
    temporaries = {t.name for t in program.temporaries}
    for out in first.outs:
        if out not in temporaries:
            return False
        for index, call in enumerate(program.calls):
            reads = any(isinstance(a, ir.Ref) and a.name == out for a in call.args)
            if (reads and index != after) or (out in call.outs and index != before):
                return False
    return True


__all__ = ["chained_temporaries", "scan_chains"]
