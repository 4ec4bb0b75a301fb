"""Fields over their own ranges: arguments of different sizes along one dimension in one
call (ICON's half levels: `w` with nlev + 1 levels beside `theta_v` with nlev) and fields
whose index space does not start at 0 (`sc.as_field(dims, a, start={K: 1})`).

Along each dimension the program's index space is `[0, size)`, `size` the largest end of
any field argument along it; each argument covers its own part `[start, size - gap)` of
it. Every bound that counts from the end counts from `size`, as before. A call is then
run over its domain as ever, and

- an inferred domain is also the largest box in which the call's reads of each argument
  stay inside that argument's range (and its writes inside its outputs' ranges);
- the reads and writes of any domain, given or inferred, are checked against each
  argument's own range: a DomainError names the argument.

The (start, gap) of every argument along every axis is the *range key* of a call; a key
with every entry (0, 0), the arguments of today's programs, runs the program as it was
traced. Another key runs the program specialised for it (`specialise_ranges`, cached per
key), compiled like any program: the generated code indexes the program's index space
and the bindings shift each argument's data pointer back by its start (a key is a handful
of small integers: a model has one or two). Why, and what the alternatives were:
docs/adr/0032-fields-over-their-own-ranges.md.

Along a neighbour table's dimensions: its rows count in its entity dimension's index space
(a table has a row for every point of it; fields may cover part of them), and the entries
a call reads must lie in the ranges of the fields they are read of, which
program/table_reads.py checks per call; a dynamic offset's entries must keep their reads
in the ranges of the fields they shift (`dynamic_offsets.check_offsets`). Along a table's
slots, along slots that no table numbers (program/untabled_slots.py), and along a dimension
a dynamic offset shifts a temporary along, every field spans the index space
(`fixed_dimensions`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

from stencilchain.errors import ArgumentError, DefinitionError, DomainError
from stencilchain.program import ir
from stencilchain.program.call_domains import check_temporary_reads_of, tightest, window_bounds
from stencilchain.program.connectivity import Connectivity
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dynamic_offsets import shifted_temporaries
from stencilchain.program.field_bounds import resolved
from stencilchain.program.field_values import FieldValue, check_field_dims
from stencilchain.program.ir_walk import written_fields
from stencilchain.program.scan_lowering import scan_domain
from stencilchain.program.snapshots import snapshot_sources
from stencilchain.program.untabled_slots import untabled_slots

# per field parameter (in parameter order, tables excluded), per axis (start, gap)
RangeKey = tuple[tuple[tuple[int, int], ...], ...]
_UNKNOWN: Any = object()  # a signature that RangeKeys.of has not seen
_FOUND_KEYS = 256  # the signatures RangeKeys.of remembers (a model has a handful)


class RangeKeys:
    """The range key of a call's arguments for one program (built once per program)."""

    def __init__(self, program: ir.Program) -> None:
        self.program_name = program.name
        self.fields = tuple(
            (k, p.name, p.type.dims)
            for k, p in enumerate(program.params)
            if isinstance(p.type, ir.FieldType) and not isinstance(p.type, ir.TableType)
        )
        # the tables, whose rows span their entity dimension's index space
        self.tables = tuple(
            (k, p.name, p.type.connectivity)
            for k, p in enumerate(program.params)
            if isinstance(p.type, ir.TableType)
        )
        self.program = program
        self.count = len(program.params)
        # the key of each signature (per field its shape, or a field value's start and
        # shape) that `computed` found, at most _FOUND_KEYS of them
        self.found: dict[tuple[Any, ...], RangeKey | None] = {}

    @functools.cached_property
    def fixed(self) -> dict[Dimension, str]:
        """`fixed_dimensions` of the program, found when a call first has a key."""
        return fixed_dimensions(self.program)

    def of(self, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], RangeKey | None]:
        """The arguments with field values replaced by their arrays, and the range key of
        the call (None when every field spans the whole index space, or when an argument
        is not an array: the checks of the plain program then say what is wrong).

        The key depends only on the fields' shapes and starts: it is looked up by them
        (`found`) once `computed` has found it for a call without error."""
        if len(args) != self.count:
            return args, None
        plain: list[Any] | None = None
        signature: list[Any] = []
        for k, _, dims in self.fields:
            arg = args[k]
            if type(arg) is FieldValue:
                if arg.dims != dims:
                    return self.computed(args)  # which says whether they may differ
                if plain is None:
                    plain = list(args)
                plain[k] = arg.array
                signature.append((arg.start, getattr(arg.array, "shape", None)))
            else:
                signature.append(getattr(arg, "shape", None))
        for k, _, _ in self.tables:
            signature.append(getattr(args[k], "shape", None))
        try:
            key = self.found.get(tuple(signature), _UNKNOWN)
        except TypeError:  # a shape that is not a tuple: the checks say what is wrong
            return self.computed(args)
        if key is _UNKNOWN:
            plain_args, key = self.computed(args)
            if len(self.found) < _FOUND_KEYS:
                self.found[tuple(signature)] = key
            return plain_args, key
        return (args if plain is None else tuple(plain)), key

    def computed(self, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], RangeKey | None]:
        """What `of` returns, found from the arguments (raising the ArgumentError of
        fields that cannot be run over their ranges)."""
        if len(args) != self.count:
            return args, None
        plain = list(args)
        ranges: list[tuple[str, tuple[Dimension, ...], tuple[int, ...], tuple[int, ...]]] = []
        ends: dict[Dimension, int] = {}
        for k, name, dims in self.fields:
            arg = args[k]
            where = f"argument '{name}' of {self.program_name}()"
            if type(arg) is FieldValue:
                check_field_dims(where, dims, arg)
                starts = arg.start
                plain[k] = arg = arg.array
            else:
                starts = (0,) * len(dims)
            shape = getattr(arg, "shape", None)
            if shape is None or len(shape) != len(dims):
                return tuple(plain), None
            for dim, s, n in zip(dims, starts, shape):
                if s < 0:
                    self._check_below_zero(where, name, dim, s)
                ends[dim] = max(ends.get(dim, 0), s + int(n))
            ranges.append((name, dims, starts, tuple(int(n) for n in shape)))
        rows = self._table_rows(args, ends)
        key = tuple(
            tuple((s, ends[d] - s - n) for d, s, n in zip(dims, starts, shape))
            for _, dims, starts, shape in ranges
        )
        if all(s == 0 and g == 0 for axes in key for s, g in axes):
            return tuple(plain), None
        for name, conn, n in rows:
            if n < ends[conn.entity]:
                raise ArgumentError(
                    f"argument '{name}' of {self.program_name}(): the table of {conn.name} "
                    f"has {n} rows, but fields span [0, {ends[conn.entity]}) along "
                    f"{conn.entity.name}; a table needs a row for every point of its "
                    f"{conn.entity.name} index space"
                )
        for (name, dims, _, _), axes in zip(ranges, key):
            for dim, (s, g) in zip(dims, axes):
                if (s, g) != (0, 0) and dim in self.fixed:
                    raise ArgumentError(
                        f"argument '{name}' of {self.program_name}(): spans "
                        f"[{s}, {ends[dim] - g}) along {dim.name}, while another argument "
                        f"spans [0, {ends[dim]}); {self.fixed[dim]}, so every field along "
                        f"{dim.name} must start at 0 and have the same size"
                    )
        return tuple(plain), key

    def _table_rows(
        self, args: tuple[Any, ...], ends: dict[Dimension, int]
    ) -> list[tuple[str, Connectivity, int]]:
        """The number of rows of each table (those of arrays only: the checks of the
        program say what else is wrong), each widening its entity's index space `ends`:
        a field may cover part of the rows (gt4py's fields over part of a mesh)."""
        rows = []
        for k, name, conn in self.tables:
            shape = getattr(args[k], "shape", None)
            if shape is None or len(shape) != 2:
                continue
            n = int(shape[0])
            ends[conn.entity] = max(ends.get(conn.entity, 0), n)
            rows.append((name, conn, n))
        return rows

    @functools.cached_property
    def written(self) -> frozenset[str]:
        """The fields a call of the program writes."""
        return written_fields(self.program)

    def _check_below_zero(self, where: str, name: str, dim: Dimension, start: int) -> None:
        """A field may start below 0 only where nothing writes it: the index space of
        every call is `[0, size)`, so its points below 0 are only ever read, at offsets
        below points from 0 on."""
        if name in self.written:
            raise ArgumentError(
                f"{where}: a field value whose index space starts at {dim.name} {start}, "
                f"below 0, for an output: every domain lies in [0, size) along {dim.name}, "
                "so its points below 0 are outside every domain; start it at 0 (only a "
                "field that no call writes may start below 0)"
            )

    def named(self, key: RangeKey) -> dict[str, tuple[tuple[int, int], ...]]:
        """The key as `ir.Program.ranges` holds it: by parameter name, whole-space ones left out."""
        return {
            name: axes
            for (_, name, _), axes in zip(self.fields, key)
            if any(a != (0, 0) for a in axes)
        }


