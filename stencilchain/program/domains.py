"""The boxes that program calls run over: a call's domain resolved for the arrays' sizes
and the scalar arguments, the parts of a range a concat_where branch is selected in, and
the messages of a domain that leaves the arrays or is empty (the C++ checks of both
families print the same ones, steps/cpp/domain_checks.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stencilchain.errors import DomainError
from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension


def resolve_domain(
    call: ir.ProgramCall,
    sizes: Mapping[Dimension, int],
    program_name: str,
    scalars: Mapping[str, Any] | None = None,
) -> dict[Dimension, tuple[int, int]] | None:
    """The call's box for these sizes and the values of the parameters its bounds name
    (`scalars`); None when it is empty. A box whose reads leave the arrays is a DomainError."""
    box = {dd.dim: dd.resolve(sizes[dd.dim], scalars) for dd in call.domain.dims}
    if any(stop <= start for start, stop in box.values()):
        return None  # an empty domain does nothing, whatever its other bounds
    for dd in call.domain.dims:
        size = sizes[dd.dim]
        start, stop = box[dd.dim]
        lo, hi = dd.halo
        if start - lo < 0 or stop + hi > size or start < 0 or stop > size:
            raise DomainError(
                f"call of {call.callee} in {program_name}(): domain {dd.dim.name}: "
                f"[{start}, {stop}) with reads from {dd.dim.name}-{lo} to {dd.dim.name}+{hi} "
                f"leaves the array of size {size} along {dd.dim.name}"
            )
        for own in dd.own:
            if start - own.lo < own.start or stop + own.hi > size - own.gap:
                raise DomainError(
                    own_range_message(
                        call.callee, program_name, dd.dim, own, (start, stop, size - own.gap)
                    )
                )
        for window in dd.windows:
            where = window.resolve(start, stop, size, scalars)
            if where is None:
                continue
            ws, we = where
            rlo, rhi = window.reads
            first, gap = window.range
            if ws + rlo < first or we + rhi > size - gap:
                raise DomainError(
                    window_message(
                        call.callee, program_name, dd.dim, window, (start, stop, ws, we, size - gap)
                    )
                )
    return box


def empty_domain_message(
    call: ir.ProgramCall,
    sizes: Mapping[Dimension, int],
    program_name: str,
    scalars: Mapping[str, Any] | None = None,
) -> str | None:
    """What an `EmptyDomainWarning` says of a call whose domain is empty although none of
    its arrays is (None when it is not such a call): along the first dimension where an
    inferred domain is empty, or where an explicit one is because the arrays are no larger
    than the call's reads (an explicit domain may be empty on purpose, by its parameters).
    The C++ of both families emits the same test (steps/cpp/domain_checks.py)."""
    if any(sizes[dd.dim] == 0 for dd in call.domain.dims):
        return None  # empty arrays: there is nothing to write
    for dd in call.domain.dims:
        size = sizes[dd.dim]
        start, stop = dd.resolve(size, scalars)
        lo, hi = dd.halo
        if stop <= start and (not call.domain.explicit or size <= lo + hi):
            return empty_message(call.callee, program_name, dd, (start, stop, size))
    return None


def empty_message(
    callee: str, program_name: str, dd: ir.DimDomain, values: tuple[int | str, int | str, int | str]
) -> str:
    """The EmptyDomainWarning of an empty domain along `dd`, from its start, stop and size
    (`values`; the C++ check passes printf conversions)."""
    start, stop, size = values
    d = dd.dim.name
    lo, hi = dd.halo
    return (
        f"call of {callee} in {program_name}(): domain {d}: [{start}, {stop}) is empty on "
        f"arrays of size {size} along {d}, too small for what the call reads (from {d}-{lo} "
        f"to {d}+{hi}), so the call writes nothing"
    )


def own_range_message(
    callee: str,
    program_name: str,
    dim: Dimension,
    own: ir.OwnRange,
    values: tuple[int | str, int | str, int | str],
) -> str:
    """The DomainError of reads (or writes) of an argument that leave its own range, from
    the domain's start and stop and the end of the argument's range (`values`; the C++
    check passes printf conversions)."""
    start, stop, end = values
    d = dim.name
    return (
        f"call of {callee} in {program_name}(): domain {d}: [{start}, {stop}) with reads "
        f"from {d}{-own.lo:+d} to {d}{own.hi:+d} of argument '{own.name}' leaves its range "
        f"[{own.start}, {end}) along {d}"
    )


def window_message(
    callee: str,
    program_name: str,
    dim: Dimension,
    window: ir.Window,
    values: tuple[int | str, int | str, int | str, int | str, int | str],
) -> str:
    """The DomainError of a window's reads that leave the array (or, in a program
    specialised for its arguments' ranges, the read field's own range), from the domain's
    start and stop, the window's evaluation points [ws, we) and the size (the range's end;
    `values`; the C++ check passes printf conversions)."""
    start, stop, ws, we, end = values
    d = dim.name
    rlo, rhi = window.reads
    if window.range == (0, 0):
        leaves = f"leaves the array of size {end} along {d}"
    else:
        leaves = (
            f"of argument '{window.field}' leaves its range [{window.range[0]}, {end}) along {d}"
        )
    return (
        f"call of {callee} in {program_name}(): domain {d}: [{start}, {stop}) with reads from "
        f"{d}{rlo:+d} to {d}{rhi:+d} in a concat_where branch selected where {d} is in "
        f"{window.interval!r}, at {d} in [{ws}, {we}), {leaves}"
    )


def selected(
    intervals: tuple[ir.Interval, ...],
    start: int,
    stop: int,
    size: int,
    scalars: Mapping[str, Any] | None = None,
) -> list[tuple[int, int]]:
    """The parts of `[start, stop)` inside `intervals` for this size and the values of the
    scalars their bounds name (may overlap)."""
    parts = []
    for interval in intervals:
        lo, hi = interval.resolve(size, scalars)
        a = start if lo is None else max(start, lo)
        b = stop if hi is None else min(stop, hi)
        if a < b:
            parts.append((a, b))
    return parts
