"""Symbolic values for tracing field operators, and the typing rules of expressions.

A field operator is traced by calling its Python function once with `Symbol`s; each
operator on a `Symbol` checks the operand types and records an IR node. Its shifts are in
program/shifts.py, the DSL's functions on traced values in program/constructs.py, the
hints of its errors in program/operator_hints.py, what the trace under way is tracing in
program/trace_context.py. Longer than most modules: Symbol's operators and the typing
rules that they and the DSL's functions share are one unit.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Collection
from typing import Any, Union, cast

import numpy as np

from stencilchain.errors import DefinitionError
from stencilchain.program import ir, regions
from stencilchain.program import operator_hints as hints
from stencilchain.program.call_bounds import bound_of_expression
from stencilchain.program.connectivity import Connectivity, NeighborSlot
from stencilchain.program.decisions import decide
from stencilchain.program.dimensions import (
    HORIZONTAL,
    LOCAL,
    VERTICAL,
    Dimension,
    Offset,
    Traced,
)
from stencilchain.program.dtypes import (
    ScalarType,
    default_literal_dtype,
    from_numpy,
    literal_fits,
)
from stencilchain.program.intervals import Bound
from stencilchain.program.literal_rules import (
    FIXED_LITERALS_HINT,
    fixed_literal,
    fixed_literal_dtypes,
)
from stencilchain.program.shifts import local_slot, shift
from stencilchain.program.trace_context import dims_being_traced

PyLiteral = Union[bool, int, float]
Operand = Union["Symbol", PyLiteral, np.generic]


class Symbol(Traced):
    """A traced value: a field or a scalar expression of a field operator."""

    __slots__ = ("expr",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, expr: ir.Expr) -> None:
        self.expr = expr

    @property
    def type(self) -> ir.FieldType | ScalarType:
        t = self.expr.type
        assert not isinstance(t, ir.TupleType)
        return t

    def __repr__(self) -> str:
        return f"<traced {self.type!r}>"

    def index_bound(self, what: str) -> Bound:
        """This integer scalar (a parameter, or an expression of them) as the bound of a
        condition on a dimension (`K < k_start`, program/regions.py); `what` names it."""
        if isinstance(self.type, ir.FieldType):
            raise DefinitionError(
                f"{what}: a dimension is compared with an index, not with a field "
                f"{self.type!r} (a condition on values is sc.where's)"
            )
        return bound_of_expression(self.expr, what)

    # shifts
    def __call__(self, *offsets: Offset | Dimension | Connectivity | NeighborSlot) -> Symbol:
        return Symbol(shift(self, offsets))

    # a slot of a local field, w[C2EDim(0)]
    def __getitem__(self, key: object) -> Symbol:
        return Symbol(local_slot(self, key))

    # arithmetic
    def __add__(self, other: Operand) -> Symbol:
        return binary("add", self, other)

    def __radd__(self, other: Operand) -> Symbol:
        return binary("add", other, self)

    def __sub__(self, other: Operand) -> Symbol:
        return binary("sub", self, other)

    def __rsub__(self, other: Operand) -> Symbol:
        return binary("sub", other, self)

    def __mul__(self, other: Operand) -> Symbol:
        return binary("mul", self, other)

    def __rmul__(self, other: Operand) -> Symbol:
        return binary("mul", other, self)

    def __truediv__(self, other: Operand) -> Symbol:
        return binary("div", self, other)

    def __rtruediv__(self, other: Operand) -> Symbol:
        return binary("div", other, self)

    def __pow__(self, other: Operand) -> Symbol:
        return binary("pow", self, other)

    def __rpow__(self, other: Operand) -> Symbol:
        return binary("pow", other, self)

    def __neg__(self) -> Symbol:
        return unary("neg", self)

    def __pos__(self) -> Symbol:
        return self

    def __abs__(self) -> Symbol:
        return math_call("abs", self)

    # comparisons
    def __eq__(self, other: Operand) -> Symbol:  # type: ignore[override]
        return binary("eq", self, other)

    def __ne__(self, other: Operand) -> Symbol:  # type: ignore[override]
        return binary("ne", self, other)

    def __lt__(self, other: Operand) -> Symbol:
        return binary("lt", self, other)

    def __le__(self, other: Operand) -> Symbol:
        return binary("le", self, other)

    def __gt__(self, other: Operand) -> Symbol:
        return binary("gt", self, other)

    def __ge__(self, other: Operand) -> Symbol:
        return binary("ge", self, other)

    # logic on bool values, bitwise operations on integers
    def __and__(self, other: Operand) -> Symbol:
        return binary("and", self, other)

    def __rand__(self, other: Operand) -> Symbol:
        return binary("and", other, self)

    def __or__(self, other: Operand) -> Symbol:
        return binary("or", self, other)

    def __ror__(self, other: Operand) -> Symbol:
        return binary("or", other, self)

    def __xor__(self, other: Operand) -> Symbol:
        return binary("xor", self, other)

    def __rxor__(self, other: Operand) -> Symbol:
        return binary("xor", other, self)

    def __invert__(self) -> Symbol:
        return unary("not", self)

    # integers only
    def __floordiv__(self, other: Operand) -> Symbol:
        return binary("floordiv", self, other)

    def __rfloordiv__(self, other: Operand) -> Symbol:
        return binary("floordiv", other, self)

    def __mod__(self, other: Operand) -> Symbol:
        return binary("mod", self, other)

    def __rmod__(self, other: Operand) -> Symbol:
        return binary("mod", other, self)

    def __divmod__(self, other: Operand) -> tuple[Symbol, Symbol]:
        return binary("floordiv", self, other), binary("mod", self, other)

    def __rdivmod__(self, other: Operand) -> tuple[Symbol, Symbol]:
        return binary("floordiv", other, self), binary("mod", other, self)

    def __lshift__(self, other: Operand) -> Symbol:
        return binary("lshift", self, other)

    def __rlshift__(self, other: Operand) -> Symbol:
        return binary("lshift", other, self)

    def __rshift__(self, other: Operand) -> Symbol:
        return binary("rshift", self, other)

    def __rrshift__(self, other: Operand) -> Symbol:
        return binary("rshift", other, self)

    def __bool__(self) -> bool:
        """An `if` on a bool scalar is traced both ways (program/branches.py,
        program/decisions.py);
        on anything else it is a DefinitionError."""
        return decide(self)

    def __iter__(self) -> None:
        raise DefinitionError(f"cannot iterate over a traced {self.type!r}")

    # `float(x)`, `int(x)`, `np.float64(x)`: a traced value has no Python value yet
    def __float__(self) -> float:
        raise hints.no_python_value(self.type, "float")

    def __int__(self) -> int:
        raise hints.no_python_value(self.type, "int")

    def __index__(self) -> int:
        raise hints.no_python_value(self.type, "int")

    def __array__(self, *args: object, **kwargs: object) -> Any:
        raise hints.no_python_value(self.type, "NumPy array")

    # operators the DSL does not have: each error says what to write instead
    def __matmul__(self, other: object) -> Symbol:
        raise hints.unsupported_operator("@", self.type)

    def __rmatmul__(self, other: object) -> Symbol:
        raise hints.unsupported_operator("@", self.type)

    # NumPy
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """Reached two ways. `x <op> symbol` with a NumPy scalar or array `x` on the left:
        NumPy's operator hands over to the operator's ufunc, and this runs our reflected
        operator, which checks dtypes as for any operand. A NumPy function applied to a
        traced value, `np.sqrt(f)`: a DefinitionError naming the DSL's spelling."""
        reflected = _REFLECTED_OPERATORS.get(ufunc)
        if reflected is not None and _is_operator_call(self, method, inputs, kwargs):
            other = inputs[0]
            if ufunc in _COMPARISON_UFUNCS and isinstance(other, np.ndarray) and other.ndim == 0:
                other = other[()]  # a NumPy scalar compares as a 0-d array: unwrap it
            return reflected(self, other)
        name = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        raise DefinitionError(
            hints.numpy_message(name, hints.UFUNC_HINTS.get(ufunc.__name__), self.type)
        )

    def __array_function__(
        self,
        func: Callable[..., Any],
        types: Collection[builtins.type],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """A NumPy function other than a ufunc (`np.where`, `np.clip`, `np.sum`, ...) applied
        to a traced value: a DefinitionError naming the DSL's spelling where there is one."""
        module = getattr(func, "__module__", None) or "numpy"
        if module == "numpy" or module.startswith("numpy."):
            module = "np" + module[len("numpy") :]
        name = getattr(func, "__name__", repr(func))
        raise DefinitionError(
            hints.numpy_message(f"{module}.{name}", hints.FUNCTION_HINTS.get(name), self.type)
        )


# --- NumPy's operators on a traced value ---------------------------------------------


def _is_operator_call(
    symbol: Symbol, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]
) -> bool:
    """Whether NumPy calls a ufunc for `x <op> symbol` (or `x <op>= symbol`) with a NumPy
    scalar or array `x` on the left: the only way an operator reaches a ufunc with a Symbol,
    since the Symbol's own operator runs first whenever it is on the left."""
    if method != "__call__" or len(inputs) != 2 or inputs[1] is not symbol:
        return False
    other = inputs[0]
    if not isinstance(other, (np.generic, np.ndarray)):
        return False
    if not kwargs:
        return True
    out = kwargs.get("out")  # `x <op>= symbol` writes into x
    return len(kwargs) == 1 and isinstance(out, tuple) and len(out) == 1 and out[0] is other


