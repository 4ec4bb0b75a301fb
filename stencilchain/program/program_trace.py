"""The trace of a program's function: the calls it makes, recorded as program calls with
their arguments, outputs, temporaries and domains (program/call_domains.py), checked as
they are made and finished into an ir.Program. It is longer than a module should be (~780
lines): the lowering of calls (scans, computed scalar arguments, conditions on scalars, one
call per field of a tuple result over different dimensions, the snapshot of a field a call
writes and reads: program/snapshots.py) shares the recording's state, so it stays with it;
what does not (the slots of untabled local fields, the scalars of scans) has moved out."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from stencilchain.errors import DefinitionError, user_location
from stencilchain.program import ir
from stencilchain.program.call_domains import (
    WindowReads,
    branch_windows,
    check_temporary_reads,
    dim_windows,
    domain_of_call,
    field_reads,
)
from stencilchain.program.connectivity import Connectivity
from stencilchain.program.dimensions import Dimension, non_staggered
from stencilchain.program.dynamic_offsets import offset_arguments
from stencilchain.program.extents import Extents, ExtentsWalker, Reads, field_operator_reads, widen
from stencilchain.program.field_operator import FieldOperator, check_argument, mixed_dims
from stencilchain.program.ir_walk import (
    condition_scalars,
    nodes,
    params_of,
    replace,
)
from stencilchain.program.program_args import ProgramArg
from stencilchain.program.program_scalars import ProgramScalar, computed_scalar
from stencilchain.program.scan_lowering import (
    innermost_scan_call,
    read_offsets,
    scan_branch,
    scan_domain,
)
from stencilchain.program.scan_operator import ScanOperator
from stencilchain.program.scan_scalars import through_field_operator
from stencilchain.program.snapshots import read_outputs_from_snapshots, snapshot_operator
from stencilchain.program.staggered import unstagger
from stencilchain.program.tracing import Symbol
from stencilchain.program.transforms import inline_calls, substitute
from stencilchain.program.tuple_params import flatten, is_collection, rebuild
from stencilchain.program.tuple_parts import flat_domains, result_parts
from stencilchain.program.untabled_slots import untabled_slots


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
        through = (
            through_field_operator(fop, args, kwargs) if isinstance(fop, ScanOperator) else None
        )
        if through is not None:  # a scalar for a value read per level
            # its parameters are the scan's values flattened (a collection's leaves)
            flat = tuple(fop.bind(args, kwargs))
            return self.record_call(through, flat, {"out": out, "domain": domain})
        scans = {fop.name: fop.definition} if isinstance(fop, ScanOperator) else fop.scans()
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
        if computed is not None and isinstance(fop, ScanOperator):
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
                    self._outputs(fop, out, where),
                    in_place=not lowered and not parts,
                    fops=self.seen_fops,
                    where=where,
                )
            )
        if lowered:
            assert isinstance(fop, FieldOperator)
            return self._record_with_scans(fop, tuple(exprs), out, domain, where)
        made = self._make_temporaries(fop.return_type, where) if out is None else None
        if made is not None:
            out = _nested(fop, made)
        outs = self._outputs(fop, out, where)
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
        read, windows = self._reads(definition, exprs, where)
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
            name = self._new_fop_name(f"{fop.name}__out{part.index}")
            made = ir.FieldOperatorDef(name, definition.params, part.body(definition.body))
            self._register({name: made}, {}, where, in_program=True)
            self._record(made, exprs, (outs[part.index],), part.given, where)

    def _check_gathered_read(self, where: str, name: str, dims: set[Dimension]) -> None:
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

    def _reads(
        self,
        definition: ir.FieldOperatorDef | ir.ScanOperatorDef,
        exprs: tuple[ir.Expr, ...],
        where: str,
    ) -> tuple[Extents, WindowReads]:
        """How a call of `definition` with arguments `exprs` (Refs to program fields, or
        scalars) reads each program field (`_bind_reads`)."""
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
                    self._check_gathered_read(where, expr.name, reads.gathered[param.name])
        names = {p.name: e.name for p, e in zip(definition.params, exprs) if isinstance(e, ir.Ref)}
        return self._bind_reads(reads, names)

    def _bind_reads(self, reads: Reads, names: Mapping[str, str]) -> tuple[Extents, WindowReads]:
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

    def _record_with_scans(
        self,
        fop: FieldOperator,
        exprs: tuple[ir.Expr, ...],
        out: object,
        domain: object,
        where: str,
    ) -> ProgramArg | tuple[ProgramArg, ...] | None:
        """Record a call of `fop`, which calls scan operators, as program calls that the
        backends run as ever: over the call's domain D (inferred or given as for any call,
        a scan reading its arguments where its result is read), innermost scan first, a
        field operator computes the scan's arguments that are not program fields into
        temporaries, and the scan runs over D extended by the offsets at which its result
        is read (along its axis from D's first level on, forward, or its last down:
        `scan_domain`), into temporaries; then the rest of the body, reading those, writes `out`."""
        if out is not None:
            outs: tuple[str, ...] | None = self._outputs(fop, out, where)
        else:
            outs = None
        rt = unstagger(fop.return_type)
        definition = unstagger(fop.definition)
        body = inline_calls(definition.body, unstagger(fop.definitions()))
        body = substitute(body, {p.name: e for p, e in zip(definition.params, exprs)})
        if isinstance(rt, ir.TupleType) and (mixed_dims(rt) or isinstance(domain, (tuple, list))):
            self._record_lowered_parts(fop.name, rt, body, outs, domain, where)
            return None
        dims = rt.dims if isinstance(rt, ir.FieldType) else rt.elems[0].dims
        call_domain = self._lowered_domain(body, dims, domain, where)
        while (scan_call := innermost_scan_call(body)) is not None:
            scan = self.scans[scan_call.callee]
            branch = scan_branch(body, scan_call, where)
            offsets = read_offsets(body, scan_call)
            domain_of_scan = scan_domain(call_domain, scan, offsets, branch)
            lowered = ir.Lowered(call_domain, scan.name, tuple(offsets.items()), branch)
            args = self._scan_arguments(fop, scan, scan_call, domain_of_scan, where, lowered)
            results = self._record_lowered(where, scan, args, None, domain_of_scan, lowered)
            if branch is not None:  # written where the branch reads it, by construction
                self.branch_covered.update(results)
            refs = tuple(ir.Ref(name, self._field_type(name)) for name in results)
            value = _tuple_of(refs) if scan.tuple_state else refs[0]
            body = inline_calls(replace(body, scan_call, value), {})
        final = ir.FieldOperatorDef(
            self._new_fop_name(f"{fop.name}__call{len(self.calls)}"),
            params_of(body, self.params),
            body,
        )
        args = tuple(ir.Ref(p.name, p.type) for p in final.params)
        outs = self._record_lowered(where, final, args, outs, call_domain, ir.Lowered(call_domain))
        if out is not None:
            return None
        # the user's values keep the staggered dimensions of the result's type
        given = fop.return_type
        rtypes = given.elems if isinstance(given, ir.TupleType) else (given,) * len(outs)
        made = tuple(
            ProgramArg(self, ir.Ref(n, rtypes[k]), temporary=True) for k, n in enumerate(outs)
        )
        self.makers.append((outs, where, user_location()))
        return _nested(fop, made)  # type: ignore[no-any-return]

    def _scan_arguments(
        self,
        fop: FieldOperator,
        scan: ir.ScanOperatorDef,
        scan_call: ir.ScanCall,
        scan_domain: ir.Domain,
        where: str,
        lowered: ir.Lowered,
    ) -> tuple[ir.Expr, ...]:
        """The arguments of a program call of `scan` for `scan_call`: program fields and
        scalars as they are; every other field argument computed into a temporary by one
        field operator over the scan's domain."""
        for param, arg in zip(scan.params, scan_call.args):
            if not isinstance(param.type, ir.FieldType) and not isinstance(
                arg, (ir.Ref, ir.Literal)
            ):
                from stencilchain.program.pretty import format_expr  # for the error only

                raise DefinitionError(
                    f"{where}: argument '{param.name}' of scan operator {scan.name}, called "
                    f"in field operator {fop.name}, is the scalar expression "
                    f"{format_expr(arg)}; a scan's scalar arguments are scalar parameters of "
                    "the program or literals (pass the value as a program parameter)"
                )

        def is_computed(param: ir.Param, arg: ir.Expr) -> bool:
            return isinstance(param.type, ir.FieldType) and not isinstance(arg, ir.Ref)

        # one field operator per set of dimensions (a Cell argument of a (Cell, K) scan
        # is computed over Cell alone), the scan's own first and named as ever
        groups: dict[tuple[Dimension, ...], list[int]] = {}
        for k, (p, a) in enumerate(zip(scan.params, scan_call.args)):
            if is_computed(p, a):
                groups.setdefault(p.type.dims, []).append(k)  # type: ignore[union-attr]
        made: dict[int, str] = {}
        base = f"{fop.name}__{scan.name}_args{len(self.calls)}"
        for dims, ks in sorted(groups.items(), key=lambda g: g[0] != scan.dims):
            computed = [scan_call.args[k] for k in ks]
            body = computed[0] if len(computed) == 1 else _tuple_of(computed)
            suffix = "" if dims == scan.dims else "_" + "_".join(d.name for d in dims)
            name = self._new_fop_name(base + suffix)
            args_fop = ir.FieldOperatorDef(name, params_of(body, self.params), body)
            refs = tuple(ir.Ref(p.name, p.type) for p in args_fop.params)
            domain = dataclasses.replace(
                scan_domain, dims=tuple(dd for dd in scan_domain.dims if dd.dim in dims)
            )
            made.update(zip(ks, self._record_lowered(where, args_fop, refs, None, domain, lowered)))
        return tuple(
            ir.Ref(made[k], param.type) if k in made else arg
            for k, (param, arg) in enumerate(zip(scan.params, scan_call.args))
        )

    def _new_fop_name(self, name: str) -> str:
        """`name`, with underscores added while an operator of this program has it."""
        while name in self.seen_fops or name in self.fops or name in self.scans:
            name += "_"
        return name

    def _field_type(self, name: str) -> ir.FieldType:
        """The type of the field parameter or temporary called `name`."""
        for p in (*self.params, *self.temporaries):
            if p.name == name and isinstance(p.type, ir.FieldType):
                return p.type
        raise KeyError(name)

    def _lowered_domain(
        self,
        body: ir.Expr,
        dims: tuple[Dimension, ...],
        domain: object,
        where: str,
    ) -> ir.Domain:
        """The domain of a lowered call whose inlined body is `body` over `dims` (given or
        inferred from its reads), after checking its reads through tables (a field it
        writes and reads around is read from a snapshot: program/snapshots.py)."""
        walker = ExtentsWalker({})
        walker.visit(body, {}, {}, {})
        for name, gathered in walker.gathered.items():
            self._check_gathered_read(where, name, gathered)
        names = {**{n: n for n in walker.extents}, **{n: n for n in walker.windows}}
        read, windows = self._bind_reads(Reads(walker.extents, walker.windows), names)
        return domain_of_call(self, where, dims, read, domain, windows)

    def _record_lowered_parts(
        self,
        name: str,
        rt: ir.TupleType,
        body: ir.Expr,
        outs: tuple[str, ...] | None,
        domain: object,
        where: str,
    ) -> None:
        """A lowered call (computed arguments, conditions on scalars) whose tuple result is
        over different dimensions or given one domain per field of out=: one call per field
        (program/tuple_parts.py), each over its own domain. Not with a scan in its body."""
        if outs is None or innermost_scan_call(body) is not None:
            raise DefinitionError(
                f"{where}: {name} returns fields over different dimensions or is given a "
                "domain per field of out=, and calls a scan or has no out=; return the fields "
                "of each domain from a field operator of its own"
            )
        for part in result_parts(where, rt, domain):
            part_body = part.body(body)
            out = (outs[part.index],)
            dims = rt.elems[part.index].dims
            call_domain = self._lowered_domain(part_body, dims, part.given, where)
            final = ir.FieldOperatorDef(
                self._new_fop_name(f"{name}__out{part.index}"),
                params_of(part_body, self.params),
                part_body,
            )
            args = tuple(ir.Ref(p.name, p.type) for p in final.params)
            self._record_lowered(where, final, args, out, call_domain, ir.Lowered(call_domain))

    def _record_lowered(
        self,
        where: str,
        definition: ir.FieldOperatorDef | ir.ScanOperatorDef,
        args: tuple[ir.Expr, ...],
        outs: tuple[str, ...] | None,
        domain: ir.Domain,
        lowered: ir.Lowered,
    ) -> tuple[str, ...]:
        """Record a call that lowering a scan made, over `domain` (its bounds given, its
        halo set here from the call's reads; `lowered`: how it was found), writing `outs`
        or new temporaries (None); returns the names written."""
        if isinstance(definition, ir.FieldOperatorDef):
            self.fops[definition.name] = definition
        if outs is None:
            made = self._make_temporaries(definition.return_type, where)
            self.temporaries += [ir.Param(t.ref.name, t.ref.type) for t in made]
            outs = tuple(t.ref.name for t in made)
        read, windows = self._reads(definition, args, where)
        dims = []
        for dd in domain.dims:
            lo = max([0] + [-ext[dd.dim][0] for ext in read.values() if dd.dim in ext])
            hi = max([0] + [ext[dd.dim][1] for ext in read.values() if dd.dim in ext])
            if len(dd.starts) == 1 and len(dd.stops) == 1:
                check_temporary_reads(self, where, dd.dim, dd.starts[0], dd.stops[0], read)
            held = dim_windows(windows.get(dd.dim, {}), lo, hi)
            reads = field_reads(read, dd.dim)
            every = branch_windows(windows.get(dd.dim, {}))
            dims.append(
                ir.DimDomain(dd.dim, dd.starts, dd.stops, (lo, hi), held, reads, branch_reads=every)
            )
        call_domain = ir.Domain(tuple(dims), explicit=domain.explicit)
        self.calls.append(ir.ProgramCall(definition.name, args, outs, call_domain, lowered))
        for name in outs:
            self.written[name] = call_domain
        return outs

    def _make_temporaries(
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

    def _outputs(
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

    def _check_tables(self) -> None:
        """Every connectivity that a field operator reads through has one table parameter,
        of that very connectivity; the sizes of its dimensions are known; no two tables
        number their slots with the same local dimension."""
        used: dict[str, Connectivity] = {}
        users: dict[str, str] = {}
        for fop in self.fops.values():
            found: dict[str, Connectivity] = {}
            _connectivities_in(fop.body, found)
            for name, conn in found.items():
                other = used.setdefault(name, conn)
                users.setdefault(name, fop.name)
                if other != conn:
                    raise DefinitionError(
                        f"program {self.name}: two different connectivities are named {name} "
                        f"(in field operators {users[name]} and {fop.name}); rename one"
                    )
        tables = [p for p in self.params if isinstance(p.type, ir.TableType)]
        sized = {d for p in self.params if isinstance(p.type, ir.FieldType) for d in p.type.dims}
        for name, conn in used.items():
            given = [p for p in tables if p.type.connectivity.name == name]  # type: ignore[union-attr]
            if not given:
                raise DefinitionError(
                    f"program {self.name}: field operator {users[name]} reads through "
                    f"connectivity {name}, but the program has no table for it; add a "
                    f"parameter `{name.lower()}: sc.Table[{name}]`"
                )
            if len(given) > 1:
                raise DefinitionError(
                    f"program {self.name}: parameters {', '.join(p.name for p in given)} are "
                    f"all tables of {name}; give one"
                )
            if given[0].type.connectivity != conn:  # type: ignore[union-attr]
                raise DefinitionError(
                    f"program {self.name}: parameter '{given[0].name}' is a table of another "
                    f"connectivity named {name} than the one field operator {users[name]} "
                    "reads through; declare each connectivity once"
                )
            if conn.source not in sized:
                raise DefinitionError(
                    f"program {self.name}: reads through {name} fields over "
                    f"{conn.source.name}, but no field parameter is over {conn.source.name}, "
                    "so its size is unknown"
                )
        locals_seen: dict[Dimension, str] = {}
        for p in tables:
            conn = p.type.connectivity  # type: ignore[union-attr]
            other_name = locals_seen.setdefault(conn.local, conn.name)
            if other_name != conn.name:
                raise DefinitionError(
                    f"program {self.name}: connectivities {other_name} and {conn.name} both "
                    f"number their neighbour slots with {conn.local.name}; give each its own "
                    "local dimension, so that a reduction knows which neighbours are missing"
                )

    def _check_local_slots(self) -> None:
        """Every slot `w[C2EDim(s)]` of a local field that the table of a connectivity
        numbers lies in it: s < its max_neighbors (for a table of any width, checked per
        width: program/table_specialisation.py). Slots that no table numbers are checked
        against the arguments' extent at call time (program/untabled_slots.py)."""
        tables = {
            p.type.connectivity.local: p.type.connectivity
            for p in self.params
            if isinstance(p.type, ir.TableType)
        }
        for fop in self.fops.values():
            for slot in _local_slots_in(fop.body):
                conn = tables.get(slot.axis)
                written = f"field operator {fop.name} reads slot {slot.axis.name}({slot.slot})"
                if conn is None:
                    continue  # the arguments' extent numbers them (program/untabled_slots.py)
                if conn.max_neighbors is not None and slot.slot >= conn.max_neighbors:
                    raise DefinitionError(
                        f"program {self.name}: {written}, but {conn.name} has "
                        f"max_neighbors={conn.max_neighbors}: a slot is an int in "
                        f"[0, {conn.max_neighbors})"
                    )
            # a reduction over a local dimension reads its slots as the table numbers
            # them (how many, which are missing): a local field reduced in a program
            # without that table is refused here, as a slot read is
            for node in nodes(fop.body):
                if isinstance(node, ir.NeighborReduce) and node.axis not in tables:
                    reduction = {"sum": "neighbor_sum"}.get(node.op, f"{node.op}_over")
                    raise DefinitionError(
                        f"program {self.name}: field operator {fop.name} reduces over "
                        f"{node.axis.name} (sc.{reduction}), but no table "
                        f"parameter numbers the slots of {node.axis.name}, so how many there "
                        "are and which are missing is unknown; add the table of the "
                        f"connectivity over {node.axis.name} (a parameter `c: sc.Table[...]`)"
                    )

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
        self._check_tables()
        self._check_local_slots()
        fops = tuple(self.fops.values())  # collected by following calls: all are used
        program = ir.Program(
            self.name,
            self.params,
            fops,
            tuple(self.calls),
            tuple(self.temporaries),
            tuple(self.scans.values()),
        )
        offset_arguments(program)  # each sc.as_offset reads an argument of the program
        untabled_slots(program)  # an argument gives the extent of each untabled local field
        return program


def _connectivities_in(expr: ir.Expr, found: dict[str, Connectivity]) -> None:
    for node in nodes(expr):
        if isinstance(node, ir.NeighborShift):
            found.setdefault(node.connectivity.name, node.connectivity)


def _local_slots_in(expr: ir.Expr) -> list[ir.LocalSlot]:
    """The local slots read in `expr`, in the order a walk meets them, each object once."""
    return [node for node in nodes(expr) if isinstance(node, ir.LocalSlot)]


def _nested(fop: FieldOperator | ScanOperator, made: tuple[ProgramArg, ...]) -> Any:
    """The temporaries `made` for a call of `fop`, as its result is nested."""
    tree = fop.result_tree
    if tree is not None:
        return rebuild(tree, iter(made))
    return made if isinstance(fop.return_type, ir.TupleType) else made[0]


def _is_flat(tree: object) -> bool:
    """Whether a result's tree is a plain tuple of fields (out= checked as ever)."""
    return type(tree) is tuple and not any(map(is_collection, tree))


def _tuple_of(elems: Sequence[ir.Expr]) -> ir.MakeTuple:
    """A tuple of field expressions."""
    types = tuple(e.type for e in elems)
    assert all(isinstance(t, ir.FieldType) for t in types)
    return ir.MakeTuple(tuple(elems), ir.TupleType(types))  # type: ignore[arg-type]


def _widen(
    reads: dict[str, dict[Dimension, tuple[int, int]]], name: str, dim: Dimension, lo: int, hi: int
) -> None:
    by_dim = reads.setdefault(name, {})
    by_dim[dim] = widen(by_dim.get(dim), lo, hi)
