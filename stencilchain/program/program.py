"""`@program`: a sequence of field-operator calls, traced into an ir.Program."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from stencilchain.errors import DefinitionError, user_location
from stencilchain.program import ir
from stencilchain.program.arguments import bind_arguments
from stencilchain.program.dimensions import Dimension
from stencilchain.program.extents import Reads, field_operator_reads
from stencilchain.program.field_operator import FieldOperator, check_argument
from stencilchain.program.scan_operator import ScanOperator
from stencilchain.program.tracing import Symbol
from stencilchain.program.types import parameter_types


class Backend(Protocol):
    """What `Program.with_backend` plugs in: something that turns a program into a callable."""

    @property
    def name(self) -> str: ...

    def executor(self, program: Program) -> Callable[..., None]: ...


class ProgramArg:
    """A program parameter or temporary while the program is traced: it can only be
    passed to calls."""

    __slots__ = ("ref", "temporary", "trace")

    def __init__(self, trace: ProgramTrace, ref: ir.Ref, temporary: bool = False) -> None:
        self.trace = trace
        self.ref = ref
        self.temporary = temporary

    @property
    def kind(self) -> str:
        return "temporary" if self.temporary else "program parameter"

    def __repr__(self) -> str:
        return f"<{self.kind} {self.ref.name}: {self.ref.type!r}>"

    def _no_arithmetic(self, *_: object) -> None:
        raise DefinitionError(
            f"{self.kind} '{self.ref.name}' used in an expression; a program only calls "
            "field operators, arithmetic belongs in a @field_operator"
        )

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _no_arithmetic
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __neg__ = __call__ = _no_arithmetic
    __lt__ = __le__ = __gt__ = __ge__ = __and__ = __or__ = __invert__ = _no_arithmetic
    __rand__ = __ror__ = __xor__ = __rxor__ = __floordiv__ = __rfloordiv__ = _no_arithmetic
    __mod__ = __rmod__ = __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _no_arithmetic
    __matmul__ = __rmatmul__ = __pos__ = __abs__ = _no_arithmetic

    def __array_ufunc__(self, *_: object, **__: object) -> None:
        """`np.sqrt(f)` or `np.float64(2) * f` on a program parameter."""
        self._no_arithmetic()


class ProgramTrace:
    """Records the calls made while a program function runs."""

    def __init__(self, name: str, params: tuple[ir.Param, ...]) -> None:
        self.name = name
        self.params = params
        self.calls: list[ir.ProgramCall] = []
        self.fops: dict[str, ir.FieldOperatorDef] = {}
        self.scans: dict[str, ir.ScanOperatorDef] = {}
        self.written: dict[str, ir.Domain] = {}
        self.temporaries: list[ir.Param] = []
        # per call that made temporaries: their names, the call and where it was made
        self.makers: list[tuple[tuple[str, ...], str, tuple[str, int] | None]] = []

    def record_call(
        self, fop: FieldOperator | ScanOperator, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> ProgramArg | tuple[ProgramArg, ...] | None:
        """Record `fop(*args, **kwargs)` (a field or scan operator). With `out=`, the call
        writes those fields and returns None; without, it makes temporaries and returns them."""
        kwargs = dict(kwargs)
        out = kwargs.pop("out", None)
        domain = kwargs.pop("domain", None)
        where = f"call of {fop.name} in program {self.name}"
        for name, definition in fop.definitions().items():
            known = self.fops.get(name)
            if known is not None and known != definition:
                raise DefinitionError(f"{where}: two different field operators are named {name}")
            if name in self.scans:
                raise DefinitionError(
                    f"{where}: a field operator and a scan operator are both named {name}"
                )
            self.fops[name] = definition
        if isinstance(fop, ScanOperator):
            known_scan = self.scans.get(fop.name)
            if known_scan is not None and known_scan != fop.definition:
                raise DefinitionError(f"{where}: two different scan operators are named {fop.name}")
            if fop.name in self.fops:
                raise DefinitionError(
                    f"{where}: a field operator and a scan operator are both named {fop.name}"
                )
            self.scans[fop.name] = fop.definition
        exprs = []
        for param, arg in zip(fop.definition.params, fop.bind(args, kwargs)):
            if isinstance(arg, ProgramArg):
                if arg.trace is not self:
                    raise DefinitionError(f"{where}: argument from another program")
                arg = Symbol(arg.ref)
            elif isinstance(arg, Symbol):
                raise DefinitionError(
                    f"{where}: a traced field operator value cannot reach a program"
                )
            exprs.append(check_argument(fop.name, param, arg))
        made = self._make_temporaries(fop, where) if out is None else None
        if made is not None:
            out = made if isinstance(fop.return_type, ir.TupleType) else made[0]
        outs = self._outputs(fop, out, where)
        if isinstance(fop, ScanOperator):  # a scan reads its arguments at the current point
            reads = Reads(
                {
                    p.name: {d: (0, 0) for d in p.type.dims}
                    for p in fop.definition.params
                    if isinstance(p.type, ir.FieldType)
                },
                {},
            )
        else:
            reads = field_operator_reads(fop.definition, self.fops)
        # `read`: everywhere; `windows`: per dimension, reads only where a concat_where's
        # branch is selected. A field that an earlier call wrote holds values only where
        # that call wrote: its window reads count as reads everywhere (the conservative side).
        read: dict[str, dict[Dimension, tuple[int, int]]] = {}
        windows: dict[Dimension, dict[tuple[ir.Interval, int], tuple[int, int]]] = {}
        windowed: dict[str, dict[Dimension, tuple[int, int]]] = {}
        for param, expr in zip(fop.definition.params, exprs):
            if not isinstance(expr, ir.Ref):
                continue
            for dim, (lo, hi) in reads.extents.get(param.name, {}).items():
                _widen(read, expr.name, dim, lo, hi)
            for dim, by_window in reads.windows.get(param.name, {}).items():
                for (interval, shift), (lo, hi) in by_window.items():
                    if expr.name in self.written:
                        _widen(read, expr.name, dim, shift + lo, shift + hi)
                        continue
                    _widen(windowed, expr.name, dim, shift + lo, shift + hi)
                    old = windows.setdefault(dim, {}).get((interval, shift))
                    windows[dim][(interval, shift)] = (
                        (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
                    )
        for name in outs:
            for ext in (read.get(name, {}), windowed.get(name, {})):
                for dim, (lo, hi) in ext.items():
                    if (lo, hi) != (0, 0):
                        raise DefinitionError(
                            f"{where}: writes '{name}', which it also reads at offsets "
                            f"{dim.name}{lo:+d}..{dim.name}{hi:+d}; write to another field"
                        )
        out_type = fop.return_type
        dims = out_type.dims if isinstance(out_type, ir.FieldType) else out_type.elems[0].dims
        call_domain = self._domain(where, dims, read, domain, windows)
        self.calls.append(ir.ProgramCall(fop.name, tuple(exprs), outs, call_domain))
        for name in outs:
            self.written[name] = call_domain
        if made is not None:
            self.temporaries += [ir.Param(t.ref.name, t.ref.type) for t in made]
            self.makers.append((outs, where, user_location()))
            return made if isinstance(fop.return_type, ir.TupleType) else made[0]
        return None

    def _make_temporaries(
        self, fop: FieldOperator | ScanOperator, where: str
    ) -> tuple[ProgramArg, ...]:
        """New temporaries for the result of `fop`, one per field it returns."""
        rt = fop.return_type
        types = rt.elems if isinstance(rt, ir.TupleType) else (rt,)
        sized = {d for p in self.params if isinstance(p.type, ir.FieldType) for d in p.type.dims}
        taken = {p.name for p in self.params} | {t.name for t in self.temporaries}
        made: list[ProgramArg] = []
        for ftype in types:
            unsized = [d.name for d in ftype.dims if d not in sized]
            if unsized:
                raise DefinitionError(
                    f"{where}: without out= the result becomes a temporary over "
                    f"{', '.join(d.name for d in ftype.dims)}, but no field parameter of "
                    f"{self.name} is over {', '.join(unsized)}, so its size is unknown; "
                    "write the result to a field parameter with out="
                )
            name = f"tmp{len(self.temporaries) + len(made)}"
            while name in taken:
                name += "_"
            taken.add(name)
            made.append(ProgramArg(self, ir.Ref(name, ftype), temporary=True))
        return tuple(made)

    def _outputs(
        self, fop: FieldOperator | ScanOperator, out: object, where: str
    ) -> tuple[str, ...]:
        rt = fop.return_type
        expected = rt.elems if isinstance(rt, ir.TupleType) else (rt,)
        given = out if isinstance(out, tuple) else (out,)
        if isinstance(rt, ir.TupleType) != isinstance(out, tuple) or len(given) != len(expected):
            raise DefinitionError(
                f"{where}: {fop.name} returns {rt!r}; out= must be "
                + (
                    f"a tuple of {len(expected)} fields"
                    if isinstance(rt, ir.TupleType)
                    else "one field"
                )
            )
        names = []
        for position, (value, etype) in enumerate(zip(given, expected)):
            slot = f"out[{position}]" if isinstance(out, tuple) else "out="
            if isinstance(value, ProgramArg) and value.temporary and value.ref.name in self.written:
                raise DefinitionError(
                    f"{where}: {slot} is temporary '{value.ref.name}', which an earlier call "
                    "made; a temporary is written once, by the call that makes it (call "
                    "without out= to make a new one, or write to a field parameter)"
                )
            if not isinstance(value, ProgramArg) or value.ref.type != etype:
                got = (
                    f"{value.ref.type!r} (parameter '{value.ref.name}')"
                    if isinstance(value, ProgramArg)
                    else repr(value)
                )
                raise DefinitionError(f"{where}: {slot} needs a program field {etype!r}, got {got}")
            if value.ref.name in names:
                raise DefinitionError(f"{where}: '{value.ref.name}' appears twice in out=")
            names.append(value.ref.name)
        return tuple(names)

    def _domain(
        self,
        where: str,
        dims: tuple[Dimension, ...],
        read: dict[str, dict[Dimension, tuple[int, int]]],
        given: object,
        windows: Mapping[Dimension, Mapping[tuple[ir.Interval, int], tuple[int, int]]],
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
            dim_windows = tuple(
                ir.Window(interval, shift, reads)
                for (interval, shift), reads in windows.get(dim, {}).items()
                if not _outside_every_domain(interval, shift)
            )
            if dim in given:
                starts, stops = self._explicit_bounds(where, dim, given[dim], lo, hi)
                self._check_temporary_reads(where, dim, starts[0], stops[0], read)
            else:
                for window in dim_windows:
                    wlo, whi = _window_halo(window)
                    lo, hi = max(lo, wlo), max(hi, whi)
                starts, stops = self._inferred_bounds(where, dim, read, lo, hi)
            # a window whose reads stay inside the halo's adds no check
            dim_windows = tuple(
                w for w in dim_windows if w.shift + w.reads[0] < -lo or w.shift + w.reads[1] > hi
            )
            result.append(ir.DimDomain(dim, starts, stops, (lo, hi), dim_windows))
        return ir.Domain(tuple(result), explicit=bool(given))

    def _explicit_bounds(
        self, where: str, dim: Dimension, value: object, lo: int, hi: int
    ) -> tuple[tuple[ir.Bound, ...], tuple[ir.Bound, ...]]:
        if not (isinstance(value, tuple) and len(value) == 2):
            raise DefinitionError(
                f"{where}: domain of {dim.name} must be a tuple (start, stop) of ints or "
                "integer scalar parameters of the program (stop may be None for the end), "
                f"got {value!r}"
            )
        start_v, stop_v = value
        start = self._bound(where, dim, "start", start_v, value)
        stop = (
            ir.Bound(0, True) if stop_v is None else self._bound(where, dim, "stop", stop_v, value)
        )
        if stop_v == 0:
            raise DefinitionError(
                f"{where}: domain of {dim.name} has stop 0, an empty range; use None for the end"
            )
        # a parameter bound is checked at call time, like the arrays' sizes
        if start.param is None and not start.from_end and start.value < lo:
            raise DefinitionError(
                f"{where}: domain of {dim.name} starts at {start.value} but the call reads "
                f"{dim.name}-{lo}, outside the array; start at {lo} or later"
            )
        if stop.from_end and stop.value > -hi:
            raise DefinitionError(
                f"{where}: domain of {dim.name} stops at {stop!r} but the call reads "
                f"{dim.name}+{hi}, outside the array; stop at end-{hi} or earlier"
            )
        return (start,), (stop,)

    def _bound(
        self, where: str, dim: Dimension, side: str, value: object, pair: tuple[object, object]
    ) -> ir.Bound:
        """One end of an explicit domain: an int literal (negative: from the end) or an
        integer scalar parameter of this program (resolved at call time, by the same rule)."""
        if type(value) is int:
            return ir.Bound(value, from_end=value < 0)
        what = f"{where}: the {side} of the domain of {dim.name}"
        if isinstance(value, ProgramArg):
            if value.trace is not self:
                raise DefinitionError(
                    f"{what} is '{value.ref.name}', a parameter of another program; use an "
                    f"int or an integer scalar parameter of {self.name}"
                )
            ptype = value.ref.type
            if isinstance(ptype, ir.FieldType):
                raise DefinitionError(
                    f"{what} is the {value.kind} '{value.ref.name}', a field {ptype!r}; a "
                    "bound is an int or an integer scalar parameter (int32 or int64)"
                )
            if not ptype.is_integer:
                raise DefinitionError(
                    f"{what} is parameter '{value.ref.name}' of type {ptype.name}; a bound "
                    "parameter must be int32 or int64"
                )
            return ir.Bound(0, False, param=value.ref.name)
        raise DefinitionError(
            f"{what} must be an int or an integer scalar parameter of {self.name} "
            f"(int32 or int64), got {value!r} in {pair!r}"
        )

    def _check_temporary_reads(
        self,
        where: str,
        dim: Dimension,
        start: ir.Bound,
        stop: ir.Bound,
        read: dict[str, dict[Dimension, tuple[int, int]]],
    ) -> None:
        """An explicit domain may read a parameter's halo (the array's own values), but a
        temporary holds values only where the call that made it wrote: every read of one
        must stay there, for every array size."""
        temporaries = {t.name for t in self.temporaries}
        for name, ext in read.items():
            if name not in temporaries or dim not in ext:
                continue
            rlo, rhi = ext[dim]
            written = next(wd for wd in self.written[name].dims if wd.dim == dim)
            # the lowest index read, and one past the highest
            first = ir.Bound(start.value + rlo, start.from_end, start.param)
            end = ir.Bound(stop.value + rhi, stop.from_end, stop.param)
            # written from the array's first index, or up to its end: every read is inside
            # on that side, since a call's reads are checked against the array before it runs
            checks = [
                (b, first, f"from {first!r}", f"from {b!r} on")
                for b in written.starts
                if b != ir.Bound(0, False)
            ]
            checks += [
                (end, b, f"up to {end!r}", f"below {b!r}")
                for b in written.stops
                if b != ir.Bound(0, True)
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
        self,
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
            written = self.written.get(name)
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
                starts += [ir.Bound(b.value - rlo, b.from_end) for b in wd.starts]
                stops += [ir.Bound(b.value - rhi, b.from_end) for b in wd.stops]
        return _tightest(starts, max), _tightest(stops, min)

    def finish(self) -> ir.Program:
        if not self.calls:
            raise DefinitionError(f"program {self.name} calls no field operator")
        read = {a.name for call in self.calls for a in call.args if isinstance(a, ir.Ref)}
        for names, where, location in self.makers:
            if not read.intersection(names):
                what = f"temporary '{names[0]}'" if len(names) == 1 else f"temporaries {names}"
                raise DefinitionError(
                    f"{where}: makes {what} that no later call reads (no out= was given); "
                    "write the result to a field parameter with out=, or drop the call",
                    location,
                )
        fops = tuple(self.fops.values())  # collected by following calls: all are used
        return ir.Program(
            self.name,
            self.params,
            fops,
            tuple(self.calls),
            tuple(self.temporaries),
            tuple(self.scans.values()),
        )


def _widen(
    reads: dict[str, dict[Dimension, tuple[int, int]]], name: str, dim: Dimension, lo: int, hi: int
) -> None:
    old = reads.setdefault(name, {}).get(dim)
    reads[name][dim] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))


def _outside_every_domain(interval: ir.Interval, shift: int) -> bool:
    """Whether no point of any domain (inside the array: `[0, size)`) is evaluated inside
    `interval` at `shift`: a stop from the start at or below `shift`, or a start from the
    end at or above it."""
    return any(not b.from_end and b.value <= shift for b in interval.stops) or any(
        b.from_end and b.value >= shift for b in interval.starts
    )


def _window_halo(window: ir.Window) -> tuple[int, int]:
    """How far a window's reads narrow an inferred domain, below and above: not at all on a
    side where its interval keeps the reads inside the array (a start from the first index
    with `start + lo >= 0`, a stop from the end with `stop + hi <= 0`) or bounds it from the
    other end (checked at the call, like an explicit domain); elsewhere like reads
    everywhere at the window's offsets."""
    rlo, rhi = window.reads
    starts, stops = window.interval.starts, window.interval.stops
    low_inside = any(b.from_end or b.value + rlo >= 0 for b in starts)
    high_inside = any(not b.from_end or b.value + rhi <= 0 for b in stops)
    return (
        0 if low_inside else max(0, -(window.shift + rlo)),
        0 if high_inside else max(0, window.shift + rhi),
    )