def fixed_dimensions(program: ir.Program) -> dict[Dimension, str]:
    """The dimensions along which every field must span the whole index space, with why:
    the local dimensions that number a neighbour table's slots (its width is one size), the
    local dimensions read at slots that no table numbers (the extent is the slot count) and
    those a dynamic offset shifts a temporary along (a temporary holds values where a call
    wrote it, which a range specialisation may narrow). Along a table's entity and source
    dimensions fields may cover their own ranges: the table's rows span the entity's index
    space (`RangeKeys`), and the entries a call reads are checked against the ranges of
    the fields they read (program/table_reads.py); a dynamic offset's entries are checked
    against the ranges of the fields it shifts (`dynamic_offsets.check_offsets`)."""
    fixed: dict[Dimension, str] = dict(shifted_temporaries(program))
    for p in program.params:
        if isinstance(p.type, ir.TableType):
            conn = p.type.connectivity
            fixed.setdefault(conn.local, f"table '{p.name}' of {conn.name} numbers its slots")
    for need in untabled_slots(program):
        fixed.setdefault(
            need.dim,
            f"no table numbers the slots of {need.dim.name} that field operator "
            f"{need.reader} reads (the arguments' extent along it is how many there are)",
        )
    return fixed


def below_zero_offsets(program: ir.Program) -> dict[str, tuple[int, ...]]:
    """Per field parameter of a specialisation (`program.ranges`) that starts below 0 along
    some axis, per axis how many of its points lie below 0 (`max(0, -start)`)."""
    return {
        name: tuple(max(0, -s) for s, _ in axes)
        for name, axes in program.ranges
        if any(s < 0 for s, _ in axes)
    }


