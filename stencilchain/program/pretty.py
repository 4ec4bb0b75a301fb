"""A readable text form of the IR, for debugging (`str(program.ir)`); it reads the nodes
of program/ir_nodes.py, so that ir.py can give its programs this text form."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stencilchain.program import ir_nodes

if TYPE_CHECKING:
    from stencilchain.program import ir


def format_expr(expr: ir_nodes.Expr) -> str:
    """`expr` in the DSL's notation, every binary operation parenthesized."""
    return ExprFormatter().visit(expr)


class ExprFormatter(ir_nodes.ExprVisitor[str]):
    """`visit(expr)` gives the text of `expr`."""

    def visit_Literal(self, expr: ir_nodes.Literal) -> str:
        return f"{expr.value!r}:{expr.type}"

    def visit_Ref(self, expr: ir_nodes.Ref) -> str:
        return expr.name

    def visit_Shift(self, expr: ir_nodes.Shift) -> str:
        offsets = ", ".join(f"{d.name}{a:+d}" for d, a in expr.offsets)
        inner = self.visit(expr.expr)
        if not isinstance(expr.expr, ir_nodes.Ref):
            inner = f"({inner})"
        return f"{inner}({offsets})"

    def visit_Binary(self, expr: ir_nodes.Binary) -> str:
        return f"({self.visit(expr.left)} {ir_nodes.OP_SYMBOLS[expr.op]} {self.visit(expr.right)})"

    def visit_Unary(self, expr: ir_nodes.Unary) -> str:
        return f"{'-' if expr.op == 'neg' else '~'}{self.visit(expr.operand)}"

    def visit_MathCall(self, expr: ir_nodes.MathCall) -> str:
        return f"{expr.fn}({', '.join(self.visit(a) for a in expr.args)})"

    def visit_Where(self, expr: ir_nodes.Where) -> str:
        return f"where({self.visit(expr.cond)}, {self.visit(expr.true)}, {self.visit(expr.false)})"

    def visit_Cast(self, expr: ir_nodes.Cast) -> str:
        dtype = expr.type.dtype if isinstance(expr.type, ir_nodes.FieldType) else expr.type
        return f"astype({self.visit(expr.expr)}, {dtype})"

    def visit_Broadcast(self, expr: ir_nodes.Broadcast) -> str:
        dims = ", ".join(d.name for d in expr.type.dims)
        return f"broadcast({self.visit(expr.expr)}, ({dims}))"

    def visit_Index(self, expr: ir_nodes.Index) -> str:
        return f"index({expr.dim.name})"

    def visit_NeighborShift(self, expr: ir_nodes.NeighborShift) -> str:
        inner = self.visit(expr.expr)
        if not isinstance(expr.expr, ir_nodes.Ref):
            inner = f"({inner})"
        slot = "" if expr.slot is None else f"[{expr.slot}]"
        return f"{inner}({expr.connectivity.name}{slot})"

    def visit_NeighborReduce(self, expr: ir_nodes.NeighborReduce) -> str:
        fn = {"sum": "neighbor_sum", "max": "max_over", "min": "min_over"}[expr.op]
        return f"{fn}({self.visit(expr.expr)}, axis={expr.axis.name})"

    def visit_LocalSlot(self, expr: ir_nodes.LocalSlot) -> str:
        inner = self.visit(expr.expr)
        if not isinstance(expr.expr, ir_nodes.Ref):
            inner = f"({inner})"
        return f"{inner}[{expr.axis.name}({expr.slot})]"

    def visit_DynamicShift(self, expr: ir_nodes.DynamicShift) -> str:
        inner = self.visit(expr.expr)
        if not isinstance(expr.expr, ir_nodes.Ref):
            inner = f"({inner})"
        return f"{inner}(as_offset({expr.dim.name}, {self.visit(expr.offset)}))"

    def visit_ConcatWhere(self, expr: ir_nodes.ConcatWhere) -> str:
        where = " | ".join(f"{expr.dim.name} in {i!r}" for i in expr.intervals) or "never"
        return f"concat_where({where}, {self.visit(expr.true)}, {self.visit(expr.false)})"

    def visit_Call(self, expr: ir_nodes.Call) -> str:
        return f"{expr.callee}({', '.join(self.visit(a) for a in expr.args)})"

    def visit_ScanCall(self, expr: ir_nodes.ScanCall) -> str:
        return f"{expr.callee}({', '.join(self.visit(a) for a in expr.args)})"

    def visit_MakeTuple(self, expr: ir_nodes.MakeTuple) -> str:
        return f"({', '.join(self.visit(e) for e in expr.elems)})"

    def visit_TupleGet(self, expr: ir_nodes.TupleGet) -> str:
        return f"{self.visit(expr.expr)}[{expr.index}]"


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
    for scan in program.scan_operators:
        direction = "forward" if scan.forward else "backward"
        init = ", ".join(format_expr(lit) for lit in scan.init)
        state = ", ".join(s.name for s in scan.state)
        body = ", ".join(format_expr(e) for e in scan.body)
        lines.append("")
        lines.append(
            f"scan_operator {scan.name}({_params(scan.params)}) -> {scan.return_type!r}, "
            f"{direction} along {scan.axis.name} from ({init}):"
        )
        lines.append(f"    ({state}) <- ({body})")
    return "\n".join(lines)