# The ufunc a NumPy operand's operator calls, and the Symbol operator that computes the
# same with the Symbol on the right (a reflected method, or the mirrored comparison).
_REFLECTED_OPERATORS: dict[np.ufunc, Callable[[Symbol, Any], Symbol | tuple[Symbol, Symbol]]] = {
    np.add: Symbol.__radd__,
    np.subtract: Symbol.__rsub__,
    np.multiply: Symbol.__rmul__,
    np.divide: Symbol.__rtruediv__,
    np.power: Symbol.__rpow__,
    np.floor_divide: Symbol.__rfloordiv__,
    np.remainder: Symbol.__rmod__,
    np.divmod: Symbol.__rdivmod__,
    np.bitwise_and: Symbol.__rand__,
    np.bitwise_or: Symbol.__ror__,
    np.bitwise_xor: Symbol.__rxor__,
    np.left_shift: Symbol.__rlshift__,
    np.right_shift: Symbol.__rrshift__,
    np.matmul: Symbol.__rmatmul__,
    np.equal: Symbol.__eq__,
    np.not_equal: Symbol.__ne__,
    np.less: Symbol.__gt__,
    np.less_equal: Symbol.__ge__,
    np.greater: Symbol.__lt__,
    np.greater_equal: Symbol.__le__,
}
_COMPARISON_UFUNCS = frozenset(
    (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)
)


