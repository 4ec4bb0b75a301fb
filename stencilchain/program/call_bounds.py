"""A domain bound written as an integer expression of a program's scalar parameters
(`vertical_end - 1`, `upper // 2`): the `ir.Bound` it is, a constant added or subtracted
last kept as the bound's offset (so `n - 1` and `n` count from the same anchor)."""

from __future__ import annotations

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.bound_exprs import BOUND_OPS, BoundExpr, Operand
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.pretty import format_expr


def bound_of_expression(expr: ir.Expr, what: str) -> ir.Bound:
    """The bound `expr` (traced from program scalars) gives; `what` names it in errors."""
    if not isinstance(expr.type, ScalarType) or not expr.type.is_integer:
        raise DefinitionError(
            f"{what} is {format_expr(expr)}, of type {expr.type!r}; a bound is an integer "
            "expression of integer scalar parameters (int32 or int64)"
        )
    operand = _operand(expr, what)
    offset = 0
    while isinstance(operand, BoundExpr) and operand.op in ("add", "sub"):
        if isinstance(operand.right, int):
            offset += operand.right if operand.op == "add" else -operand.right
            operand = operand.left
        elif isinstance(operand.left, int) and operand.op == "add":
            offset += operand.left
            operand = operand.right
        else:
            break
    assert not isinstance(operand, int)  # an expression of parameters has one
    return ir.Bound(offset, False, param=operand)


def _operand(expr: ir.Expr, what: str) -> Operand:
    if isinstance(expr, ir.Ref):
        return expr.name
    if isinstance(expr, ir.Literal) and type(expr.value) is int:
        return expr.value
    if isinstance(expr, ir.Unary) and expr.op == "neg":
        return BoundExpr("sub", 0, _operand(expr.operand, what))
    if isinstance(expr, ir.Binary) and expr.op in BOUND_OPS:
        left, right = _operand(expr.left, what), _operand(expr.right, what)
        if expr.op == "floordiv" and not (isinstance(right, int) and right > 0):
            raise DefinitionError(
                f"{what} divides by {format_expr(expr.right)}; a bound divides (`//`) only "
                "by a positive int literal"
            )
        if isinstance(left, int) and isinstance(right, int):
            return BoundExpr(expr.op, left, right).evaluate({})
        return BoundExpr(expr.op, left, right)
    raise DefinitionError(
        f"{what} is {format_expr(expr)}; a bound is built from integer scalar parameters "
        f"and int literals with {' '.join(BOUND_OPS.values())} (`//` by a positive literal)"
    )
