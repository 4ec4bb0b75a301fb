"""What to write instead of the Python operators and NumPy functions the DSL does not
have: the hints of the DefinitionErrors that tracing raises (program/tracing.py)."""

from __future__ import annotations

from stencilchain.program import ir

UNSUPPORTED_OPERATORS = {
    "@": (
        "matrix products are not supported (a field operator computes each grid point from "
        "its neighbours); multiply pointwise with `*`"
    ),
}

# What to write instead of an integer operator applied to values of another kind.
INTEGER_OPERATOR_HINTS = {
    "floordiv": "`//` takes integers; on floats write sc.math.floor(a / b)",
    "mod": (
        "`%` takes integers; on floats write a - b * sc.math.floor(a / b) "
        "(or sc.math.fmod(a, b), the remainder with the sign of a)"
    ),
    "lshift": "shifts take integers; a field's neighbour is read with {shift}",
    "rshift": "shifts take integers; a field's neighbour is read with {shift}",
}

UFUNC_HINTS = {
    **{
        fn: f"sc.math.{fn}({'x, y' if fn in ir.BINARY_MATH_FUNCTIONS else 'x'})"
        for fn in ir.MATH_FUNCTIONS
    },
    "absolute": "sc.math.abs(x) or abs(x)",
    "fabs": "sc.math.abs(x) or abs(x)",
    "add": "the operator `+`: a + b",
    "subtract": "the operator `-`: a - b",
    "multiply": "the operator `*`: a * b",
    "divide": "the operator `/`: a / b",
    "power": "the operator `**`: a ** b (or sc.math.power(a, b))",
    "square": "a * a",
    "reciprocal": "1.0 / a",
    "negative": "the operator `-`: -a",
    "positive": "a",
    "equal": "the operator `==`: a == b",
    "not_equal": "the operator `!=`: a != b",
    "less": "the operator `<`: a < b",
    "less_equal": "the operator `<=`: a <= b",
    "greater": "the operator `>`: a > b",
    "greater_equal": "the operator `>=`: a >= b",
    "logical_and": "the operator `&` on bool values: a & b",
    "bitwise_and": "the operator `&`: a & b",
    "logical_or": "the operator `|` on bool values: a | b",
    "bitwise_or": "the operator `|`: a | b",
    "logical_not": "the operator `~` on bool values: ~a",
    "invert": "the operator `~`: ~a",
    "bitwise_not": "the operator `~`: ~a",
    "logical_xor": "the operator `^` on bool values: a ^ b",
    "bitwise_xor": "the operator `^`: a ^ b",
    "floor_divide": "the operator `//` on integers: a // b (on floats sc.math.floor(a / b))",
    "remainder": "the operator `%` on integers: a % b",
    "mod": "the operator `%` on integers: a % b",
    "divmod": "divmod(a, b) or a // b and a % b, on integers",
    "left_shift": "the operator `<<` on integers: a << b",
    "right_shift": "the operator `>>` on integers: a >> b",
    "float_power": "the operator `**`: a ** b (or sc.math.power(a, b))",
}

FUNCTION_HINTS = {
    "where": "sc.where(cond, a, b)",
    "select": "nested sc.where(cond, a, sc.where(...))",
    "clip": "sc.math.minimum(sc.math.maximum(x, low), high)",
    "astype": "sc.astype(x, sc.float32)",
    "roll": "a shifted read such as f(I + 1)",
}