# --- operand handling ------------------------------------------------------------


def describe(value: object) -> str:
    if isinstance(value, Symbol):
        return hints.describe_traced(value.type)
    return f"literal {value!r}"


def typed_dtype(value: Symbol | np.generic) -> ScalarType:
    if isinstance(value, Symbol):
        t = value.type
        return t.dtype if isinstance(t, ir.FieldType) else t
    dtype = from_numpy(value.dtype)
    assert dtype is not None
    return dtype


def check_operand(value: object, where: str) -> None:
    if isinstance(value, Symbol):
        return
    if isinstance(value, np.generic):
        if from_numpy(value.dtype) is None:
            raise DefinitionError(f"{where}: numpy {value.dtype} values are not supported")
        return
    if isinstance(value, (bool, int, float)):
        return
    hint = _operand_hint(value)
    if hint is not None:
        raise DefinitionError(f"{where}: cannot use {type(value).__name__} {value!r} here; {hint}")
    raise DefinitionError(
        f"{where}: cannot use {type(value).__name__} {value!r} in a field operator; "
        "operands are fields, scalars and int/float/bool literals"
    )


def _operand_hint(value: object) -> str | None:
    """What to write instead of a dimension or an index condition used as an operand."""
    if isinstance(value, Dimension):
        return (
            f"a dimension is written in shifts, f({value.name} + 1), in conditions of "
            f"sc.concat_where, {value.name} >= n, and as the index sc.index({value.name}), "
            "which is a field and an operand"
        )
    if isinstance(value, (regions.Region, regions.Joined)):
        return (
            "a condition on the index is sc.concat_where's, alone or joined with other such "
            "conditions along the same dimension by & and |; to join it with a condition on "
            "values, nest them, sc.where(x > 0.0, sc.concat_where(K == 0, a, b), c), or "
            "compare the index as a field, sc.where((x > 0.0) & (sc.index(K) == 0), a, b)"
        )
    return None


