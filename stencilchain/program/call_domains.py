"""The domain of a program call: given (`domain=`, checked against the call's reads and
the regions the temporaries it reads hold) or inferred (the largest box in which every
read is inside the arrays and inside what earlier calls wrote), with the windows of reads
of concat_where branches that the call's check must hold."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.call_bounds import StaticInt, bound_of_expression, constant_bound
from stencilchain.program.dimensions import Dimension
from stencilchain.program.field_bounds import FieldBound
from stencilchain.program.program_args import ProgramArg
from stencilchain.program.program_scalars import ProgramScalar
from stencilchain.program.tracing import Symbol

if TYPE_CHECKING:
    from stencilchain.program.program_trace import ProgramTrace

# per dimension, per (interval, shift) of a concat_where branch and field it reads, the
# (min, max) offsets of its reads of the field from the point where the concat_where is
# evaluated (see ir.Window)
WindowReads = dict[Dimension, dict[tuple[ir.Interval, int, str], tuple[int, int]]]


def domain_of_call(
    trace: ProgramTrace,
    where: str,
    dims: tuple[Dimension, ...],
    read: dict[str, dict[Dimension, tuple[int, int]]],
    given: object,
    windows: WindowReads,
) -> ir.Domain:
    if given is not None and not isinstance(given, Mapping):
        raise DefinitionError(
            f"{where}: domain= must be a dict {{Dim: (start, stop)}}, got {given!r}"
        )
    given = dict(given or {})
    for dim in given:
        if dim not in dims:
            raise DefinitionError(
                f"{where}: domain names {dim!r}, which is not a dimension of the output "
                f"({', '.join(d.name for d in dims)})"
            )
    result = []
    for dim in dims:
        lo = max([0] + [-ext[dim][0] for ext in read.values() if dim in ext])
        hi = max([0] + [ext[dim][1] for ext in read.values() if dim in ext])
        if dim in given:
            starts, stops = _explicit_bounds(trace, where, dim, given[dim], lo, hi)
            check_temporary_reads(trace, where, dim, starts[0], stops[0], read)
        else:
            for window in dim_windows(windows.get(dim, {}), 0, 0):
                wlo, whi = _window_halo(window)
                lo, hi = max(lo, wlo), max(hi, whi)
            starts, stops = _inferred_bounds(trace, where, dim, read, lo, hi)
        held = dim_windows(windows.get(dim, {}), lo, hi)
        reads = field_reads(read, dim)
        result.append(
            ir.DimDomain(
                dim,
                starts,
                stops,
                (lo, hi),
                held,
                reads,
                inferred=dim not in given,
                branch_reads=branch_windows(windows.get(dim, {})),
            )
        )
    return ir.Domain(tuple(result), explicit=bool(given))


def field_reads(
    read: Mapping[str, Mapping[Dimension, tuple[int, int]]], dim: Dimension
) -> tuple[tuple[str, int, int], ...]:
    """`ir.DimDomain.reads`: per field read along `dim`, how far below and above each
    point of the domain (a program specialised for its arguments' ranges checks them)."""
    return tuple(
        (name, -ext[dim][0], ext[dim][1]) for name, ext in sorted(read.items()) if dim in ext
    )


def _explicit_bounds(
    trace: ProgramTrace, where: str, dim: Dimension, value: object, lo: int, hi: int
) -> tuple[tuple[ir.Bound, ...], tuple[ir.Bound, ...]]:
    if not (isinstance(value, tuple) and len(value) == 2):
        raise DefinitionError(
            f"{where}: domain of {dim.name} must be a tuple (start, stop) of ints or "
            "integer scalar parameters of the program (stop may be None for the end), "
            f"got {value!r}"
        )
    start_v, stop_v = (_literal(v) for v in value)
    start = _bound(trace, where, dim, "start", start_v, value)
    stop = ir.Bound(0, True) if stop_v is None else _bound(trace, where, dim, "stop", stop_v, value)
    # a static stop from the end (n + 1, n = -1) is the end
    if stop_v == 0 and not (isinstance(stop_v, StaticInt) and stop_v.base < 0):
        raise DefinitionError(
            f"{where}: domain of {dim.name} has stop 0, an empty range; use None for the end"
        )
    # a parameter bound, or one from a field's range, is checked at call time, like the
    # arrays' sizes
    if start.param is None and start.field is None and not start.from_end and start.value < lo:
        raise DefinitionError(
            f"{where}: domain of {dim.name} starts at {start.value} but the call reads "
            f"{dim.name}-{lo}, outside the array; start at {lo} or later"
        )
    if stop.from_end and stop.field is None and stop.value > -hi:
        raise DefinitionError(
            f"{where}: domain of {dim.name} stops at {stop!r} but the call reads "
            f"{dim.name}+{hi}, outside the array; stop at end-{hi} or earlier"
        )
    return (start,), (stop,)


def _bound(
    trace: ProgramTrace,
    where: str,
    dim: Dimension,
    side: str,
    value: object,
    pair: tuple[object, object],
) -> ir.Bound:
    """One end of an explicit domain: an int literal (negative: from the end), an integer
    scalar parameter of this program or an integer expression of them (resolved at call
    time, by the same rule), or a bound from a field's range (`sc.end_of(f, K) - 1`)."""
    if type(value) is int:
        return ir.Bound(value, from_end=value < 0)
    if isinstance(value, StaticInt):
        return value.bound()
    what = f"{where}: the {side} of the domain of {dim.name}"
    if isinstance(value, FieldBound):
        return value.bound(trace, dim, what)
    if isinstance(value, ProgramArg):
        if value.trace is not trace:
            raise DefinitionError(
                f"{what} is '{value.ref.name}', a parameter of another program; use an "
                f"int or an integer scalar parameter of {trace.name}"
            )
        ptype = value.ref.type
        if isinstance(ptype, ir.FieldType):
            raise DefinitionError(
                f"{what} is the {value.kind} '{value.ref.name}', a field {ptype!r}; a "
                "bound is an int or an integer scalar parameter (int32 or int64), or one "
                f"counted from a field's range: sc.end_of({value.ref.name}, {dim.name})"
            )
        if not ptype.is_integer:
            raise DefinitionError(
                f"{what} is parameter '{value.ref.name}' of type {ptype.name}; a bound "
                "parameter must be int32 or int64"
            )
        return ir.Bound(0, False, param=value.ref.name)
    if isinstance(value, ProgramScalar):
        if value.trace is not trace:
            raise DefinitionError(
                f"{what} is an expression of another program's parameters; use one of "
                f"{trace.name}'s"
            )
        return bound_of_expression(value.expr, what)
    raise DefinitionError(
        f"{what} must be an int, an integer scalar parameter of {trace.name} (int32 or "
        f"int64), an integer expression of them, or a bound from a field's range "
        f"(sc.end_of(field, {dim.name}) - 1), got {value!r} in {pair!r}"
    )


def _literal(value: object) -> object:
    """A bound written as math of int literals (gt4py's `minimum(1, 2)`) as its int, as if
    written so; anything else as it is."""
    constant = constant_bound(value.expr) if isinstance(value, Symbol) else None
    return value if constant is None else constant


def check_temporary_reads(
    trace: ProgramTrace,
    where: str,
    dim: Dimension,
    start: ir.Bound,
    stop: ir.Bound,
    read: dict[str, dict[Dimension, tuple[int, int]]],
) -> None:
    """An explicit domain may read a parameter's halo (the array's own values), but a
    temporary holds values only where the call that made it wrote: every read of one
    must stay there, for every array size."""
    temporaries = {t.name for t in trace.temporaries}
    check_temporary_reads_of(temporaries, trace.written, where, dim, start, stop, read)


def check_temporary_reads_of(
    temporaries: set[str],
    written: Mapping[str, ir.Domain],
    where: str,
    dim: Dimension,
    start: ir.Bound,
    stop: ir.Bound,
    read: Mapping[str, Mapping[Dimension, tuple[int, int]]],
) -> None:
    """`check_temporary_reads` of the temporaries named, which calls before wrote over the
    domains `written`."""
    for name, ext in read.items():
        if name not in temporaries or dim not in ext:
            continue
        rlo, rhi = ext[dim]
        made = next(wd for wd in written[name].dims if wd.dim == dim)
        # the lowest index read, and one past the highest
        first = start.moved(rlo)
        end = stop.moved(rhi)
        # written from the array's first index, or up to its end: every read is inside
        # on that side, since a call's reads are checked against the array before it runs
        checks = [
            (b, first, f"from {first!r}", f"from {b!r} on")
            for b in made.starts
            if b != ir.Bound(0, False)
        ]
        checks += [
            (end, b, f"up to {end!r}", f"below {b!r}") for b in made.stops if b != ir.Bound(0, True)
        ]
        for low, high, reads, holds in checks:
            if low.anchor == high.anchor and low.value <= high.value:
                continue
            if low.anchor == high.anchor:
                why = ""
            elif low.param is not None or high.param is not None:
                why = (
                    " (a bound given by a parameter can be anything at call time, so the "
                    "reads cannot be shown to stay inside it; give both calls the same "
                    f"parameter bounds along {dim.name}, with reads at offsets that stay "
                    "inside them)"
                )
            else:
                why = (
                    " (the bounds count from different ends, so the reads cannot stay "
                    "inside it for every array size)"
                )
            raise DefinitionError(
                f"{where}: domain of {dim.name} reads temporary '{name}' {reads} "
                f"({dim.name}{rlo:+d}..{dim.name}{rhi:+d} around [{start!r}, {stop!r})), "
                f"but '{name}' holds values only {holds}, where the call that made it "
                f"wrote{why}; narrow the domain, or leave {dim.name} out of domain= to "
                "infer it"
            )


def _inferred_bounds(
    trace: ProgramTrace,
    where: str,
    dim: Dimension,
    read: dict[str, dict[Dimension, tuple[int, int]]],
    lo: int,
    hi: int,
) -> tuple[tuple[ir.Bound, ...], tuple[ir.Bound, ...]]:
    """The largest box in which every read is inside the array and inside the region
    that earlier calls of this program wrote to the fields it reads."""
    starts = [ir.Bound(lo, False)]
    stops = [ir.Bound(-hi, True)]
    for name, ext in read.items():
        written = trace.written.get(name)
        if written is None or dim not in ext:
            continue
        rlo, rhi = ext[dim]
        for wd in written.dims:
            if wd.dim != dim:
                continue
            given = [b.param for b in (*wd.starts, *wd.stops) if b.param is not None]
            if given:
                raise DefinitionError(
                    f"{where}: reads '{name}', which an earlier call wrote over a domain of "
                    f"{dim.name} given by parameter '{given[0]}', so the region it holds "
                    f"is known only at call time; give this call an explicit domain of "
                    f"{dim.name} (domain={{{dim.name}: (start, stop)}})"
                )
            starts += [b.moved(-rlo) for b in wd.starts]
            stops += [b.moved(-rhi) for b in wd.stops]
    return tightest(starts, max), tightest(stops, min)


def dim_windows(
    windows: Mapping[tuple[ir.Interval, int, str], tuple[int, int]], lo: int, hi: int
) -> tuple[ir.Window, ...]:
    """The windows of one dimension that a call's check must hold: not those that no domain
    inside the array reaches, nor those whose reads stay inside the halo (lo, hi)."""
    return tuple(
        ir.Window(interval, shift, reads, name)
        for (interval, shift, name), reads in windows.items()
        if not _outside_every_domain(interval, shift)
        and (shift + reads[0] < -lo or shift + reads[1] > hi)
    )


def branch_windows(
    windows: Mapping[tuple[ir.Interval, int, str], tuple[int, int]],
) -> tuple[ir.Window, ...]:
    """Every window of one dimension that some domain inside the array reaches
    (`ir.DimDomain.branch_reads`)."""
    return tuple(
        ir.Window(interval, shift, reads, name)
        for (interval, shift, name), reads in windows.items()
        if not _outside_every_domain(interval, shift)
    )


def window_bounds(
    window: ir.Window, first: int, gap: int
) -> tuple[ir.Bound | None, ir.Bound | None]:
    """The start and stop (None: no bound) to which a window's reads narrow an inferred
    domain so that they stay inside `[first, size - gap)` (a field's own range), on the
    sides where its interval does not keep them inside (as `_window_halo` for the array)."""
    rlo, rhi = window.reads
    starts, stops = window.interval.starts, window.interval.stops
    low_inside = any(b.from_end or b.param is not None or b.value + rlo >= first for b in starts)
    high_inside = any(not b.from_end or b.value + rhi <= -gap for b in stops)
    start = None if low_inside else ir.Bound(first - (window.shift + rlo), False)
    stop = None if high_inside else ir.Bound(-(gap + window.shift + rhi), True)
    return start, stop


def _outside_every_domain(interval: ir.Interval, shift: int) -> bool:
    """Whether no point of any domain (inside the array: `[0, size)`) is evaluated inside
    `interval` at `shift`: a stop from the start at or below `shift`, or a start from the
    end at or above it."""
    return any(
        not b.from_end and b.param is None and b.value <= shift for b in interval.stops
    ) or any(b.from_end and b.value >= shift for b in interval.starts)


def _window_halo(window: ir.Window) -> tuple[int, int]:
    """How far a window's reads narrow an inferred domain, below and above: not at all on a
    side where its interval keeps the reads inside the array (a start from the first index
    with `start + lo >= 0`, a stop from the end with `stop + hi <= 0`) or bounds it from the
    other end or from a scalar (checked at the call, like an explicit domain); elsewhere like reads
    everywhere at the window's offsets."""
    rlo, rhi = window.reads
    starts, stops = window.interval.starts, window.interval.stops
    low_inside = any(b.from_end or b.param is not None or b.value + rlo >= 0 for b in starts)
    high_inside = any(not b.from_end or b.value + rhi <= 0 for b in stops)
    return (
        0 if low_inside else max(0, -(window.shift + rlo)),
        0 if high_inside else max(0, window.shift + rhi),
    )


def tightest(bounds: list[ir.Bound], pick: Callable[[list[int]], int]) -> tuple[ir.Bound, ...]:
    """One bound per anchor, the tightest (the bounds of an inferred domain: from the
    start, from the end, or from a field's own start or end)."""
    by_anchor: dict[tuple[bool, str], list[int]] = {}
    for b in bounds:
        by_anchor.setdefault((b.from_end, b.field or ""), []).append(b.value)
    return tuple(
        ir.Bound(pick(v), from_end, field=field or None)
        for (from_end, field), v in sorted(by_anchor.items())
    )
