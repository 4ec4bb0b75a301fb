"""Pointwise math functions of the DSL, for use inside field operators."""

from __future__ import annotations

from stencilchain.program.tracing import Symbol, math_call


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


def abs(x: object) -> Symbol:
    return math_call("abs", x)


def floor(x: object) -> Symbol:
    return math_call("floor", x)


def ceil(x: object) -> Symbol:
    return math_call("ceil", x)


def minimum(x: object, y: object) -> Symbol:
    return math_call("minimum", x, y)


def maximum(x: object, y: object) -> Symbol:
    return math_call("maximum", x, y)