# The comparison with the operands swapped: `n <= Cell` is `Cell >= n`.
_MIRRORED = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def unify_dtype(operands: tuple[object, ...], where: str) -> ScalarType:
    """The common dtype of the operands; literals adopt it (see dtypes.py for the rules),
    or keep their own under gt4py's rules (program/literal_rules.py)."""
    fixed = fixed_literal_dtypes()
    if fixed:
        operands = tuple(fixed_literal(v) for v in operands)
    for value in operands:
        check_operand(value, where)
    typed = [v for v in operands if isinstance(v, (Symbol, np.generic))]
    sized = [v for v in typed if not adapts_to_integers(v)]
    if sized and len(sized) < len(typed) and typed_dtype(sized[0]).is_integer:
        typed = sized  # an index takes the integer dtype of the other operands (as_expr)
    if not typed:
        first = operands[0]
        assert isinstance(first, (bool, int, float))
        return default_literal_dtype(first)
    dtype = typed_dtype(typed[0])
    for other in typed[1:]:
        other_dtype = typed_dtype(other)
        if other_dtype != dtype:
            raise DefinitionError(
                f"{where}: mismatched dtypes {dtype} and {other_dtype} "
                f"({describe(typed[0])} and {describe(other)}); cast one with "
                f"sc.astype(x, sc.{dtype}) or sc.astype(x, sc.{other_dtype})"
                + (f"; {FIXED_LITERALS_HINT}" if fixed else "")
            )
    for value in operands:
        is_literal = isinstance(value, (bool, int, float)) and not isinstance(value, np.generic)
        if is_literal and not literal_fits(value, dtype):  # type: ignore[arg-type]
            raise DefinitionError(
                f"{where}: literal {value!r} does not fit dtype {dtype} of "
                f"{describe(typed[0])}; write a literal of that kind or cast with sc.astype"
            )
    return dtype


# The operations through which an expression of indices stays an index (adapts_to_integers).
_INDEX_ARITHMETIC = ("add", "sub", "mul", "floordiv", "mod")


def adapts_to_integers(value: object) -> bool:
    """Whether `value` is an index: `sc.index(dim)`, shifted or broadcast, or integer
    arithmetic of indices and literals (`sc.index(K) + 1`). An index has no integer width
    of its own: met with an operand of another integer dtype (ICON's int32 bounds), it takes
    that dtype, as a Python int literal does (docs/dsl.md, "Integers")."""
    if not isinstance(value, Symbol):
        return False
    return _is_index(value.expr)


def _is_index(expr: ir.Expr) -> bool:
    if isinstance(expr, ir.Index):
        return True
    if isinstance(expr, (ir.Shift, ir.Broadcast)):
        return _is_index(expr.expr)
    if isinstance(expr, ir.Unary) and expr.op == "neg":
        return _is_index(expr.operand)
    if isinstance(expr, ir.Binary) and expr.op in _INDEX_ARITHMETIC:
        parts = (expr.left, expr.right)
        if not all(_is_index(e) or isinstance(e, ir.Literal) for e in parts):
            return False
        return any(_is_index(e) for e in parts)
    return False


def unify_dims(operands: tuple[object, ...], where: str) -> tuple[Dimension, ...] | None:
    """The dimensions of the result of an operation on `operands`, or None if all are
    scalars: those of the field operand with the most dimensions (the first such), whose
    dimensions must include every other field operand's (which is then broadcast)."""
    fields = [v for v in operands if isinstance(v, Symbol) and isinstance(v.type, ir.FieldType)]
    if not fields:
        return None
    widest = max(fields, key=lambda v: len(v.type.dims))  # type: ignore[union-attr]
    dims: tuple[Dimension, ...] = widest.type.dims  # type: ignore[union-attr]
    promoted = _gt4py_promotion(fields) if fixed_literal_dtypes() else None
    if promoted is not None:
        return promoted
    for value in fields:
        own: tuple[Dimension, ...] = value.type.dims  # type: ignore[union-attr]
        if own == dims:
            continue
        if len(own) == len(dims) or not set(own) <= set(dims):
            raise DefinitionError(
                f"{where}: mismatched dimensions: {describe(widest)} and {describe(value)}; "
                "an operand's dimensions must be those of the operand with the most "
                "dimensions, in the same order, or a subset of them (which is broadcast); "
                f"broadcast explicitly with sc.broadcast(x, ({', '.join(_union_names(fields))}))"
            )
    return dims


