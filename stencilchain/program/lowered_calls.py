"""The calls of a program that are lowered before they are recorded: a call of a field
operator that calls scans, takes scalar arguments computed from the program's parameters,
or has conditions on scalars (`K < k_start`) becomes program calls of field operators and
scans that every backend runs as it runs any call (innermost scan first, its computed
arguments into temporaries; a tuple result over different dimensions one call per field).
Functions of the program's trace (program_trace.py), which records what they make."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from stencilchain.errors import DefinitionError, user_location
from stencilchain.program import ir
from stencilchain.program.call_domains import (
    branch_windows,
    check_temporary_reads,
    dim_windows,
    domain_of_call,
    field_reads,
)
from stencilchain.program.dimensions import Dimension
from stencilchain.program.extents import ExtentsWalker, Reads
from stencilchain.program.field_operator import FieldOperator, mixed_dims
from stencilchain.program.ir_walk import params_of, replace
from stencilchain.program.program_args import ProgramArg
from stencilchain.program.scan_lowering import (
    innermost_scan_call,
    read_offsets,
    scan_branch,
    scan_domain,
)
from stencilchain.program.staggered import unstagger
from stencilchain.program.transforms import inline_calls, substitute
from stencilchain.program.tuple_parts import result_parts

if TYPE_CHECKING:
    from stencilchain.program.program_trace import ProgramTrace


def record_lowered_call(
    trace: ProgramTrace,
    fop: FieldOperator,
    exprs: tuple[ir.Expr, ...],
    out: object,
    domain: object,
    where: str,
) -> tuple[ProgramArg, ...] | None:
    """Record a call of `fop`, which calls scan operators, as program calls that the
    backends run as ever: over the call's domain D (inferred or given as for any call,
    a scan reading its arguments where its result is read), innermost scan first, a
    field operator computes the scan's arguments that are not program fields into
    temporaries, and the scan runs over D extended by the offsets at which its result
    is read (along its axis from D's first level on, forward, or its last down:
    `scan_domain`), into temporaries; then the rest of the body, reading those, writes `out`. Returns
    the temporaries it made for the result (None with `out`)."""
    if out is not None:
        outs: tuple[str, ...] | None = trace.outputs(fop, out, where)
    else:
        outs = None
    rt = unstagger(fop.return_type)
    definition = unstagger(fop.definition)
    body = inline_calls(definition.body, unstagger(fop.definitions()))
    body = substitute(body, {p.name: e for p, e in zip(definition.params, exprs)})
    if isinstance(rt, ir.TupleType) and (mixed_dims(rt) or isinstance(domain, (tuple, list))):
        _record_lowered_parts(trace, fop.name, rt, body, outs, domain, where)
        return None
    dims = rt.dims if isinstance(rt, ir.FieldType) else rt.elems[0].dims
    call_domain = _lowered_domain(trace, body, dims, domain, where)
    while (scan_call := innermost_scan_call(body)) is not None:
        scan = trace.scans[scan_call.callee]
        branch = scan_branch(body, scan_call, where)
        offsets = read_offsets(body, scan_call)
        domain_of_scan = scan_domain(call_domain, scan, offsets, branch)
        lowered = ir.Lowered(call_domain, scan.name, tuple(offsets.items()), branch)
        args = _scan_arguments(trace, fop, scan, scan_call, domain_of_scan, where, lowered)
        results = _record_lowered(trace, where, scan, args, None, domain_of_scan, lowered)
        if branch is not None:  # written where the branch reads it, by construction
            trace.branch_covered.update(results)
        refs = tuple(ir.Ref(name, _field_type(trace, name)) for name in results)
        value = _tuple_of(refs) if scan.tuple_state else refs[0]
        body = inline_calls(replace(body, scan_call, value), {})
    final = ir.FieldOperatorDef(
        trace.new_fop_name(f"{fop.name}__call{len(trace.calls)}"),
        params_of(body, trace.params),
        body,
    )
    args = tuple(ir.Ref(p.name, p.type) for p in final.params)
    outs = _record_lowered(trace, where, final, args, outs, call_domain, ir.Lowered(call_domain))
    if out is not None:
        return None
    # the user's values keep the staggered dimensions of the result's type
    given = fop.return_type
    rtypes = given.elems if isinstance(given, ir.TupleType) else (given,) * len(outs)
    made = tuple(
        ProgramArg(trace, ir.Ref(n, rtypes[k]), temporary=True) for k, n in enumerate(outs)
    )
    trace.makers.append((outs, where, user_location()))
    return made


def _scan_arguments(
    trace: ProgramTrace,
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
        if not isinstance(param.type, ir.FieldType) and not isinstance(arg, (ir.Ref, ir.Literal)):
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
    base = f"{fop.name}__{scan.name}_args{len(trace.calls)}"
    for dims, ks in sorted(groups.items(), key=lambda g: g[0] != scan.dims):
        computed = [scan_call.args[k] for k in ks]
        body = computed[0] if len(computed) == 1 else _tuple_of(computed)
        suffix = "" if dims == scan.dims else "_" + "_".join(d.name for d in dims)
        name = trace.new_fop_name(base + suffix)
        args_fop = ir.FieldOperatorDef(name, params_of(body, trace.params), body)
        refs = tuple(ir.Ref(p.name, p.type) for p in args_fop.params)
        domain = dataclasses.replace(
            scan_domain, dims=tuple(dd for dd in scan_domain.dims if dd.dim in dims)
        )
        made.update(zip(ks, _record_lowered(trace, where, args_fop, refs, None, domain, lowered)))
    return tuple(
        ir.Ref(made[k], param.type) if k in made else arg
        for k, (param, arg) in enumerate(zip(scan.params, scan_call.args))
    )


def _field_type(trace: ProgramTrace, name: str) -> ir.FieldType:
    """The type of the field parameter or temporary called `name`."""
    for p in (*trace.params, *trace.temporaries):
        if p.name == name and isinstance(p.type, ir.FieldType):
            return p.type
    raise KeyError(name)


def _lowered_domain(
    trace: ProgramTrace,
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
        trace.check_gathered_read(where, name, gathered)
    names = {**{n: n for n in walker.extents}, **{n: n for n in walker.windows}}
    read, windows = trace.bind_reads(Reads(walker.extents, walker.windows), names)
    return domain_of_call(trace, where, dims, read, domain, windows)


def _record_lowered_parts(
    trace: ProgramTrace,
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
        call_domain = _lowered_domain(trace, part_body, dims, part.given, where)
        final = ir.FieldOperatorDef(
            trace.new_fop_name(f"{name}__out{part.index}"),
            params_of(part_body, trace.params),
            part_body,
        )
        args = tuple(ir.Ref(p.name, p.type) for p in final.params)
        _record_lowered(trace, where, final, args, out, call_domain, ir.Lowered(call_domain))


def _record_lowered(
    trace: ProgramTrace,
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
        trace.fops[definition.name] = definition
    if outs is None:
        made = trace.make_temporaries(definition.return_type, where)
        trace.temporaries += [ir.Param(t.ref.name, t.ref.type) for t in made]
        outs = tuple(t.ref.name for t in made)
    read, windows = trace.call_reads(definition, args, where)
    dims = []
    for dd in domain.dims:
        lo = max([0] + [-ext[dd.dim][0] for ext in read.values() if dd.dim in ext])
        hi = max([0] + [ext[dd.dim][1] for ext in read.values() if dd.dim in ext])
        if len(dd.starts) == 1 and len(dd.stops) == 1:
            check_temporary_reads(trace, where, dd.dim, dd.starts[0], dd.stops[0], read)
        held = dim_windows(windows.get(dd.dim, {}), lo, hi)
        reads = field_reads(read, dd.dim)
        every = branch_windows(windows.get(dd.dim, {}))
        dims.append(
            ir.DimDomain(dd.dim, dd.starts, dd.stops, (lo, hi), held, reads, branch_reads=every)
        )
    call_domain = ir.Domain(tuple(dims), explicit=domain.explicit)
    trace.calls.append(ir.ProgramCall(definition.name, args, outs, call_domain, lowered))
    for name in outs:
        trace.written[name] = call_domain
    return outs


def _tuple_of(elems: Sequence[ir.Expr]) -> ir.MakeTuple:
    """A tuple of field expressions."""
    types = tuple(e.type for e in elems)
    assert all(isinstance(t, ir.FieldType) for t in types)
    return ir.MakeTuple(tuple(elems), ir.TupleType(types))  # type: ignore[arg-type]
