"""The trace of a program's function: the calls it makes, recorded as program calls with
their arguments, outputs, temporaries and domains (program/call_domains.py), checked as
they are made and finished into an ir.Program. A call that calls scans, computes scalar
arguments or has conditions on scalars is lowered first (program/lowered_calls.py), a
field a call writes and reads is read from a snapshot (program/snapshots.py), and the
finished program's tables are checked against its reads (program/table_params.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stencilchain.errors import DefinitionError, user_location
from stencilchain.program import ir
from stencilchain.program.call_domains import (
    WindowReads,
    domain_of_call,
)
from stencilchain.program.dimensions import Dimension, non_staggered
from stencilchain.program.dynamic_offsets import offset_arguments
from stencilchain.program.extents import Extents, Reads, field_operator_reads, widen
from stencilchain.program.field_operator import FieldOperator, check_argument, mixed_dims
from stencilchain.program.ir_walk import (
    condition_scalars,
)
from stencilchain.program.program_args import ProgramArg
from stencilchain.program.program_scalars import ProgramScalar, computed_scalar
from stencilchain.program.snapshots import read_outputs_from_snapshots, snapshot_operator
from stencilchain.program.staggered import unstagger
from stencilchain.program.table_params import check_local_slots, check_tables
from stencilchain.program.tracing import Symbol
from stencilchain.program.tuple_params import flatten, is_collection, rebuild
from stencilchain.program.tuple_parts import flat_domains, result_parts
from stencilchain.program.untabled_slots import untabled_slots

if TYPE_CHECKING:  # loaded with the first scan operator
    from stencilchain.program.scan_operator import ScanOperator


class ProgramTrace:
    """Records the calls made while a program function runs."""

    def __init__(self, name: str, params: tuple[ir.Param, ...]) -> None:
        self.name = name
        # the trace works over base dimensions; the program's arguments (ProgramArg) keep
        # the staggered ones, for the checks of each call (program/staggered.py)
        self.params = unstagger(params)
        self.calls: list[ir.ProgramCall] = []
        self.fops: dict[str, ir.FieldOperatorDef] = {}
        # every field operator that calls name, also those lowered into others
        self.seen_fops: dict[str, ir.FieldOperatorDef] = {}
        self.scans: dict[str, ir.ScanOperatorDef] = {}
        self.written: dict[str, ir.Domain] = {}
        self.temporaries: list[ir.Param] = []
        # per call that made temporaries: their names, the call and where it was made
        self.makers: list[tuple[tuple[str, ...], str, tuple[str, int] | None]] = []
        # the results of scans in a concat_where's branch: made over where the branch reads
        # them, so their reads there are windows like a parameter's (docs/adr/0024)
        self.branch_covered: set[str] = set()

    def record_call(
        self, fop: FieldOperator | ScanOperator, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> ProgramArg | tuple[ProgramArg, ...] | None:
        """Record `fop(*args, **kwargs)` (a field or scan operator). With `out=`, the call
        writes those fields and returns None; without, it makes temporaries and returns them."""
        kwargs = dict(kwargs)
        out = kwargs.pop("out", None)
        domain = kwargs.pop("domain", None)
        where = f"call of {fop.name} in program {self.name}"
        if isinstance(fop, FieldOperator):
            through = None
        else:  # a scan operator: its module, and this one, load with the first scan
            from stencilchain.program.scan_scalars import through_field_operator

            through = through_field_operator(fop, args, kwargs)
        if through is not None:  # a scalar for a value read per level
            # its parameters are the scan's values flattened (a collection's leaves)
            flat = tuple(fop.bind(args, kwargs))
            return self.record_call(through, flat, {"out": out, "domain": domain})
        scans = fop.scans() if isinstance(fop, FieldOperator) else {fop.name: fop.definition}
        exprs = []
        for param, arg in zip(fop.definition.params, fop.bind(args, kwargs)):
            if isinstance(arg, (ProgramArg, ProgramScalar)):
                if arg.trace is not self:
                    raise DefinitionError(f"{where}: argument from another program")
                arg = Symbol(arg.ref if isinstance(arg, ProgramArg) else arg.expr)
            elif isinstance(arg, Symbol):
                raise DefinitionError(
                    f"{where}: a traced field operator value cannot reach a program"
                )
            shown = fop.shown.get(param.name)
            exprs.append(check_argument(fop.name, param, arg, shown))
        exprs = unstagger(exprs)
        scans = unstagger(scans)
        if isinstance(domain, Mapping):
            domain = {non_staggered(d): v for d, v in domain.items()}
        elif isinstance(domain, (tuple, list)):  # one per field of out=
            domain = tuple(
                {non_staggered(d): v for d, v in each.items()}
                if isinstance(each, Mapping)
                else each
                for each in flat_domains(domain, getattr(fop, "result_tree", None), where)
            )
        computed = computed_scalar(fop.definition.params, exprs)
        if computed is not None and not isinstance(fop, FieldOperator):
            raise DefinitionError(
                f"{where}: argument '{computed}' is an expression of the program's scalar "
                "parameters; a scan's scalar arguments are scalar parameters or literals "
                "(call the scan from a field operator that takes the expression)"
            )
        # a call with scalar arguments computed from the program's parameters, or with a
        # condition on a scalar (`K < k_start`, whose bounds then name the program's
        # parameters), is lowered into a field operator of its own, as one calling scans is
        lowered = isinstance(fop, FieldOperator) and (
            bool(scans)
            or computed is not None
            or any(condition_scalars(d.body) for d in fop.definitions().values())
        )
        # a tuple result over different dimensions, or given one domain per field of out=,
        # is one call per field
        mixed = mixed_dims(fop.return_type)
        parts = mixed or (
            isinstance(domain, (tuple, list)) and isinstance(fop.return_type, ir.TupleType)
        )
        definitions = dict(unstagger(fop.definitions()))
        if parts:  # its parts are the program's field operators, not itself
            self._register({fop.name: definitions.pop(fop.name)}, scans, where, False)
        self._register(definitions, scans, where, in_program=not lowered)
        if out is not None:  # a field the call writes and reads around: read a snapshot
            exprs = list(
                read_outputs_from_snapshots(
                    self,
                    unstagger(fop.definition),
                    tuple(exprs),
                    self.outputs(fop, out, where),
                    in_place=not lowered and not parts,
                    fops=self.seen_fops,
                    where=where,
                )
            )
        if lowered:
            # loaded by the first program that lowers a call (with its scan lowering): a
            # program of plain calls is defined without them
            from stencilchain.program.lowered_calls import record_lowered_call

            assert isinstance(fop, FieldOperator)
            made = record_lowered_call(self, fop, tuple(exprs), out, domain, where)
            return None if made is None else _nested(fop, made)
        made = self.make_temporaries(fop.return_type, where) if out is None else None
        if made is not None:
            out = _nested(fop, made)
        outs = self.outputs(fop, out, where)
        if parts:
            self._record_parts(fop, tuple(exprs), outs, domain, where)
        else:
            self._record(unstagger(fop.definition), tuple(exprs), outs, domain, where)
        if made is not None:
            self.temporaries += [ir.Param(t.ref.name, unstagger(t.ref.type)) for t in made]
            self.makers.append((outs, where, user_location()))
            return _nested(fop, made)  # type: ignore[no-any-return]
        return None

    def _record(
        self,
        definition: ir.FieldOperatorDef | ir.ScanOperatorDef,
        exprs: tuple[ir.Expr, ...],
        outs: tuple[str, ...],
        domain: object,
        where: str,
    ) -> None:
        """Record a call of `definition` writing `outs` over `domain` (given or None)."""
        read, windows = self.call_reads(definition, exprs, where)
        out_type = definition.return_type
        dims = out_type.dims if isinstance(out_type, ir.FieldType) else out_type.elems[0].dims
        call_domain = domain_of_call(self, where, dims, read, domain, windows)
        self.calls.append(ir.ProgramCall(definition.name, exprs, outs, call_domain))
        for name in outs:
            self.written[name] = call_domain

    def record_snapshot(self, ref: ir.Ref, name: str, where: str) -> ir.Ref:
        """Record a copy of the field parameter `ref` into a new temporary named after
        `name`, made just before the call `where` writes the field (program/snapshots.py);
        a Ref to the copy. The copy spans the index space, narrowed to the field's own
        range where the field has one (an inferred domain), whatever earlier calls wrote
        to it: outside that, it holds the caller's values."""
        assert isinstance(ref.type, ir.FieldType)
        copy = snapshot_operator(ref.type)
        self._register({copy.name: copy}, {}, where, in_program=True)
        taken = {p.name for p in self.params} | {t.name for t in self.temporaries}
        while name in taken:
            name += "_"
        whole = ir.Domain(
            tuple(
                ir.DimDomain(
                    d,
                    (ir.Bound(0, False),),
                    (ir.Bound(0, True),),
                    (0, 0),
                    reads=((ref.name, 0, 0),),
                    inferred=True,
                )
                for d in ref.type.dims
            ),
            explicit=False,
        )
        self.calls.append(ir.ProgramCall(copy.name, (ref,), (name,), whole))
        self.written[name] = whole
        self.temporaries.append(ir.Param(name, ref.type))
        self.makers.append(((name,), where, user_location()))
        return ir.Ref(name, ref.type)

    def _record_parts(
        self,
        fop: FieldOperator | ScanOperator,
        exprs: tuple[ir.Expr, ...],
        outs: tuple[str, ...],
        domain: object,
        where: str,
    ) -> None:
        """A call of a field operator whose tuple result is over different dimensions: one
        call per part (program/tuple_parts.py), each over its own domain."""
        definition = unstagger(fop.definition)
        assert isinstance(definition, ir.FieldOperatorDef)
        assert isinstance(definition.return_type, ir.TupleType)
        for part in result_parts(where, definition.return_type, domain):
            name = self.new_fop_name(f"{fop.name}__out{part.index}")
            made = ir.FieldOperatorDef(name, definition.params, part.body(definition.body))
            self._register({name: made}, {}, where, in_program=True)
            self._record(made, exprs, (outs[part.index],), part.given, where)

    def check_gathered_read(self, where: str, name: str, dims: set[Dimension]) -> None:
        """A field read through a neighbour table along `dims` may be read anywhere along
        them: a temporary must hold values over the whole of each."""
        written = self.written.get(name)
        if written is None or not self.is_temporary(name):
            return
        for wd in written.dims:
            if wd.dim in dims and (
                wd.starts != (ir.Bound(0, False),) or wd.stops != (ir.Bound(0, True),)
            ):
                raise DefinitionError(
                    f"{where}: reads temporary '{name}' through a neighbour table along "
                    f"{wd.dim.name}, so anywhere along it, but the call that made it wrote "
                    f"only {wd!r}; make it over all of {wd.dim.name}"
                )

    def is_temporary(self, name: str) -> bool:
        return any(t.name == name for t in self.temporaries)

    def _register(
        self,
        fops: Mapping[str, ir.FieldOperatorDef],
        scans: Mapping[str, ir.ScanOperatorDef],
        where: str,
        in_program: bool,
    ) -> None:
        """Check the names of the operators a call uses against those seen before, and keep
        them: the field operators only when the program calls them as they are
        (`in_program`; one that calls scans is lowered into others)."""
        for name, definition in fops.items():
            known = self.seen_fops.get(name)
            if known is not None and known != definition:
                raise DefinitionError(f"{where}: two different field operators are named {name}")
            if name in self.scans or name in scans:
                raise DefinitionError(
                    f"{where}: a field operator and a scan operator are both named {name}"
                )
            self.seen_fops[name] = definition
            if in_program:
                self.fops[name] = definition
        for name, scan in scans.items():
            known_scan = self.scans.get(name)
            if known_scan is not None and known_scan != scan:
                raise DefinitionError(f"{where}: two different scan operators are named {name}")
            if name in self.seen_fops:
                raise DefinitionError(
                    f"{where}: a field operator and a scan operator are both named {name}"
                )
            self.scans[name] = scan

    def call_reads(
        self,
        definition: ir.FieldOperatorDef | ir.ScanOperatorDef,
        exprs: tuple[ir.Expr, ...],
        where: str,
    ) -> tuple[Extents, WindowReads]:
        """How a call of `definition` with arguments `exprs` (Refs to program fields, or
        scalars) reads each program field (`bind_reads`)."""
        if isinstance(definition, ir.ScanOperatorDef):  # reads its arguments at the point
            reads = Reads(
                {
                    p.name: {d: (0, 0) for d in p.type.dims}
                    for p in definition.params
                    if isinstance(p.type, ir.FieldType)
                },
                {},
            )
        else:
            reads = field_operator_reads(definition, self.fops)
            for param, expr in zip(definition.params, exprs):
                if isinstance(expr, ir.Ref) and param.name in reads.gathered:
                    self.check_gathered_read(where, expr.name, reads.gathered[param.name])
        names = {p.name: e.name for p, e in zip(definition.params, exprs) if isinstance(e, ir.Ref)}
        return self.bind_reads(reads, names)

    def bind_reads(self, reads: Reads, names: Mapping[str, str]) -> tuple[Extents, WindowReads]:
        """The reads of the program fields that `names` binds the parameters to: `read`
        everywhere; `windows`, per dimension, the reads only where a concat_where's branch
        is selected. A field that an
        earlier call wrote holds values only where that call wrote: its window reads count
        as reads everywhere (the conservative side)."""
        read: Extents = {}
        windows: WindowReads = {}
        for param, name in names.items():
            for dim, (lo, hi) in reads.extents.get(param, {}).items():
                _widen(read, name, dim, lo, hi)
            for dim, by_window in reads.windows.get(param, {}).items():
                for (interval, shift), (lo, hi) in by_window.items():
                    if name in self.written and name not in self.branch_covered:
                        _widen(read, name, dim, shift + lo, shift + hi)
                        continue
                    by_dim = windows.setdefault(dim, {})
                    at = (interval, shift, name)
                    by_dim[at] = widen(by_dim.get(at), lo, hi)
        return read, windows

    def new_fop_name(self, name: str) -> str:
        """`name`, with underscores added while an operator of this program has it."""
        while name in self.seen_fops or name in self.fops or name in self.scans:
            name += "_"
        return name

    def make_temporaries(
        self, rt: ir.FieldType | ir.TupleType, where: str
    ) -> tuple[ProgramArg, ...]:
        """New temporaries for a result of type `rt`, one per field."""
        types = rt.elems if isinstance(rt, ir.TupleType) else (rt,)
        sized = {d for p in self.params if isinstance(p.type, ir.FieldType) for d in p.type.dims}
        taken = {p.name for p in self.params} | {t.name for t in self.temporaries}
        made: list[ProgramArg] = []
        for ftype in types:
            unsized = [d.name for d in ftype.dims if non_staggered(d) not in sized]
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

    def outputs(
        self, fop: FieldOperator | ScanOperator, out: object, where: str
    ) -> tuple[str, ...]:
        rt = fop.return_type
        expected = rt.elems if isinstance(rt, ir.TupleType) else (rt,)
        tree = fop.result_tree
        if tree is not None and not _is_flat(tree):
            out = tuple(flatten(tree, out, "out", lambda m: DefinitionError(f"{where}: {m}")))
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
        program = ir.Program(
            self.name,
            self.params,
            fops,
            tuple(self.calls),
            tuple(self.temporaries),
            tuple(self.scans.values()),
        )
        check_tables(program)
        check_local_slots(program)
        offset_arguments(program)  # each sc.as_offset reads an argument of the program
        untabled_slots(program)  # an argument gives the extent of each untabled local field
        return program


def _nested(fop: FieldOperator | ScanOperator, made: tuple[ProgramArg, ...]) -> Any:
    """The temporaries `made` for a call of `fop`, as its result is nested."""
    tree = fop.result_tree
    if tree is not None:
        return rebuild(tree, iter(made))
    return made if isinstance(fop.return_type, ir.TupleType) else made[0]


def _is_flat(tree: object) -> bool:
    """Whether a result's tree is a plain tuple of fields (out= checked as ever)."""
    return type(tree) is tuple and not any(map(is_collection, tree))


def _widen(
    reads: dict[str, dict[Dimension, tuple[int, int]]], name: str, dim: Dimension, lo: int, hi: int
) -> None:
    by_dim = reads.setdefault(name, {})
    by_dim[dim] = widen(by_dim.get(dim), lo, hi)