_KIND_ORDER = {HORIZONTAL: 0, LOCAL: 1, VERTICAL: 2}


def _gt4py_promotion(fields: list[Symbol]) -> tuple[Dimension, ...] | None:
    """Under gt4py's rules, the dimensions of an operation on fields whose dimensions are
    not nested (a `K` field times an `Edge` field): all of them, ordered as gt4py orders
    them (by kind, horizontal before local before vertical, then by name), where each
    operand's own order agrees with that order; else None (the DSL's rule decides)."""
    union = {d for v in fields for d in v.type.dims}  # type: ignore[union-attr]
    if any(set(v.type.dims) == union for v in fields):  # type: ignore[union-attr]
        return None  # nested: the DSL's rule gives the same
    order = tuple(sorted(union, key=lambda d: (_KIND_ORDER[d.kind], d.name)))
    for v in fields:
        own = v.type.dims  # type: ignore[union-attr]
        if list(own) != [d for d in order if d in own]:
            return None
    return order


def _union_names(fields: list[Symbol]) -> list[str]:
    """The dimensions of all `fields`, in the order of the traced operator's parameters
    where they cover them (an index or a condition has no order of its own: `index(K) &
    index(Cell)` among (Cell, K) fields suggests (Cell, K)), else the widest field's first."""
    union: list[Dimension] = []
    widest = max(fields, key=lambda v: len(v.type.dims))  # type: ignore[union-attr]
    for value in (widest, *fields):
        union += [d for d in value.type.dims if d not in union]  # type: ignore[union-attr]
    declared = dims_being_traced.get()
    if set(union) <= set(declared):
        union.sort(key=declared.index)
    return [d.name for d in union]


def as_expr(value: object, dtype: ScalarType, dims: tuple[Dimension, ...] | None = None) -> ir.Expr:
    """The IR of an operand of `dtype`; a field over fewer dimensions than `dims` is
    broadcast to them (scalars and literals combine with fields as they are)."""
    if isinstance(value, Symbol):
        t = value.type
        own = t.dtype if isinstance(t, ir.FieldType) else t
        expr = value.expr
        if own != dtype and dtype.is_integer and adapts_to_integers(value):
            # an index of another integer dtype than the other operands' (unify_dtype)
            t = ir.FieldType(t.dims, dtype) if isinstance(t, ir.FieldType) else dtype
            expr = ir.Cast(expr, t)
        if dims is not None and isinstance(t, ir.FieldType) and t.dims != dims:
            return ir.Broadcast(expr, ir.FieldType(dims, t.dtype))
        return expr
    if isinstance(value, np.generic):
        return ir.Literal(value.item(), dtype)
    assert isinstance(value, (bool, int, float))
    if dtype.is_float:
        return ir.Literal(float(value), dtype)
    return ir.Literal(value, dtype)


