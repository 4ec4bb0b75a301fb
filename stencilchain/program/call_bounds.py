"""A domain bound written as an integer expression of a program's scalar parameters
(`vertical_end - 1`, `upper // 2`): the `ir.Bound` it is, a constant added or subtracted
last kept as the bound's offset (so `n - 1` and `n` count from the same anchor)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.bound_exprs import BOUND_FUNCTIONS, BOUND_OPS, BoundExpr, Operand
from stencilchain.program.dtypes import ScalarType


def _format(expr: ir.Expr) -> str:
    """`expr` as the user wrote it, for an error (program/pretty.py, loaded then)."""
    from stencilchain.program.pretty import format_expr

    return format_expr(expr)


def bound_of_expression(expr: ir.Expr, what: str) -> ir.Bound:
    """The bound `expr` (traced from program scalars) gives; `what` names it in errors."""
    if not isinstance(expr.type, ScalarType) or not expr.type.is_integer:
        raise DefinitionError(
            f"{what} is {_format(expr)}, of type {expr.type!r}; a bound is an integer "
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


def constant_bound(expr: ir.Expr) -> int | None:
    """The int that `expr` is where it is an integer expression of int literals only
    (`sc.math.minimum(1, 2)` written in a program); else None."""
    if not isinstance(expr.type, ScalarType) or not expr.type.is_integer:
        return None
    try:
        operand = _operand(expr, "")
    except DefinitionError:
        return None
    return operand if isinstance(operand, int) else None


def _operand(expr: ir.Expr, what: str) -> Operand:
    if isinstance(expr, ir.Ref):
        return expr.name
    if isinstance(expr, ir.Literal) and type(expr.value) in (int, StaticInt):
        return int(expr.value)
    if isinstance(expr, ir.Unary) and expr.op == "neg":
        return BoundExpr("sub", 0, _operand(expr.operand, what))
    if isinstance(expr, ir.Binary) and expr.op in BOUND_OPS:
        left, right = _operand(expr.left, what), _operand(expr.right, what)
        if expr.op == "floordiv" and not (isinstance(right, int) and right > 0):
            raise DefinitionError(
                f"{what} divides by {_format(expr.right)}; a bound divides (`//`) only "
                "by a positive int literal"
            )
        if isinstance(left, int) and isinstance(right, int):
            return BoundExpr(expr.op, left, right).evaluate({})
        return BoundExpr(expr.op, left, right)
    if isinstance(expr, ir.MathCall) and expr.fn in BOUND_FUNCTIONS and len(expr.args) == 2:
        left, right = (_operand(a, what) for a in expr.args)
        if isinstance(left, int) and isinstance(right, int):
            return BoundExpr(expr.fn, left, right).evaluate({})
        return BoundExpr(expr.fn, left, right)
    raise DefinitionError(
        f"{what} is {_format(expr)}; a bound is built from integer scalar parameters "
        f"and int literals with {' '.join(BOUND_OPS.values())} (`//` by a positive literal), "
        "maximum and minimum"
    )


def substitute_bound(bound: ir.Bound, bindings: Mapping[str, ir.Expr]) -> ir.Bound:
    """`bound` with the scalars it names replaced by their bindings (a field operator's
    parameters by its call's arguments): a literal gives a literal bound (negative: from
    the end), a Ref another name, an expression an expression."""
    param = bound.param
    if param is None or not any(n in bindings for n in _names(param)):
        return bound
    value = _bind(param, bindings)
    if isinstance(value, int):
        return ir.Bound(value + bound.value, from_end=value < 0)
    return ir.Bound(bound.value, False, param=value)


def _names(param: str | BoundExpr) -> tuple[str, ...]:
    return param.params() if isinstance(param, BoundExpr) else (param,)


def _bind(side: Operand, bindings: Mapping[str, ir.Expr]) -> Operand:
    if isinstance(side, int):
        return side
    if isinstance(side, str):
        if side not in bindings:
            return side
        return _operand(bindings[side], f"the argument for '{side}' in a condition's bound")
    left, right = _bind(side.left, bindings), _bind(side.right, bindings)
    if isinstance(left, int) and isinstance(right, int):
        return BoundExpr(side.op, left, right).evaluate({})
    return BoundExpr(side.op, left, right)


def substitute_intervals(
    intervals: tuple[ir.Interval, ...], bindings: Mapping[str, ir.Expr]
) -> tuple[ir.Interval, ...]:
    """`intervals` (a concat_where's) with `substitute_bound` applied to each bound."""
    return tuple(
        ir.Interval(
            tuple(substitute_bound(b, bindings) for b in i.starts),
            tuple(substitute_bound(b, bindings) for b in i.stops),
        )
        for i in intervals
    )


class StaticInt(int):
    """An int static parameter's value inside a traced program: an int that remembers the
    value it was given (`base`) through `+`/`-` of ints, so that a domain bound made from it
    means what the same value means as a scalar parameter (`n = -1`: the last level)."""

    base: int

    def __new__(cls, value: int, base: int | None = None) -> StaticInt:
        self = super().__new__(cls, value)
        self.base = int(value) if base is None else base
        return self

    def __add__(self, other: object) -> Any:
        if type(other) is int:
            return StaticInt(int(self) + other, self.base)
        return super().__add__(other)  # type: ignore[operator]

    def __radd__(self, other: object) -> Any:
        return self.__add__(other)

    def __sub__(self, other: object) -> Any:
        if type(other) is int:
            return StaticInt(int(self) - other, self.base)
        return super().__sub__(other)  # type: ignore[operator]

    def bound(self) -> ir.Bound:
        """The bound by the rule of a parameter bound: `(size + base if base < 0 else base) + added`."""
        return ir.Bound(int(self), from_end=self.base < 0)
