"""A call that writes a field it also reads around the point (at an offset, in a scan, in
a concat_where's branch) reads a snapshot of it: the values from before the call, copied
into a temporary by a call recorded just before it (docs/adr/0042). Reads at the point
only, in a call that neither scans nor is lowered, read the field itself: each point reads
its own value before writing it, and no copy is made.

The trace gives each snapshot the name `<field>_before_<callee>`; the copy is a field
operator `snapshot_of_<dims>_<dtype>` returning its argument."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from stencilchain.program import ir
from stencilchain.program.extents import field_operator_reads
from stencilchain.program.ir_walk import refs_in
from stencilchain.program.transforms import substitute

if TYPE_CHECKING:
    from stencilchain.program.program_trace import ProgramTrace


def read_outputs_from_snapshots(
    trace: ProgramTrace,
    callee: ir.FieldOperatorDef | ir.ScanOperatorDef,
    exprs: tuple[ir.Expr, ...],
    outs: tuple[str, ...],
    in_place: bool,
    fops: Mapping[str, ir.FieldOperatorDef],
    where: str,
) -> tuple[ir.Expr, ...]:
    """`exprs`, the arguments of a call of `callee` writing `outs`, with each field that
    the call writes and reads other than at the point read from a snapshot recorded now.
    `in_place`: the call is recorded as it is (not lowered), so a field read only at the
    point may be read in place; `fops`, the field operators `callee` may call."""
    read = refs_in(*exprs)
    aliased = [ref for ref in read if ref.name in outs and isinstance(ref.type, ir.FieldType)]
    if not aliased:
        return exprs
    pointwise = _read_at_the_point(callee, exprs, fops) if in_place else set()
    bindings: dict[str, ir.Expr] = {}
    for ref in aliased:
        if ref.name in pointwise:
            continue
        assert isinstance(ref.type, ir.FieldType)
        bindings[ref.name] = trace.record_snapshot(ref, f"{ref.name}_before_{callee.name}", where)
    return tuple(substitute(e, bindings) for e in exprs) if bindings else exprs


def _read_at_the_point(
    callee: ir.FieldOperatorDef | ir.ScanOperatorDef,
    exprs: tuple[ir.Expr, ...],
    fops: Mapping[str, ir.FieldOperatorDef],
) -> set[str]:
    """The program fields that a call of `callee` reads at the point only: a scan reads
    its arguments at the point of each level; a field operator, those of its parameters
    read at offset 0 along every dimension, outside any concat_where window."""
    if isinstance(callee, ir.ScanOperatorDef):
        return {e.name for e in exprs if isinstance(e, ir.Ref)}
    reads = field_operator_reads(callee, fops)
    at_point: dict[str, bool] = {}
    for param, expr in zip(callee.params, exprs):
        if not isinstance(expr, ir.Ref):
            for ref in refs_in(expr):  # inside a tuple argument: not followed
                at_point[ref.name] = False
            continue
        ok = param.name not in reads.windows and all(
            ext == (0, 0) for ext in reads.extents.get(param.name, {}).values()
        )
        at_point[expr.name] = at_point.get(expr.name, True) and ok
    return {name for name, ok in at_point.items() if ok}


SNAPSHOT_PREFIX = "snapshot_of_"


def snapshot_operator(ftype: ir.FieldType) -> ir.FieldOperatorDef:
    """The field operator copying a field of type `ftype`."""
    name = SNAPSHOT_PREFIX + "_".join(d.name for d in ftype.dims) + f"_{ftype.dtype.name}"
    param = ir.Param("field", ftype)
    return ir.FieldOperatorDef(name, (param,), ir.Ref("field", ftype))


def snapshot_sources(program: ir.Program) -> dict[str, str]:
    """Per snapshot temporary of `program`, the field it copies (a call of the trace's
    copy, into a temporary: not a user's field operator of the same name)."""
    temporaries = {t.name for t in program.temporaries}
    copies = {
        f.name
        for f in program.field_operators
        if f.name.startswith(SNAPSHOT_PREFIX)
        and len(f.params) == 1
        and isinstance(f.params[0].type, ir.FieldType)
        and f == snapshot_operator(f.params[0].type)
    }
    return {
        call.outs[0]: call.args[0].name
        for call in program.calls
        if call.callee in copies
        and call.outs[0] in temporaries
        and isinstance(call.args[0], ir.Ref)
    }