def _tightest(bounds: list[ir.Bound], pick: Callable[[list[int]], int]) -> tuple[ir.Bound, ...]:
    by_anchor: dict[bool, list[int]] = {}
    for b in bounds:
        by_anchor.setdefault(b.from_end, []).append(b.value)
    return tuple(ir.Bound(pick(v), anchor) for anchor, v in sorted(by_anchor.items()))


class Program:
    """A traced stencil program. Calling it runs it embedded (NumPy)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.location = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
        params, _ = parameter_types(fn, "program")
        trace = ProgramTrace(self.name, params)
        result = fn(*(ProgramArg(trace, ir.Ref(p.name, p.type)) for p in params))
        if result is not None:
            raise DefinitionError(
                f"program {self.name} returns a value; a program writes its results to out= fields",
                self.location,
            )
        self.ir = trace.finish()
        self._embedded: Callable[..., None] | None = None

    def __repr__(self) -> str:
        return f"<stencilchain program {self.name} {self.ir.fingerprint()[:12]}>"

    def fingerprint(self) -> str:
        return self.ir.fingerprint()

    def with_backend(self, backend: Backend) -> Callable[..., None]:
        """This program run by `backend` (compiled on first call for compiling backends)."""
        return backend.executor(self)

    def __call__(self, /, *args: Any, **kwargs: Any) -> None:
        """Run the program with NumPy; arguments by position or by parameter name."""
        if self._embedded is None:
            from stencilchain.program.embedded import run_embedded

            self._embedded = run_embedded.executor(self)
        self._embedded(*bind_arguments(self.ir, args, kwargs))


def program(fn: Callable[..., Any]) -> Program:
    """Decorator: trace `fn` into a program, checking calls, types and domains now."""
    return Program(fn)