def specialise_ranges(
    program: ir.Program, ranges: Mapping[str, tuple[tuple[int, int], ...]]
) -> ir.Program:
    """`program` for arguments over these ranges (per field parameter named, per axis its
    (start, gap)): each call's inferred domain (and each dimension a given domain leaves
    out) narrowed to where its reads of each argument stay inside that argument's range,
    and every call's reads and writes checked against each argument's own range
    (`ir.DimDomain.own`). The calls that lowering a field-operator call's scans made
    (`ir.ProgramCall.lowered`) take their domains from that call's domain narrowed so."""
    return _RangeSpecialisation(program, ranges).program()


class _RangeSpecialisation:
    """The work of `specialise_ranges`, call by call in program order."""

    def __init__(
        self, program: ir.Program, ranges: Mapping[str, tuple[tuple[int, int], ...]]
    ) -> None:
        self.source = program
        self.ranges = ranges
        self.temporaries = {t.name for t in program.temporaries}
        self.by_axis: dict[tuple[str, Dimension], tuple[int, int]] = {}
        for name, axes in ranges.items():
            for dim, sg in zip(program.field_type(name).dims, axes):
                self.by_axis[(name, dim)] = sg
        # bounds counted from a field's own range are plain bounds for these ranges
        program = self.source = resolved(program, self.by_axis)
        # a snapshot of a field (program/snapshots.py) holds the field's values over the
        # field's own range: its reads are checked against that range at call time, as
        # the field's would be, not as a temporary's
        self.copies = snapshot_sources(program)
        for copy, field in self.copies.items():
            for dim, sg in zip(program.field_type(field).dims, ranges.get(field, ())):
                self.by_axis[(copy, dim)] = sg
            self.temporaries.discard(copy)
        # the domains the calls of the specialisation write, by field written so far
        self.written: dict[str, ir.Domain] = {}
        # per field-operator call whose scans were lowered (by its traced domain's id), its
        # domain narrowed, and the fields that call writes
        self.narrowed: dict[int, ir.Domain] = {}
        self.outs_of: dict[int, tuple[str, ...]] = {
            id(call.lowered.domain): call.outs
            for call in program.calls
            if call.lowered is not None and call.lowered.scan is None
        }

    def program(self) -> ir.Program:
        calls = []
        for call in self.source.calls:
            domain = self.domain_of(call)
            for name in call.outs:
                self.written[name] = domain
            calls.append(ir.ProgramCall(call.callee, call.args, call.outs, domain, call.lowered))
        return dataclasses.replace(
            self.source, calls=tuple(calls), ranges=tuple(sorted(self.ranges.items()))
        )

    def own_reads(self, dd: ir.DimDomain) -> list[ir.OwnRange]:
        """The reads of `dd` of fields over their own ranges along its dimension."""
        return [  # a snapshot's reads are reported as its field's
            ir.OwnRange(self.copies.get(name, name), lo, hi, *self.by_axis[(name, dd.dim)])
            for name, lo, hi in dd.reads
            if self.by_axis.get((name, dd.dim), (0, 0)) != (0, 0)
        ]

    def own_writes(self, dd: ir.DimDomain, outs: tuple[str, ...]) -> list[ir.OwnRange]:
        return [
            ir.OwnRange(name, 0, 0, *self.by_axis[(name, dd.dim)])
            for name in outs
            if self.by_axis.get((name, dd.dim), (0, 0)) != (0, 0)
        ]

    def own_windows(self, dd: ir.DimDomain) -> list[ir.Window]:
        """The windows of `dd` that read fields over their own ranges along its dimension,
        each with that range (also those whose reads stay inside the traced halo: the
        field may end before the array does)."""
        return [
            dataclasses.replace(w, range=self.by_axis[(w.field, dd.dim)])
            for w in dd.branch_reads
            if self.by_axis.get((w.field, dd.dim), (0, 0)) != (0, 0)
        ]

    def windows(self, dd: ir.DimDomain) -> tuple[ir.Window, ...]:
        """The windows the specialisation checks: every one of fields over their own
        ranges, and those of the other fields whose reads leave the halo (the traced ones,
        unless fields starting below 0 made the halo smaller)."""
        own = self.own_windows(dd)
        fields = {w.field for w in own}
        lo, hi = self.halo(dd)
        return (
            *own,
            *(
                w
                for w in dd.branch_reads or dd.windows
                if w.field not in fields
                and (w.shift + w.reads[0] < -lo or w.shift + w.reads[1] > hi)
            ),
        )

    def below(self, dd: ir.DimDomain) -> set[str]:
        """The fields that `dd` reads (everywhere or in a branch) and that start below 0
        along its dimension (inputs only: RangeKeys.of)."""
        names = {name for name, _, _ in dd.reads} | {w.field for w in dd.branch_reads}
        return {n for n in names if self.by_axis.get((n, dd.dim), (0, 0))[0] < 0}

    def halo(self, dd: ir.DimDomain) -> tuple[int, int]:
        """`dd`'s halo: the traced one assumed that every field starts at 0; the reads of
        fields starting below 0 are checked against their own ranges instead, so below
        the start it is that of the other fields' reads (and, for a dimension the call
        does not give, of their windows that leave the array, as the trace widened it:
        call_domains.domain_of_call)."""
        below = self.below(dd)
        if not below:
            return dd.halo
        lo = max([0] + [lo for name, lo, _ in dd.reads if name not in below])
        if dd.inferred:
            for window in dd.branch_reads:
                start, _ = window_bounds(window, 0, 0)
                if window.field not in below and start is not None:
                    lo = max(lo, start.value)
        return (lo, dd.halo[1])

    def inferred(
        self, dd: ir.DimDomain, outs: tuple[str, ...]
    ) -> tuple[tuple[ir.Bound, ...], tuple[ir.Bound, ...]]:
        """The bounds of `dd`, a dimension that a call's domain does not give, narrowed to
        where the call's reads (and its writes of `outs`) stay inside the fields' ranges
        and the regions of temporaries written before."""
        own = self.own_reads(dd) + self.own_writes(dd, outs)
        below = self.below(dd)
        starts, stops = dd.starts, dd.stops
        more_starts = [ir.Bound(r.start + r.lo, False) for r in own]
        more_stops = [ir.Bound(-(r.gap + r.hi), True) for r in own]
        for window in self.own_windows(dd):
            start, stop = window_bounds(window, *window.range)
            more_starts += [start] if start is not None else []
            more_stops += [stop] if stop is not None else []
        if below:  # the start again from the halo and the regions written before
            starts = (ir.Bound(self.halo(dd)[0], False),)
        for name, lo, hi in dd.reads:
            if name in self.written and (name in self.temporaries or below):
                wd = next(w for w in self.written[name].dims if w.dim == dd.dim)
                more_starts += [ir.Bound(b.value + lo, b.from_end) for b in wd.starts]
                if name in self.temporaries:
                    more_stops += [ir.Bound(b.value - hi, b.from_end) for b in wd.stops]
        return tightest([*starts, *more_starts], max), tightest([*stops, *more_stops], min)

    def lowered_bounds(
        self, lowered: ir.Lowered
    ) -> dict[Dimension, tuple[tuple[ir.Bound, ...], tuple[ir.Bound, ...]]]:
        """Per dimension, the bounds of a call that lowering a field-operator call's scans
        made: derived, as the trace derived them, from that call's domain narrowed (found
        at the first call of its lowering, before any of them writes)."""
        traced = lowered.domain
        domain = self.narrowed.get(id(traced))
        if domain is None:
            outs = self.outs_of.get(id(traced), ())
            dims = []
            for dd in traced.dims:
                if not traced.explicit or dd.inferred:
                    starts, stops = self.inferred(dd, outs)
                    dd = dataclasses.replace(dd, starts=starts, stops=stops)
                dims.append(dd)
            domain = self.narrowed[id(traced)] = dataclasses.replace(traced, dims=tuple(dims))
        if lowered.scan is not None:
            scan = self.source.scan_operator(lowered.scan)
            assert scan is not None, lowered.scan
            domain = scan_domain(domain, scan, dict(lowered.offsets), lowered.branch)
        return {dd.dim: (dd.starts, dd.stops) for dd in domain.dims}

    def domain_of(self, call: ir.ProgramCall) -> ir.Domain:
        """The domain of `call` in the specialisation."""
        where = f"call of {call.callee} in {self.source.name}()"
        lowered = self.lowered_bounds(call.lowered) if call.lowered is not None else None
        dims = []
        for dd in call.domain.dims:
            own_reads = self.own_reads(dd)
            own = own_reads + self.own_writes(dd, call.outs)
            starts, stops = dd.starts, dd.stops
            if lowered is not None and dd.dim in lowered:
                starts, stops = lowered[dd.dim]
                given = True
            else:
                given = call.domain.explicit and not dd.inferred
            if not given:
                starts, stops = self.inferred(dd, call.outs)
            elif len(starts) == 1 and len(stops) == 1:
                read = {name: {dd.dim: (-lo, hi)} for name, lo, hi in dd.reads}
                try:
                    check_temporary_reads_of(
                        self.temporaries, self.written, where, dd.dim, starts[0], stops[0], read
                    )
                except DefinitionError as err:
                    raise DomainError(
                        f"{err} (for arguments over their own ranges {dict(self.ranges)!r})"
                    ) from None
            dims.append(
                dataclasses.replace(
                    dd,
                    starts=starts,
                    stops=stops,
                    halo=self.halo(dd),
                    windows=self.windows(dd),
                    own=tuple(own),
                )
            )
        return ir.Domain(tuple(dims), call.domain.explicit)


__all__ = [
    "RangeKey",
    "RangeKeys",
    "below_zero_offsets",
    "fixed_dimensions",
    "specialise_ranges",
]
