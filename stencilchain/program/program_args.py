"""The values a program's function is called with while it is traced (its parameters, and
the temporaries its calls make): they can only be passed to calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stencilchain.errors import DefinitionError
from stencilchain.program import ir

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

    def _no_arithmetic(self, *_: object) -> None:
        raise DefinitionError(
            f"{self.kind} '{self.ref.name}' used in an expression; a program only calls "
            "field operators, arithmetic belongs in a @field_operator"
        )

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _no_arithmetic
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __neg__ = __call__ = _no_arithmetic
    __lt__ = __le__ = __gt__ = __ge__ = __and__ = __or__ = __invert__ = _no_arithmetic
    __rand__ = __ror__ = __xor__ = __rxor__ = __floordiv__ = __rfloordiv__ = _no_arithmetic
    __mod__ = __rmod__ = __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _no_arithmetic
    __matmul__ = __rmatmul__ = __pos__ = __abs__ = _no_arithmetic

    def __array_ufunc__(self, *_: object, **__: object) -> None:
        """`np.sqrt(f)` or `np.float64(2) * f` on a program parameter."""
        self._no_arithmetic()
