"""The one C++ expression emitter of both families: IR expressions -> SSA statements.

Every operation becomes a `const T <prefix>N = ...;` statement in `statements`; literals
and reads are used in place. A node is emitted at a position (an offset per dimension from
the current point); shifts move it. How fields and scalars are read is the family's
(callbacks: GTFN indexes pointers, DaCe names a tasklet's connectors), and so are the
policy knobs: common-subexpression sharing, float literals in hex or shortest decimal,
tuples, and calls of field operators (GTFN without transforms).

The meaning is NumPy's exactly, on every compiler and without special flags: float32
stays float32 (literals are cast), integer `+ - *`, unary `-`, `abs` and `**` wrap around
(computed in the unsigned type, which C++ defines), minimum/maximum propagate NaN, casts
are static_casts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import ScalarType
from stencilchain.steps.cpp.literals import literal

Position = tuple[tuple[Dimension, int], ...]
# How a field parameter is read at a position (offsets from the current point).
FieldReader = Callable[[str, Mapping[Dimension, int]], str]
# How a scalar parameter is read.
ScalarReader = Callable[[str], str]
# The C++ value of a field-operator call at a position (GTFN without transforms).
CallWriter = Callable[[ir.Call, Mapping[Dimension, int], "ExpressionEmitter"], str]

# The namespace of the tuple type (std, or cuda::std on the GPU) that the program's prelude
# defines; used only with `tuples` on.
TUPLE_NAMESPACE = "sc_tuple_ns"

# C++ operators of the binary operations that are one infix operator (all but `pow`).
INFIX = {**{op: s for op, s in ir.OP_SYMBOLS.items() if op != "pow"}, "and": "&&", "or": "||"}
_UNSIGNED = {"int32": "std::uint32_t", "int64": "std::uint64_t"}
# Nodes emitted in place: never bound to a name, so never shared.
_IN_PLACE = (ir.Literal, ir.Ref, ir.Shift)


def dtype_of(t: ir.Type) -> ScalarType:
    """The element type of a field or scalar type."""
    if isinstance(t, ir.FieldType):
        return t.dtype
    if isinstance(t, ir.TupleType):
        raise TypeError(f"a tuple {t!r} has no single dtype")
    return t


def cpp_type(t: ir.Type) -> str:
    """The C++ type of one value of `t` (a tuple of the elements' types for a tuple)."""
    if isinstance(t, ir.TupleType):
        return f"{TUPLE_NAMESPACE}::tuple<{', '.join(e.dtype.cpp for e in t.elems)}>"
    return dtype_of(t).cpp


def wrapping(dtype: ScalarType, left: str, op: str, right: str) -> str:
    """`left op right` in the integer `dtype`, wrapping around like NumPy (in the unsigned
    type, where overflow is defined)."""
    unsigned = _UNSIGNED[dtype.name]
    return (
        f"static_cast<{dtype.cpp}>(static_cast<{unsigned}>({left}) {op} "
        f"static_cast<{unsigned}>({right}))"
    )


def _abs(dtype: ScalarType, args: list[str]) -> str:
    (a,) = args
    if dtype.is_float:
        return f"std::fabs({a})"  # +0.0 for -0.0, as numpy.abs
    return f"({a} < 0 ? {wrapping(dtype, '0', '-', a)} : {a})"  # abs(min) wraps to min


def _pick(smaller: bool) -> Callable[[ScalarType, list[str]], str]:
    def pick(dtype: ScalarType, args: list[str]) -> str:
        a, b = args
        chosen = f"({b} < {a} ? {b} : {a})" if smaller else f"({a} < {b} ? {b} : {a})"
        if dtype.is_float:  # NaN propagates, as in numpy.minimum/maximum
            return f"(({a} != {a} || {b} != {b}) ? {a} + {b} : {chosen})"
        return chosen

    return pick


def _std(function: str) -> Callable[[ScalarType, list[str]], str]:
    def call(dtype: ScalarType, args: list[str]) -> str:
        return f"{function}({', '.join(args)})"

    return call


# The C++ of each math function, from its dtype and its arguments' C++.
MATH: dict[str, Callable[[ScalarType, list[str]], str]] = {
    "sqrt": _std("std::sqrt"),
    "exp": _std("std::exp"),
    "log": _std("std::log"),
    "sin": _std("std::sin"),
    "cos": _std("std::cos"),
    "floor": _std("std::floor"),
    "ceil": _std("std::ceil"),
    "abs": _abs,
    "minimum": _pick(smaller=True),
    "maximum": _pick(smaller=False),
}


class ExpressionEmitter(ir.ExprVisitor[str]):
    """Emits the SSA statements of expressions into `statements`; `emit` gives the C++ of a
    value (a literal, a read, or the name of a statement's result).

    `cse` shares a node already emitted at the same position; `decimal_literals` writes
    floats in shortest decimal form instead of hex; `tuples` allows tuple values (else
    they are an error: DaCe's tasklets are flat); `call_field_operator` writes calls of
    field operators (else a call is an error: it should have been inlined).
    """

    def __init__(
        self,
        read_field: FieldReader,
        read_scalar: ScalarReader,
        *,
        cse: bool,
        decimal_literals: bool = False,
        tuples: bool = True,
        call_field_operator: CallWriter | None = None,
        prefix: str = "t",
    ) -> None:
        self.read_field = read_field
        self.read_scalar = read_scalar
        self.cse = cse
        self.decimal_literals = decimal_literals
        self.tuples = tuples
        self.call_field_operator = call_field_operator
        self.prefix = prefix
        self.statements: list[str] = []
        self._memo: dict[tuple[ir.Expr, Position], str] = {}
        self._count = 0

    def nested(self, prefix: str) -> ExpressionEmitter:
        """An emitter with the same readers and policy and statements of its own, for a
        nested scope (a lambda); its names start with `prefix`."""
        return ExpressionEmitter(
            self.read_field,
            self.read_scalar,
            cse=self.cse,
            decimal_literals=self.decimal_literals,
            tuples=self.tuples,
            call_field_operator=self.call_field_operator,
            prefix=prefix,
        )

    def fresh(self) -> str:
        """A name no other statement of this emitter has."""
        name = f"{self.prefix}{self._count}"
        self._count += 1
        return name

    def bind(self, ctype: str, value: str) -> str:
        """The name of a new statement `const ctype name = value;`."""
        name = self.fresh()
        self.statements.append(f"const {ctype} {name} = {value};")
        return name

    def emit(self, expr: ir.Expr, pos: Mapping[Dimension, int]) -> str:
        """The C++ of `expr` at `pos`, after the statements it needs."""
        if not self.cse or isinstance(expr, _IN_PLACE):
            return self.visit(expr, pos)
        key = (expr, _position_key(expr, pos))
        name = self._memo.get(key)
        if name is None:
            name = self._memo[key] = self.visit(expr, pos)
        return name

    def _bind(self, expr: ir.Expr, value: str) -> str:
        tuple_typed = isinstance(expr.type, ir.TupleType)
        return self.bind("auto" if tuple_typed else cpp_type(expr.type), value)

    # --- values in place ---------------------------------------------------------------

    def visit_Literal(self, expr: ir.Literal, pos: Mapping[Dimension, int]) -> str:
        return literal(expr.value, expr.type, decimal=self.decimal_literals)

    def visit_Ref(self, expr: ir.Ref, pos: Mapping[Dimension, int]) -> str:
        if isinstance(expr.type, ir.FieldType):
            return self.read_field(expr.name, pos)
        return self.read_scalar(expr.name)

    def visit_Shift(self, expr: ir.Shift, pos: Mapping[Dimension, int]) -> str:
        moved = dict(pos)
        for dim, amount in expr.offsets:
            moved[dim] = moved.get(dim, 0) + amount
        return self.emit(expr.expr, moved)

    # --- operations: one statement each --------------------------------------------------

    def visit_Unary(self, expr: ir.Unary, pos: Mapping[Dimension, int]) -> str:
        operand = self.emit(expr.operand, pos)
        dtype = dtype_of(expr.type)
        if expr.op == "not":
            return self._bind(expr, f"(!{operand})")
        if dtype.is_integer:
            return self._bind(expr, wrapping(dtype, "0", "-", operand))
        return self._bind(expr, f"(-{operand})")

    def visit_Binary(self, expr: ir.Binary, pos: Mapping[Dimension, int]) -> str:
        left, right = self.emit(expr.left, pos), self.emit(expr.right, pos)
        dtype = dtype_of(expr.type)
        if expr.op == "pow":
            if dtype.is_float:
                return self._bind(expr, f"std::pow({left}, {right})")
            if not isinstance(expr.right, ir.Literal):
                raise ValueError(f"an integer power needs a literal exponent: {expr!r}")
            return self._integer_power(dtype, left, int(expr.right.value))
        if dtype.is_integer:  # + - * of integers
            return self._bind(expr, wrapping(dtype, left, INFIX[expr.op], right))
        return self._bind(expr, f"({left} {INFIX[expr.op]} {right})")

    def _integer_power(self, dtype: ScalarType, base: str, exponent: int) -> str:
        """`base ** exponent` by squaring, wrapping around like NumPy's integer power."""
        result: str | None = None
        square = base
        while exponent:
            if exponent & 1:
                result = (
                    square
                    if result is None
                    else self.bind(dtype.cpp, wrapping(dtype, result, "*", square))
                )
            exponent >>= 1
            if exponent:
                square = self.bind(dtype.cpp, wrapping(dtype, square, "*", square))
        return result if result is not None else literal(1, dtype)

    def visit_MathCall(self, expr: ir.MathCall, pos: Mapping[Dimension, int]) -> str:
        args = [self.emit(a, pos) for a in expr.args]
        return self._bind(expr, MATH[expr.fn](dtype_of(expr.type), args))

    def visit_Where(self, expr: ir.Where, pos: Mapping[Dimension, int]) -> str:
        cond = self.emit(expr.cond, pos)
        true, false = self.emit(expr.true, pos), self.emit(expr.false, pos)
        return self._bind(expr, f"({cond} ? {true} : {false})")

    def visit_Cast(self, expr: ir.Cast, pos: Mapping[Dimension, int]) -> str:
        value = self.emit(expr.expr, pos)
        return self._bind(expr, f"static_cast<{dtype_of(expr.type).cpp}>({value})")

    def visit_Call(self, expr: ir.Call, pos: Mapping[Dimension, int]) -> str:
        if self.call_field_operator is None:
            raise ValueError(f"call of {expr.callee} left in an inlined body: {expr!r}")
        return self._bind(expr, self.call_field_operator(expr, pos, self))

    def visit_MakeTuple(self, expr: ir.MakeTuple, pos: Mapping[Dimension, int]) -> str:
        self._require_tuples(expr)
        elems = ", ".join(self.emit(e, pos) for e in expr.elems)
        return self._bind(expr, f"{TUPLE_NAMESPACE}::make_tuple({elems})")

    def visit_TupleGet(self, expr: ir.TupleGet, pos: Mapping[Dimension, int]) -> str:
        self._require_tuples(expr)
        value = self.emit(expr.expr, pos)
        return self._bind(expr, f"{TUPLE_NAMESPACE}::get<{expr.index}>({value})")

    def _require_tuples(self, expr: ir.Expr) -> None:
        if not self.tuples:
            raise ValueError(
                f"{type(expr).__name__} left in a flat body (this emitter takes no tuple "
                f"values; inline the calls and emit each element of a tuple result): {expr!r}"
            )


def position(pos: Mapping[Dimension, int]) -> Position:
    """A position as a key: its non-zero offsets, ordered by dimension name."""
    return tuple(sorted(((d, a) for d, a in pos.items() if a != 0), key=lambda x: x[0].name))


def _position_key(expr: ir.Expr, pos: Mapping[Dimension, int]) -> Position:
    """The part of a position that matters for a node: none for a scalar value."""
    return () if isinstance(expr.type, ScalarType) else position(pos)
