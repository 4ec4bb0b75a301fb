"""Arithmetic on a program's scalar parameters while the program is traced (`j - 2`,
`upper // 2`): a value that a call takes as a scalar argument or a domain as a bound,
typed by the field operators' rules (program/tracing.py), evaluated once per call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.tracing import Symbol, binary, math_call, unary

if TYPE_CHECKING:
    from stencilchain.program.program_trace import ProgramTrace


class ProgramScalar:
    """An expression of a program's scalar parameters and literals (`expr`, of a scalar
    type) while the program is traced."""

    __slots__ = ("expr", "trace")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, trace: ProgramTrace, expr: ir.Expr) -> None:
        self.trace = trace
        self.expr = expr

    def program_math(self, fn: str, args: tuple[object, ...]) -> ProgramScalar:
        """A math function of this and other program scalars (tracing.math_call)."""
        return scalar_math(self.trace, fn, args)

    def __add__(self, other: object) -> ProgramScalar:
        return scalar_binary(self.trace, "add", self, other)

    def __radd__(self, other: object) -> ProgramScalar:
        return scalar_binary(self.trace, "add", other, self)

    def __sub__(self, other: object) -> ProgramScalar:
        return scalar_binary(self.trace, "sub", self, other)

    def __rsub__(self, other: object) -> ProgramScalar:
        return scalar_binary(self.trace, "sub", other, self)

    def __mul__(self, other: object) -> ProgramScalar:
        return scalar_binary(self.trace, "mul", self, other)

    def __rmul__(self, other: object) -> ProgramScalar:
        return scalar_binary(self.trace, "mul", other, self)

    def __truediv__(self, other: object) -> ProgramScalar:
        return scalar_binary(self.trace, "div", self, other)

    def __rtruediv__(self, other: object) -> ProgramScalar:
        return scalar_binary(self.trace, "div", other, self)

    def __floordiv__(self, other: object) -> ProgramScalar:
        return scalar_binary(self.trace, "floordiv", self, other)

    def __rfloordiv__(self, other: object) -> ProgramScalar:
        return scalar_binary(self.trace, "floordiv", other, self)

    def __mod__(self, other: object) -> ProgramScalar:
        return scalar_binary(self.trace, "mod", self, other)

    def __rmod__(self, other: object) -> ProgramScalar:
        return scalar_binary(self.trace, "mod", other, self)

    def __neg__(self) -> ProgramScalar:
        return scalar_neg(self.trace, self)

    def __repr__(self) -> str:
        return f"<program scalar expression: {self.expr.type!r}>"

    def __bool__(self) -> bool:
        raise DefinitionError(
            "a program's scalar parameters have no value while it is traced: an expression "
            "of them is passed to calls or used as a domain bound, never tested by `if`"
        )


def scalar_operand(trace: ProgramTrace, value: object, what: str) -> object:
    """The operand of a program's scalar arithmetic that `value` is: a ProgramScalar's (a
    scalar parameter's, `ProgramArg.program_scalar`) traced value, or a literal as it is."""
    convert = getattr(value, "program_scalar", None)
    if callable(convert):  # a ProgramArg (program_args.py imports this module)
        value = convert()
    if isinstance(value, ProgramScalar):
        if value.trace is not trace:
            raise DefinitionError(f"{what}: an expression of another program's parameters")
        return Symbol(value.expr)
    if isinstance(value, (bool, int, float)):
        return value
    raise DefinitionError(
        f"{what}: {value!r} is neither a scalar parameter of {trace.name} nor a literal"
    )


def scalar_binary(trace: ProgramTrace, op: str, left: object, right: object) -> ProgramScalar:
    """`left op right` of program scalars and literals."""
    what = f"`{ir.OP_SYMBOLS[op]}` in program {trace.name}"
    a, b = scalar_operand(trace, left, what), scalar_operand(trace, right, what)
    return ProgramScalar(trace, binary(op, a, b).expr)


def scalar_math(trace: ProgramTrace, fn: str, args: tuple[object, ...]) -> ProgramScalar:
    """`sc.math.<fn>(*args)` of program scalars and literals (`maximum(n, 2)` in a bound)."""
    what = f"sc.math.{fn} in program {trace.name}"
    return ProgramScalar(trace, math_call(fn, *(scalar_operand(trace, a, what) for a in args)).expr)


def scalar_neg(trace: ProgramTrace, operand: object) -> ProgramScalar:
    value = scalar_operand(trace, operand, f"unary `-` in program {trace.name}")
    return ProgramScalar(trace, unary("neg", value).expr)


def computed_scalar(params: tuple[ir.Param, ...], exprs: list[ir.Expr]) -> str | None:
    """The first scalar parameter whose argument is an expression of the program's scalar
    parameters (not one parameter or a literal), or None."""
    for param, expr in zip(params, exprs):
        if not isinstance(param.type, ir.FieldType) and not isinstance(expr, (ir.Ref, ir.Literal)):
            return param.name
    return None
