"""A readable text form of the IR, for debugging (`str(program.ir)`)."""

from __future__ import annotations

from stencilchain.program import ir


def format_expr(expr: ir.Expr) -> str:
    if isinstance(expr, ir.Literal):
        return f"{expr.value!r}:{expr.type}"
    if isinstance(expr, ir.Ref):
        return expr.name
    if isinstance(expr, ir.Shift):
        offsets = ", ".join(f"{d.name}{a:+d}" for d, a in expr.offsets)
        inner = format_expr(expr.expr)
        if not isinstance(expr.expr, ir.Ref):
            inner = f"({inner})"
        return f"{inner}({offsets})"
    if isinstance(expr, ir.Binary):
        return f"({format_expr(expr.left)} {ir.OP_SYMBOLS[expr.op]} {format_expr(expr.right)})"
    if isinstance(expr, ir.Unary):
        return f"{'-' if expr.op == 'neg' else '~'}{format_expr(expr.operand)}"
    if isinstance(expr, ir.MathCall):
        return f"{expr.fn}({', '.join(format_expr(a) for a in expr.args)})"
    if isinstance(expr, ir.Where):
        return (
            f"where({format_expr(expr.cond)}, {format_expr(expr.true)}, {format_expr(expr.false)})"
        )
    if isinstance(expr, ir.Cast):
        dtype = expr.type.dtype if isinstance(expr.type, ir.FieldType) else expr.type
        return f"astype({format_expr(expr.expr)}, {dtype})"
    if isinstance(expr, ir.Call):
        return f"{expr.callee}({', '.join(format_expr(a) for a in expr.args)})"
    if isinstance(expr, ir.MakeTuple):
        return f"({', '.join(format_expr(e) for e in expr.elems)})"
    if isinstance(expr, ir.TupleGet):
        return f"{format_expr(expr.expr)}[{expr.index}]"
    raise TypeError(f"unknown IR node {type(expr).__name__}")


def _params(params: tuple[ir.Param, ...]) -> str:
    return ", ".join(f"{p.name}: {p.type!r}" for p in params)


def format_program(program: ir.Program) -> str:
    lines = [f"program {program.name}({_params(program.params)}):"]
    if program.temporaries:
        lines.append(f"    temporaries {_params(program.temporaries)}")
    for call in program.calls:
        outs = ", ".join(call.outs)
        args = ", ".join(format_expr(a) for a in call.args)
        lines.append(f"    {outs} = {call.callee}({args}) over {call.domain!r}")
    for fop in program.field_operators:
        lines.append("")
        lines.append(f"field_operator {fop.name}({_params(fop.params)}) -> {fop.return_type!r}:")
        lines.append(f"    return {format_expr(fop.body)}")
    return "\n".join(lines)
