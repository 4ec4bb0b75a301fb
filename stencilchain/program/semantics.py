"""What the operations of the IR mean at one point: the NumPy function of each operator,
math function and neighbour reduction (with the reductions' identities), and the value
of an expression of literals only (constant folding). The embedded executor and the
emitters both read these; neither defines them."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from stencilchain.program import ir
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.node_traits import traits_of

# The NumPy function of each operator and math function: what they mean.
BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.true_divide,
    "pow": np.power,
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    # NumPy's integer semantics: `//` and `%` give 0 where the divisor is 0, MIN // -1
    # wraps to MIN; a shift by a count outside [0, bits) gives 0 (>> of a negative: -1)
    "floordiv": np.floor_divide,
    "mod": np.remainder,
    "lshift": np.left_shift,
    "rshift": np.right_shift,
    # logical on bool values, bitwise on integers
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}
UNARY: dict[str, Callable[[Any], Any]] = {"neg": np.negative, "not": np.invert}
# Neighbour reductions (missing neighbours are replaced by `neighbor_identity` first).
REDUCTIONS: dict[str, Callable[..., Any]] = {"sum": np.sum, "max": np.max, "min": np.min}


def _gamma_of(x: float) -> float:
    """The Gamma function of one float, with C's tgamma at its poles and overflow."""
    try:
        return math.gamma(x)
    except ValueError:  # a pole (0 or a negative integer) or -inf
        return math.copysign(math.inf, x) if x == 0 else math.nan
    except OverflowError:
        return math.inf


_GAMMA = np.frompyfunc(_gamma_of, 1, 1)


def gamma(x: Any) -> Any:
    """The Gamma function, elementwise (NumPy has no ufunc for it): computed in double
    precision by Python's math.gamma and rounded to the argument's dtype."""
    values = np.asarray(x)
    return np.asarray(_GAMMA(values.astype(np.float64)), dtype=object).astype(values.dtype)[()]


MATH: dict[str, Callable[..., Any]] = {
    "sqrt": np.sqrt,
    "exp": np.exp,
    "log": np.log,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "arcsin": np.arcsin,
    "arccos": np.arccos,
    "arctan": np.arctan,
    "arctan2": np.arctan2,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "arcsinh": np.arcsinh,
    "arccosh": np.arccosh,
    "arctanh": np.arctanh,
    "cbrt": np.cbrt,
    "gamma": gamma,
    "abs": np.abs,
    "minimum": np.minimum,
    "maximum": np.maximum,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "fmod": np.fmod,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "isfinite": np.isfinite,
}


def neighbor_identity(op: str, dtype: np.dtype[Any]) -> Any:
    """The value of a neighbour reduction over no neighbour at all: 0 for a sum; for max
    and min -inf and +inf (floats) or the dtype's minimum and maximum (integers)."""
    if op == "sum":
        return np.zeros((), dtype)[()]
    if np.issubdtype(dtype, np.floating):
        return dtype.type(-np.inf if op == "max" else np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min if op == "max" else info.max)


def literal_value(expr: ir.Literal) -> np.generic:
    """The value of a literal, as a NumPy scalar of its type."""
    value: np.generic = expr.type.numpy.type(expr.value)
    return value


def cast(value: Any, to: ir.FieldType | ScalarType) -> Any:
    """`value` converted to the dtype of `to` (a field type or a scalar type)."""
    dtype = to.dtype if isinstance(to, ir.FieldType) else to
    return np.asarray(value).astype(dtype.numpy)[()]


def operate(expr: ir.Expr, operands: Sequence[Any]) -> Any:
    """The value of the pointwise operation `expr` (a Unary, Binary, Where, MathCall or
    Cast) from the values of its operands, in the order of `ir.children(expr)`."""
    if isinstance(expr, ir.Binary):
        return BINARY[expr.op](*operands)
    if isinstance(expr, ir.Unary):
        return UNARY[expr.op](*operands)
    if isinstance(expr, ir.MathCall):
        return MATH[expr.fn](*operands)
    if isinstance(expr, ir.Where):
        return np.where(*operands)
    if isinstance(expr, ir.Cast):
        return cast(operands[0], expr.type)
    raise TypeError(f"{type(expr).__name__} is not a pointwise operation")


def _value(expr: ir.Expr) -> Any:
    if isinstance(expr, ir.Literal):
        return literal_value(expr)
    if not traits_of(expr).foldable:
        raise TypeError(f"{type(expr).__name__} has no value at translation time")
    return operate(expr, [_value(e) for e in ir.children(expr)])


def scalar(expr: ir.Expr) -> bool | int | float:
    """The value of an expression of literals and foldable operations only."""
    value = _value(expr)
    assert isinstance(value, np.generic)
    result: bool | int | float = value.item()
    return result