def _int_literal(value: object) -> bool:
    """Whether `value` is a Python int literal (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool)


def result_type(dims: tuple[Dimension, ...] | None, dtype: ScalarType) -> ir.FieldType | ScalarType:
    return dtype if dims is None else ir.FieldType(dims, dtype)


# --- operators ------------------------------------------------------------------------


def binary(op: str, left: object, right: object) -> Symbol:
    where = f"`{ir.OP_SYMBOLS[op]}`"
    if op in ir.COMPARISON_OPS and isinstance(right, Dimension) and isinstance(left, Symbol):
        # `n <= Cell`: the condition `Cell >= n`, with its rules and messages
        return getattr(right, f"__{_MIRRORED[op]}__")(left)  # type: ignore[no-any-return]
    if op == "pow" and _int_literal(right) and isinstance(left, Symbol):
        base = typed_dtype(left)
        if base.is_float:  # `x ** 2`: a float power of an int literal, under either rule of
            right = base.numpy.type(right)  # literals (gt4py's `**` has its base's type)
    operands = (left, right)
    dtype = unify_dtype(operands, where)
    dims = unify_dims(operands, where)
    if op in ir.ARITHMETIC_OPS:
        if dtype.is_bool:
            raise DefinitionError(f"{where}: arithmetic on bool values; use `&`, `|`, `^`, `~`")
        if op == "div" and not dtype.is_float:
            raise DefinitionError(
                f"{where}: division of {dtype} values; `/` takes floats: floor division of "
                "integers is `//`, or cast to a float dtype with sc.astype first"
            )
        literal_exponent = isinstance(right, int) and not isinstance(right, bool) and right >= 0
        if op == "pow" and not dtype.is_float and not literal_exponent:
            raise DefinitionError(
                f"{where}: an integer power needs a non-negative int literal exponent"
            )
        result_dtype = dtype
    elif op in ir.INTEGER_OPS:
        if not dtype.is_integer:
            traced = next(v for v in operands if isinstance(v, Symbol))
            hint = hints.INTEGER_OPERATOR_HINTS[op].format(shift=hints.shift_example(traced.type))
            if dtype.is_bool:
                hint += "; cast bool values to an integer dtype with sc.astype first"
            raise DefinitionError(f"{where} of {describe(traced)}: {hint}")
        result_dtype = dtype
    elif op in ir.COMPARISON_OPS:
        if dtype.is_bool and op not in ("eq", "ne"):
            raise DefinitionError(f"{where}: ordering comparison of bool values")
        result_dtype = ScalarType("bool")
    else:
        if dtype.is_float:
            raise DefinitionError(
                f"{where}: logical operator on {dtype} values; it takes bool values (logical) "
                "or integers (bitwise)"
            )
        result_dtype = dtype
    return Symbol(
        ir.Binary(
            op,
            as_expr(left, dtype, dims),
            as_expr(right, dtype, dims),
            result_type(dims, result_dtype),
        )
    )


def unary(op: str, operand: object) -> Symbol:
    assert isinstance(operand, Symbol)
    dtype = typed_dtype(operand)
    if op == "neg" and dtype.is_bool:
        raise DefinitionError("unary `-` of a bool value; use `~` for logical not")
    if op == "not" and dtype.is_float:
        raise DefinitionError(
            f"`~` of a {dtype} value; it takes bool values (logical not) or integers (bitwise not)"
        )
    return Symbol(ir.Unary(op, operand.expr, operand.type))


# The math functions that take float values only (the others take integers too).
_FLOAT_ONLY = (
    "sqrt", "exp", "log", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2",
    "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "cbrt", "gamma",
    "floor", "ceil", "trunc",
)  # fmt: skip


def math_call(fn: str, *args: object) -> Symbol:
    """`sc.math.<fn>(*args)`: a traced value, or where an argument is a program's scalar
    (`maximum(n, 2)` in a program's domain) an expression of program scalars, which a
    program's trace takes where a traced scalar goes (program_scalars.ProgramScalar)."""
    program = next((a for a in args if hasattr(a, "program_math")), None)
    if program is not None:
        return cast(Symbol, program.program_math(fn, args))
    where = f"sc.math.{fn}"
    expected = 2 if fn in ir.BINARY_MATH_FUNCTIONS else 1
    if len(args) != expected:
        raise DefinitionError(f"{where} takes {expected} argument(s), got {len(args)}")
    dtype = unify_dtype(args, where)
    dims = unify_dims(args, where)
    if fn in _FLOAT_ONLY and not dtype.is_float:
        raise DefinitionError(f"{where} of a {dtype} value; cast to a float dtype first")
    if dtype.is_bool:
        raise DefinitionError(f"{where} of a bool value")
    exprs = tuple(as_expr(a, dtype, dims) for a in args)
    result_dtype = ScalarType("bool") if fn in ir.PREDICATE_FUNCTIONS else dtype
    return Symbol(ir.MathCall(fn, exprs, result_type(dims, result_dtype)))
