"""Pointwise math functions of the DSL, for use inside field operators.

Named like NumPy's ufuncs, with NumPy's meaning (docs/dsl.md lists the dtypes each one
takes and the tolerance of the transcendental ones against NumPy); `gamma` is the Gamma
function and `power(x, y)` is `x ** y`.
"""

from __future__ import annotations

from stencilchain.program.tracing import Symbol, math_call
from stencilchain.program.tracing import binary as _binary


def sqrt(x: object) -> Symbol:
    return math_call("sqrt", x)


def exp(x: object) -> Symbol:
    return math_call("exp", x)


def log(x: object) -> Symbol:
    return math_call("log", x)


def sin(x: object) -> Symbol:
    return math_call("sin", x)


def cos(x: object) -> Symbol:
    return math_call("cos", x)


def tan(x: object) -> Symbol:
    return math_call("tan", x)


def arcsin(x: object) -> Symbol:
    return math_call("arcsin", x)


def arccos(x: object) -> Symbol:
    return math_call("arccos", x)


def arctan(x: object) -> Symbol:
    return math_call("arctan", x)


def arctan2(y: object, x: object) -> Symbol:
    """The angle of the point (x, y), as numpy.arctan2(y, x)."""
    return math_call("arctan2", y, x)


def sinh(x: object) -> Symbol:
    return math_call("sinh", x)


def cosh(x: object) -> Symbol:
    return math_call("cosh", x)


def tanh(x: object) -> Symbol:
    return math_call("tanh", x)


def arcsinh(x: object) -> Symbol:
    return math_call("arcsinh", x)


def arccosh(x: object) -> Symbol:
    return math_call("arccosh", x)


def arctanh(x: object) -> Symbol:
    return math_call("arctanh", x)


def cbrt(x: object) -> Symbol:
    return math_call("cbrt", x)


def gamma(x: object) -> Symbol:
    """The Gamma function (C's tgamma): inf at +-0 with the sign of zero, NaN at negative
    integers and -inf, inf where it overflows."""
    return math_call("gamma", x)


def abs(x: object) -> Symbol:
    return math_call("abs", x)


def floor(x: object) -> Symbol:
    return math_call("floor", x)


def ceil(x: object) -> Symbol:
    return math_call("ceil", x)


def trunc(x: object) -> Symbol:
    return math_call("trunc", x)


def fmod(x: object, y: object) -> Symbol:
    """The remainder of x / y with the sign of x (C's fmod; numpy.fmod); of integers, 0
    where y is 0."""
    return math_call("fmod", x, y)


def power(x: object, y: object) -> Symbol:
    """`x ** y`."""
    return _binary("pow", x, y)


def minimum(x: object, y: object) -> Symbol:
    return math_call("minimum", x, y)


def maximum(x: object, y: object) -> Symbol:
    return math_call("maximum", x, y)


def isnan(x: object) -> Symbol:
    """Whether x is NaN (a bool value; False for integers)."""
    return math_call("isnan", x)


def isinf(x: object) -> Symbol:
    """Whether x is +-inf (a bool value; False for integers)."""
    return math_call("isinf", x)


def isfinite(x: object) -> Symbol:
    """Whether x is neither NaN nor +-inf (a bool value; True for integers)."""
    return math_call("isfinite", x)
