"""How far each field parameter is read from the current point (access extents)."""

from __future__ import annotations

from collections.abc import Mapping

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension

# per parameter name, per dimension, the (min, max) offset at which it is read
Extents = dict[str, dict[Dimension, tuple[int, int]]]
_Interval = dict[Dimension, tuple[int, int]]


def field_operator_extents(
    fop: ir.FieldOperatorDef, fops: Mapping[str, ir.FieldOperatorDef]
) -> Extents:
    """The extents of every field parameter of `fop` that it reads."""
    out: Extents = {}
    _walk(fop.body, {}, out, fops)
    return out


def _walk(
    expr: ir.Expr, shift: _Interval, out: Extents, fops: Mapping[str, ir.FieldOperatorDef]
) -> None:
    if isinstance(expr, ir.Ref):
        if isinstance(expr.type, ir.FieldType):
            seen = out.setdefault(expr.name, {})
            for dim in expr.type.dims:
                lo, hi = shift.get(dim, (0, 0))
                old = seen.get(dim)
                seen[dim] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
    elif isinstance(expr, ir.Shift):
        inner = dict(shift)
        for dim, amount in expr.offsets:
            lo, hi = inner.get(dim, (0, 0))
            inner[dim] = (lo + amount, hi + amount)
        _walk(expr.expr, inner, out, fops)
    elif isinstance(expr, ir.Call):
        callee = fops[expr.callee]
        callee_extents = field_operator_extents(callee, fops)
        for param, arg in zip(callee.params, expr.args):
            if isinstance(param.type, ir.FieldType):
                if param.name not in callee_extents:
                    continue  # the callee never reads this argument
                inner = dict(shift)
                for dim, (lo, hi) in callee_extents[param.name].items():
                    slo, shi = inner.get(dim, (0, 0))
                    inner[dim] = (slo + lo, shi + hi)
                _walk(arg, inner, out, fops)
            else:
                _walk(arg, shift, out, fops)
    else:
        for child in children(expr):
            _walk(child, shift, out, fops)


def children(expr: ir.Expr) -> tuple[ir.Expr, ...]:
    """The direct sub-expressions of a node."""
    if isinstance(expr, (ir.Literal, ir.Ref)):
        return ()
    if isinstance(expr, (ir.Shift, ir.Cast, ir.TupleGet)):
        return (expr.expr,)
    if isinstance(expr, ir.Unary):
        return (expr.operand,)
    if isinstance(expr, ir.Binary):
        return (expr.left, expr.right)
    if isinstance(expr, ir.Where):
        return (expr.cond, expr.true, expr.false)
    if isinstance(expr, (ir.MathCall, ir.Call)):
        return expr.args
    if isinstance(expr, ir.MakeTuple):
        return expr.elems
    raise TypeError(f"unknown IR node {type(expr).__name__}")
