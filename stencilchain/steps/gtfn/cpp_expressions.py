"""C++ for the expressions of one field-operator body, in SSA form.

Every non-trivial node becomes a `const T tN = ...;` statement. A node is evaluated
at a position (an offset per dimension from the current point); shifts move it.
With `cse` on, a node already emitted at the same position is reused.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import ScalarType

Position = tuple[tuple[Dimension, int], ...]
# How a field reference is read: (ref name, position) -> C++ expression
FieldReader = Callable[[str, Mapping[Dimension, int]], str]

_INFIX = {**ir.OP_SYMBOLS, "and": "&&", "or": "||"}  # C++ spells the logical ones
_MATH = {
    "sqrt": "std::sqrt", "exp": "std::exp", "log": "std::log", "sin": "std::sin",
    "cos": "std::cos", "floor": "std::floor", "ceil": "std::ceil", "abs": "sc_abs",
    "minimum": "sc_minimum", "maximum": "sc_maximum",
}  # fmt: skip


def dtype_of(t: ir.Type) -> ScalarType:
    if isinstance(t, ir.FieldType):
        return t.dtype
    assert isinstance(t, ScalarType)
    return t


def cpp_type(t: ir.Type) -> str:
    if isinstance(t, ir.TupleType):
        return f"sc_tuple_ns::tuple<{', '.join(e.dtype.cpp for e in t.elems)}>"
    return dtype_of(t).cpp


def literal(value: bool | int | float, dtype: ScalarType, *, decimal: bool = False) -> str:
    """An exact C++ literal of `value` as `dtype`: floats as hex, or with `decimal` in their
    shortest round-trip decimal form (parenthesized when negative)."""
    if dtype.is_bool:
        return "true" if value else "false"
    if dtype.is_integer:
        v = int(value)
        text = "(-9223372036854775807LL - 1)" if v == -(2**63) else f"{v}LL"
        return f"static_cast<{dtype.cpp}>({text})"
    f = float(value)
    if math.isnan(f):
        text = "std::numeric_limits<double>::quiet_NaN()"
    elif math.isinf(f):
        text = ("-" if f < 0 else "") + "std::numeric_limits<double>::infinity()"
    elif decimal:
        text = repr(f)
        text = f"({text})" if text.startswith("-") else text
    else:
        text = f.hex()
    return text if dtype.name == "float64" else f"static_cast<float>({text})"


class ExpressionEmitter:
    """Emits the SSA statements of expressions; `statements` collects them."""

    def __init__(
        self,
        read_field: FieldReader,
        scalars: Mapping[str, str],
        call_field_operator: Callable[[ir.Call, Mapping[Dimension, int], ExpressionEmitter], str]
        | None,
        cse: bool,
        prefix: str = "t",
    ) -> None:
        self.read_field = read_field
        self.scalars = scalars
        self.call_field_operator = call_field_operator
        self.cse = cse
        self.prefix = prefix
        self.statements: list[str] = []
        self._memo: dict[tuple[ir.Expr, Position], str] = {}
        self._count = 0

    def fresh(self) -> str:
        name = f"{self.prefix}{self._count}"
        self._count += 1
        return name

    def bind(self, ctype: str, value: str) -> str:
        name = self.fresh()
        self.statements.append(f"const {ctype} {name} = {value};")
        return name

    def emit(self, expr: ir.Expr, pos: Mapping[Dimension, int]) -> str:
        """A C++ expression (usually a temporary's name) for `expr` at `pos`."""
        if isinstance(expr, ir.Literal):
            return literal(expr.value, expr.type)
        if isinstance(expr, ir.Ref):
            if isinstance(expr.type, ir.FieldType):
                return self.read_field(expr.name, pos)
            return self.scalars[expr.name]
        if isinstance(expr, ir.Shift):
            moved = dict(pos)
            for dim, amount in expr.offsets:
                moved[dim] = moved.get(dim, 0) + amount
            return self.emit(expr.expr, moved)
        key = (expr, _position_key(expr, pos))
        if self.cse and key in self._memo:
            return self._memo[key]
        name = self.bind(
            "auto" if isinstance(expr.type, ir.TupleType) else cpp_type(expr.type),
            self._value(expr, pos),
        )
        if self.cse:
            self._memo[key] = name
        return name

    def _value(self, expr: ir.Expr, pos: Mapping[Dimension, int]) -> str:
        if isinstance(expr, ir.Binary):
            left, right = self.emit(expr.left, pos), self.emit(expr.right, pos)
            if expr.op == "pow":
                dtype = dtype_of(expr.type)
                if dtype.is_float:
                    return f"std::pow({left}, {right})"
                assert isinstance(expr.right, ir.Literal)
                return f"sc_ipow<{dtype.cpp}>({left}, {int(expr.right.value)})"
            result = f"({left} {_INFIX[expr.op]} {right})"
            dtype = dtype_of(expr.type)
            return f"static_cast<{dtype.cpp}>{result}" if dtype.is_integer else result
        if isinstance(expr, ir.Unary):
            operand = self.emit(expr.operand, pos)
            if expr.op == "not":
                return f"(!{operand})"
            return f"static_cast<{dtype_of(expr.type).cpp}>(-{operand})"
        if isinstance(expr, ir.MathCall):
            args = ", ".join(self.emit(a, pos) for a in expr.args)
            return f"{_MATH[expr.fn]}({args})"
        if isinstance(expr, ir.Where):
            cond = self.emit(expr.cond, pos)
            true, false = self.emit(expr.true, pos), self.emit(expr.false, pos)
            return f"({cond} ? {true} : {false})"
        if isinstance(expr, ir.Cast):
            return f"static_cast<{dtype_of(expr.type).cpp}>({self.emit(expr.expr, pos)})"
        if isinstance(expr, ir.MakeTuple):
            return f"sc_tuple_ns::make_tuple({', '.join(self.emit(e, pos) for e in expr.elems)})"
        if isinstance(expr, ir.TupleGet):
            return f"sc_tuple_ns::get<{expr.index}>({self.emit(expr.expr, pos)})"
        if isinstance(expr, ir.Call):
            if self.call_field_operator is None:
                raise ValueError(f"call of {expr.callee} left in an inlined body")
            return self.call_field_operator(expr, pos, self)
        raise TypeError(f"unknown IR node {type(expr).__name__}")


def _position_key(expr: ir.Expr, pos: Mapping[Dimension, int]) -> Position:
    if isinstance(expr.type, ScalarType):
        return ()  # scalars do not depend on the position
    return tuple(sorted(((d, a) for d, a in pos.items() if a != 0), key=lambda x: x[0].name))


_CPU_PRELUDE = """#define SC_HD
namespace sc_tuple_ns = std;"""
_GPU_PRELUDE = """#include <cuda/std/tuple>
#define SC_HD __host__ __device__
namespace sc_tuple_ns = cuda::std;  // std::tuple is host-only in device code"""


def prelude(gpu: bool) -> str:
    """Includes and helpers of every generated program (CUDA-ready for the GPU)."""
    return _PRELUDE.replace("SC_DEVICE_PRELUDE", _GPU_PRELUDE if gpu else _CPU_PRELUDE)


_PRELUDE = r"""
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <tuple>
#include <type_traits>

SC_DEVICE_PRELUDE

namespace {

template <class T> SC_HD inline T sc_abs(T x) {
    if constexpr (std::is_floating_point_v<T>) {
        return std::fabs(x);  // +0.0 for -0.0, as numpy.abs
    } else {
        return x < T(0) ? static_cast<T>(-x) : x;  // wraps for the minimum, as numpy.abs
    }
}

template <class T> SC_HD inline T sc_minimum(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (a != a || b != b) return a + b;  // NaN propagates, as in numpy.minimum
    }
    return b < a ? b : a;
}

template <class T> SC_HD inline T sc_maximum(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (a != a || b != b) return a + b;
    }
    return a < b ? b : a;
}

template <class T> SC_HD inline T sc_ipow(T base, long long exponent) {
    // integer power with wrap-around (the module is built with -fwrapv), like numpy
    T result = 1;
    while (exponent > 0) {
        if (exponent & 1) result = static_cast<T>(result * base);
        base = static_cast<T>(base * base);
        exponent >>= 1;
    }
    return result;
}

}  // namespace
"""
