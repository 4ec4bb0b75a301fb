"""The statements of one point of a call, whatever runs the points (a CPU loop nest, a
tile, a GPU thread): a field operator's values stored to its outputs, a scan's column."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from stencilchain.program import ir
from stencilchain.program.call_bodies import call_body
from stencilchain.steps.cpp.expressions import TUPLE_NAMESPACE, ExpressionEmitter, Pos, cpp_type
from stencilchain.steps.cpp.scans import scan_column
from stencilchain.steps.cpp.signature import bound_var, index_var
from stencilchain.steps.gtfn.context import PointAccess


def point_statements(
    access: PointAccess, call: ir.ProgramCall, points: Sequence[Pos] = ({},)
) -> list[str]:
    """The statements of the call at `points` (offsets from the current point; a jammed
    loop's several): compute every value, each node at an offset once, then store each
    output."""
    ctx = access.ctx
    fop = ctx.fops[call.callee]
    emitter = access.emitter(cse=ctx.enable_transforms, with_functions=True)
    if ctx.functions is None:
        body = call_body(fop, call.args)
    else:
        body = ir.Call(fop.name, call.args, fop.return_type)
    stores: list[str] = []
    for pos in points:
        if isinstance(body, ir.MakeTuple):  # each element straight to its output
            values = [_computed(emitter, e, pos) for e in body.elems]
        elif isinstance(fop.return_type, ir.TupleType):
            result = emitter.emit(body, pos)
            values = [f"{TUPLE_NAMESPACE}::get<{k}>({result})" for k in range(len(call.outs))]
        else:
            values = [emitter.emit(body, pos)]
        stores += [access.store(name, value, pos) for name, value in zip(call.outs, values)]
    return [*emitter.statements, *stores]


def point_value(access: PointAccess, expr: ir.Expr) -> tuple[list[str], str]:
    """The statements and the C++ value of `expr` at the current point."""
    emitter = access.emitter(cse=True)
    value = emitter.emit(expr, {})
    return list(emitter.statements), value


def scan_readers(
    access: PointAccess, call: ir.ProgramCall
) -> tuple[Callable[[ir.Param, ir.Expr], str], Callable[[int, str], str]]:
    """How a scan call reads its arguments and stores its results at the current point."""

    def read_argument(param: ir.Param, arg: ir.Expr) -> str:
        assert isinstance(arg, ir.Ref)
        if isinstance(arg.type, ir.FieldType):
            return access.read_field(arg.name, {})
        return access.read_scalar(arg.name)

    def store(k: int, value: str) -> str:
        name = call.outs[k]
        if name in access.ctx.buffered:
            return f"{access.ctx.buffered[name]} = {value};"
        return access.store(name, value)

    return read_argument, store


def scan_body(access: PointAccess, call: ir.ProgramCall) -> list[str]:
    """The statements of one column of a scan call: its level loop, state in registers."""
    scan = access.ctx.scans[call.callee]
    read_argument, store = scan_readers(access, call)
    return scan_column(
        scan,
        call,
        level=index_var(scan.axis),
        start=bound_var(scan.axis, "start"),
        stop=bound_var(scan.axis, "stop"),
        read_argument=read_argument,
        store=store,
    )


def _computed(emitter: ExpressionEmitter, expr: ir.Expr, pos: Pos) -> str:
    """The C++ of `expr` at `pos`, a read bound to a name: every element of a tuple is
    computed before any is stored, because an output may also be an input."""
    value = emitter.emit(expr, pos)
    if isinstance(expr, (ir.Ref, ir.Shift, ir.Broadcast)):
        return emitter.bind(cpp_type(expr.type), value)
    return value
