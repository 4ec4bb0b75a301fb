"""Integer expressions of a program's scalar parameters that give a domain bound
(`domain={K: (n // 2, n)}`): `+ - *`, `//` by a positive literal, and the larger or smaller
of two (`maximum(2, n - 2)`), evaluated once per call on the parameters' values as 64-bit
integers, in Python and in the C++ of every family."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Union

from stencilchain.program.records import frozen

# the operators a bound expression may use, as the IR's binary operators name them
BOUND_OPS = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//"}
# the math functions a bound expression may use, as the IR names them
BOUND_FUNCTIONS = ("maximum", "minimum")

Operand = Union["BoundExpr", str, int]


@frozen
class BoundExpr:
    """`left op right`, each side an expression, a parameter's name or an int literal."""

    op: str
    left: Operand
    right: Operand

    def evaluate(self, scalars: Mapping[str, Any]) -> int:
        """The value for the parameters' values `scalars` (Python's floor division)."""
        a, b = _value(self.left, scalars), _value(self.right, scalars)
        if self.op == "add":
            return a + b
        if self.op == "sub":
            return a - b
        if self.op == "mul":
            return a * b
        if self.op == "maximum":
            return max(a, b)
        if self.op == "minimum":
            return min(a, b)
        return a // b

    def cpp(self, var: Callable[[str], str]) -> str:
        """The int64 C++ expression; `var` gives the C++ name of a parameter."""
        a, b = _cpp(self.left, var), _cpp(self.right, var)
        if self.op in BOUND_FUNCTIONS:
            return f"std::{self.op[:3]}<std::int64_t>({a}, {b})"
        if self.op != "floordiv":
            return f"({a} {BOUND_OPS[self.op]} {b})"
        # the divisor is a positive literal: round towards minus infinity, as Python does
        return f"({a} >= 0 ? {a} / {b} : -((-{a} + {b} - 1) / {b}))"

    def params(self) -> tuple[str, ...]:
        """The parameters it reads, in order of first appearance."""
        names: list[str] = []
        for side in (self.left, self.right):
            found = side.params() if isinstance(side, BoundExpr) else (side,)
            names += [n for n in found if isinstance(n, str) and n not in names]
        return tuple(names)

    @property
    def symbol(self) -> str:
        """A C identifier for this expression (DaCe's bound symbols are named by it)."""
        import hashlib  # on first use: it loads OpenSSL, which defining a stencil needs not

        digest = hashlib.sha256(repr(self).encode()).hexdigest()[:10]
        return f"sc_bx{digest}"

    def __repr__(self) -> str:
        if self.op in BOUND_FUNCTIONS:
            return f"{self.op}({self.left!r}, {self.right!r})"
        return f"{_text(self.left)} {BOUND_OPS[self.op]} {_text(self.right)}"


def _value(side: Operand, scalars: Mapping[str, Any]) -> int:
    if isinstance(side, BoundExpr):
        return side.evaluate(scalars)
    if isinstance(side, str):
        return int(scalars[side])
    return side


def _cpp(side: Operand, var: Callable[[str], str]) -> str:
    if isinstance(side, BoundExpr):
        return side.cpp(var)
    if isinstance(side, str):
        return f"static_cast<std::int64_t>({var(side)})"
    return f"std::int64_t({side})"


def _text(side: Operand) -> str:
    return f"({side!r})" if isinstance(side, BoundExpr) else str(side)
