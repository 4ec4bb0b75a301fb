"""What to write instead of the Python operators and NumPy functions the DSL does not
have: the hints of the DefinitionErrors that tracing raises (program/tracing.py), and how
those errors name a traced value."""

from __future__ import annotations

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.dtypes import ScalarType


def describe_traced(t: ir.FieldType | ScalarType) -> str:
    """A traced value of type `t` as an error names it: `field Field[[I], float64]`."""
    kind = "field" if isinstance(t, ir.FieldType) else "scalar"
    return f"{kind} {t!r}"


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


def shift_example(t: ir.FieldType | ScalarType) -> str:
    """A shift of a traced value of type `t`, for a hint: `a shift such as f(Cell + 1)`."""
    dim = t.dims[0].name if isinstance(t, ir.FieldType) else "I"
    return f"a shift such as f({dim} + 1)"


def unsupported_operator(op: str, t: ir.FieldType | ScalarType) -> DefinitionError:
    what = "divmod()" if op == "divmod" else f"`{op}`"
    hint = UNSUPPORTED_OPERATORS[op].format(shift=shift_example(t))
    return DefinitionError(f"{what} of {describe_traced(t)}: {hint}")


def numpy_message(name: str, hint: str | None, t: ir.FieldType | ScalarType) -> str:
    fix = (
        f"write {hint}"
        if hint is not None
        else "write it with the DSL's operators (+ - * / ** // % comparisons & | ^ ~ << >>), "
        "sc.where and "
        f"sc.math ({', '.join(ir.MATH_FUNCTIONS)})"
    )
    return (
        f"{name} applied to {describe_traced(t)}: NumPy functions do not run on traced values "
        f"(a field operator is traced into a stencil, not run on arrays); {fix}"
    )


def no_python_value(t: ir.FieldType | ScalarType, kind: str) -> DefinitionError:
    return DefinitionError(
        f"a traced {t!r} converted to a {kind} (by int(x), float(x), np.float64(x) "
        "or np.asarray(x)): a field operator's values are known only when it runs; a dtype "
        "called in a field operator takes a literal (sc.float64(1)), and a traced value is "
        "converted with sc.astype(x, dtype)"
    )
