"""The values a program's function is called with while it is traced (its parameters, and
the temporaries its calls make): they can only be passed to calls, and scalar parameters
combined by arithmetic (program/program_scalars.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.program_scalars import (
    ProgramScalar,
    scalar_binary,
    scalar_math,
    scalar_neg,
)

if TYPE_CHECKING:
    from stencilchain.program.program_trace import ProgramTrace


class ProgramArg:
    """A program parameter or temporary while the program is traced: it can only be
    passed to calls."""

    __slots__ = ("ref", "temporary", "trace")

    def __init__(self, trace: ProgramTrace, ref: ir.Ref, temporary: bool = False) -> None:
        self.trace = trace
        self.ref = ref
        self.temporary = temporary

    @property
    def kind(self) -> str:
        return "temporary" if self.temporary else "program parameter"

    def __repr__(self) -> str:
        return f"<{self.kind} {self.ref.name}: {self.ref.type!r}>"

    def no_arithmetic(self, *_: object) -> None:
        if self.temporary or isinstance(self.ref.type, ir.FieldType):
            raise DefinitionError(
                f"{self.kind} '{self.ref.name}' used in an expression; a program only calls "
                "field operators, arithmetic on fields belongs in a @field_operator"
            )
        raise DefinitionError(
            f"scalar parameter '{self.ref.name}' used in an expression a program cannot "
            "evaluate; a program combines its scalar parameters only by `+ - * / // %` "
            "and unary `-` (for call arguments and domain bounds)"
        )

    def program_scalar(self) -> ProgramScalar:
        """This scalar parameter as an operand of a program's scalar arithmetic."""
        if self.temporary or isinstance(self.ref.type, ir.FieldType):
            self.no_arithmetic()
        return ProgramScalar(self.trace, self.ref)

    def _scalar(self, op: str, left: object, right: object) -> ProgramScalar:
        return scalar_binary(self.trace, op, left, right)

    def program_math(self, fn: str, args: tuple[object, ...]) -> ProgramScalar:
        """A math function of this and other program scalars (tracing.math_call)."""
        return scalar_math(self.trace, fn, args)

    def __add__(self, other: object) -> ProgramScalar:
        return self._scalar("add", self, other)

    def __radd__(self, other: object) -> ProgramScalar:
        return self._scalar("add", other, self)

    def __sub__(self, other: object) -> ProgramScalar:
        return self._scalar("sub", self, other)

    def __rsub__(self, other: object) -> ProgramScalar:
        return self._scalar("sub", other, self)

    def __mul__(self, other: object) -> ProgramScalar:
        return self._scalar("mul", self, other)

    def __rmul__(self, other: object) -> ProgramScalar:
        return self._scalar("mul", other, self)

    def __truediv__(self, other: object) -> ProgramScalar:
        return self._scalar("div", self, other)

    def __rtruediv__(self, other: object) -> ProgramScalar:
        return self._scalar("div", other, self)

    def __floordiv__(self, other: object) -> ProgramScalar:
        return self._scalar("floordiv", self, other)

    def __rfloordiv__(self, other: object) -> ProgramScalar:
        return self._scalar("floordiv", other, self)

    def __mod__(self, other: object) -> ProgramScalar:
        return self._scalar("mod", self, other)

    def __rmod__(self, other: object) -> ProgramScalar:
        return self._scalar("mod", other, self)

    def __neg__(self) -> ProgramScalar:
        return scalar_neg(self.trace, self)

    __pow__ = __rpow__ = __call__ = no_arithmetic
    __lt__ = __le__ = __gt__ = __ge__ = __and__ = __or__ = __invert__ = no_arithmetic
    __rand__ = __ror__ = __xor__ = __rxor__ = no_arithmetic
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = no_arithmetic
    __matmul__ = __rmatmul__ = __pos__ = __abs__ = no_arithmetic

    def __array_ufunc__(self, *_: object, **__: object) -> None:
        """`np.sqrt(f)` or `np.float64(2) * f` on a program parameter."""
        self.no_arithmetic()
