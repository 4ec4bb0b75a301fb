"""Operators, NumPy functions and shift offsets that the DSL does not have fail at
definition with the user's file and line and what to write instead; NumPy scalars on the
left of an operator still reach the DSL's own operators.

Each line that should be reported ends with a `# L:<name>` marker.
"""

from __future__ import annotations

import functools
import operator
import os
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import ir

from ._support import assert_located as assert_located_in

I = sc.Dimension("I")
J = sc.Dimension("J")
K = sc.Dimension("K")

F64 = sc.Field[[I, J], sc.float64]
F32 = sc.Field[[I, J], sc.float32]
I32 = sc.Field[[I, J], sc.int32]
B = sc.Field[[I, J], sc.bool_]

HERE = os.path.abspath(__file__)


# `err` points at the line of this file marked `# L:<marker>` (or a few lines below it)
assert_located = functools.partial(assert_located_in, path=HERE)


def assert_names(err: BaseException, *parts: str) -> None:
    message = str(err)
    for part in parts:
        assert part in message, f"{part!r} not in {message!r}"


def traced_error(marker: str, make: Any) -> sc.DefinitionError:
    """The DefinitionError raised while tracing a field operator over f, g (float64),
    x (float32), n, m (int32) and b, c (bool) whose body is `make(values)`."""
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def traced(f: F64, g: F64, x: F32, n: I32, m: I32, b: B, c: B):
            return make({"f": f, "g": g, "x": x, "n": n, "m": m, "b": b, "c": c})

    assert_located(info.value, marker)
    return info.value


# --- operators the DSL does not have --------------------------------------------------------------

# The integer operators on values of another kind (they are the DSL's operators on integers,
# and `^` on bool values: tests/program/test_integer_and_math.py).
FLOOR_HINTS = ("`//` takes integers", "sc.math.floor(a / b)")
MOD_HINTS = ("`%` takes integers", "a - b * sc.math.floor(a / b)", "sc.math.fmod(a, b)")
SHIFT_HINTS = ("shifts take integers", "f(I + 1)")
BOOL_HINT = "cast bool values to an integer dtype with sc.astype first"
OPERATOR_CASES = {
    "xor-float": ("xor", "f", "g", ("`^`", "it takes bool values (logical) or integers")),
    "and-float": ("and_", "f", "g", ("`&`", "it takes bool values (logical) or integers")),
    "lshift-float": ("lshift", "f", "g", ("`<<`", *SHIFT_HINTS)),
    "rshift-float": ("rshift", "f", "g", ("`>>`", *SHIFT_HINTS)),
    "lshift-bool": ("lshift", "b", "c", ("`<<`", "shifts take integers", BOOL_HINT)),
    "matmul": ("matmul", "f", "g", ("`@`", "matrix products are not supported", "`*`")),
    "floordiv": ("floordiv", "f", "g", ("`//`", *FLOOR_HINTS)),
    "floordiv-float32": ("floordiv", "x", "x", ("`//`", *FLOOR_HINTS)),
    "floordiv-bool": ("floordiv", "b", "c", ("`//`", "`//` takes integers", BOOL_HINT)),
    "mod": ("mod", "f", "g", ("`%`", *MOD_HINTS)),
    "mod-bool": ("mod", "b", "c", ("`%`", BOOL_HINT)),
}


@pytest.mark.parametrize("case", sorted(OPERATOR_CASES))
@pytest.mark.parametrize("left", ["traced", "python", "numpy"])
def test_unsupported_operator(case, left):
    """`a ^ b` of traced values, `1 ^ b` (Python's reflected operator) and
    `np.int32(1) ^ b` (NumPy's operator, through the ufunc) give the same error."""
    op, a, b, hints = OPERATOR_CASES[case]
    fn = getattr(operator, op)

    def operands(values: dict[str, Any]) -> tuple[Any, Any]:
        right = values[b]
        if left == "traced":
            return values[a], right
        dtype = right.type.dtype
        return (True if dtype.is_bool else 1) if left == "python" else dtype.numpy.type(1), right

    err = traced_error("operator", lambda v: fn(*operands(v)))  # L:operator
    assert_names(err, *hints)
    dtype = {"c": "bool", "m": "int32", "g": "float64", "x": "float32"}[b]
    if op not in ("xor", "and_"):  # the logical operators name the dtype, not the operand
        assert_names(err, f"of field Field[[I, J], {dtype}]")
    else:
        assert_names(err, f"on {dtype} values")


def test_divmod_of_floats():
    err = traced_error("divmod", lambda v: divmod(v["f"], v["g"]))  # L:divmod
    assert_names(err, "`//` of field Field[[I, J], float64]", *FLOOR_HINTS)


@pytest.mark.parametrize("op", ["neg", "invert"])
def test_unary_operator_of_the_wrong_kind(op):
    fn, operand = {"neg": (operator.neg, "b"), "invert": (operator.invert, "f")}[op]
    err = traced_error("unary", lambda v: fn(v[operand]))  # L:unary
    hint = "use `~` for logical not" if op == "neg" else "bool values (logical not) or integers"
    assert_names(err, hint)


def test_shift_hint_names_the_fields_own_dimension():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def shifted(x: sc.Field[[K], sc.float64]):
            return x << 1  # L:shift-k

    assert_located(info.value, "shift-k")
    assert_names(info.value, "`<<` of field Field[[K], float64]", "f(K + 1)")


# --- NumPy functions on traced values --------------------------------------------------------------

UFUNC_CASES = {
    "sqrt": (np.sqrt, ("f",), ("np.sqrt", "field Field[[I, J], float64]", "sc.math.sqrt(x)")),
    "exp": (np.exp, ("f",), ("np.exp", "sc.math.exp(x)")),
    "log": (np.log, ("f",), ("np.log", "sc.math.log(x)")),
    "floor": (np.floor, ("f",), ("np.floor", "sc.math.floor(x)")),
    "abs": (np.abs, ("f",), ("np.absolute", "sc.math.abs(x)")),
    "maximum": (np.maximum, ("f", "g"), ("np.maximum", "sc.math.maximum(x, y)")),
    "minimum-literal": (np.minimum, ("f", 0.0), ("np.minimum", "sc.math.minimum(x, y)")),
    "add": (np.add, ("f", 1.0), ("np.add", "the operator `+`")),
    "add-literal-first": (np.add, (1.0, "f"), ("np.add", "the operator `+`")),
    "multiply": (np.multiply, ("f", "g"), ("np.multiply", "the operator `*`")),
    "less": (np.less, ("f", "g"), ("np.less", "the operator `<`")),
    "logical_and": (np.logical_and, ("b", "c"), ("np.logical_and", "`&` on bool values")),
    "logical_not": (np.logical_not, ("b",), ("np.logical_not", "`~` on bool values")),
    "logical_xor": (np.logical_xor, ("b", "c"), ("np.logical_xor", "the operator `^` on bool")),
    "left_shift": (np.left_shift, ("n", 1), ("np.left_shift", "the operator `<<` on integers")),
    "floor_divide": (
        np.floor_divide,
        ("f", "g"),
        ("np.floor_divide", "the operator `//` on integers", "sc.math.floor(a / b)"),
    ),
    "remainder": (np.remainder, ("n", "m"), ("np.remainder", "the operator `%` on integers")),
    "add.reduce": (np.add.reduce, ("f",), ("np.add.reduce", "the operator `+`")),
    "tanh": (np.tanh, ("f",), ("np.tanh", "sc.math.tanh(x)")),
    "arctan2": (np.arctan2, ("f", "g"), ("np.arctan2", "sc.math.arctan2(x, y)")),
    "isnan": (np.isnan, ("f",), ("np.isnan", "sc.math.isnan(x)")),
    "bitwise_xor": (np.bitwise_xor, ("n", "m"), ("np.bitwise_xor", "the operator `^`")),
    "invert": (np.invert, ("n",), ("np.invert", "the operator `~`")),
    "where": (np.where, ("b", "f", "g"), ("np.where", "sc.where(cond, a, b)")),
    "clip": (np.clip, ("f", 0.0, 1.0), ("np.clip", "sc.math.minimum(sc.math.maximum(")),
    "sum": (np.sum, ("f",), ("np.sum", "sc.math (sqrt", "gamma", "isfinite", "// %", "<< >>")),
    "linalg.norm": (np.linalg.norm, ("f",), ("np.linalg.norm",)),
}


@pytest.mark.parametrize("case", sorted(UFUNC_CASES))
def test_numpy_function_on_a_traced_value(case):
    fn, operands, hints = UFUNC_CASES[case]

    def args(values: dict[str, Any]) -> list[Any]:
        return [values[o] if isinstance(o, str) else o for o in operands]

    err = traced_error("numpy", lambda v: fn(*args(v)))  # L:numpy
    assert_names(err, *hints, "NumPy functions do not run on traced values")
    assert "__array_ufunc__" not in str(err) and "__array_function__" not in str(err)


def test_numpy_function_on_a_scalar_parameter():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def scaled(f: F64, a: sc.float64) -> F64:
            return f * np.sqrt(a)  # L:scalar-sqrt

    assert_located(info.value, "scalar-sqrt")
    assert_names(info.value, "np.sqrt applied to scalar float64", "sc.math.sqrt(x)")


def test_numpy_ufunc_writing_into_an_array():
    out = np.zeros((2, 2))
    err = traced_error("ufunc-out", lambda v: np.add(v["f"], 1.0, out=out))  # L:ufunc-out
    assert_names(err, "np.add", "the operator `+`")


# --- NumPy values on the left of an operator still reach the DSL's operators ----------------------


def _body(fop: sc.FieldOperator) -> ir.Expr:
    return fop.definition.body


def test_numpy_scalars_on_the_left_reach_the_dsl_operators():
    @sc.field_operator
    def with_numpy(f: F64, g: F64, n: I32, b: B) -> F64:
        two = np.float64(2.0)
        scaled = two * f + two - f - (two / g) ** np.float64(1.0) + two**g
        ordered = sc.where(
            (np.float64(0.5) < f) & (np.float64(0.5) >= g) & (np.True_ | b), scaled, f
        )
        return sc.where((np.int32(3) == n) | (np.int32(3) != n), ordered, g)

    @sc.field_operator
    def with_python(f: F64, g: F64, n: I32, b: B) -> F64:
        two = 2.0
        scaled = two * f + two - f - (two / g) ** 1.0 + two**g
        ordered = sc.where((f > 0.5) & (g <= 0.5) & (True | b), scaled, f)
        return sc.where((n == 3) | (n != 3), ordered, g)

    assert _body(with_numpy) == _body(with_python)


def test_numpy_scalar_on_the_left_runs():
    rng = np.random.default_rng(7)

    @sc.field_operator
    def affine(f: F32) -> F32:
        return np.float32(2.0) * f - np.float32(0.5)

    @sc.program
    def run_affine(f: F32, out: F32):
        affine(f, out=out)

    f = rng.random((5, 4)).astype(np.float32)
    out = np.zeros_like(f)
    run_affine(f, out)
    np.testing.assert_array_equal(out, np.float32(2.0) * f - np.float32(0.5), strict=True)


@pytest.mark.parametrize("op", ["mul", "lt", "and_"])
def test_numpy_scalar_on_the_left_of_another_dtype(op):
    """The dtype of a NumPy scalar is checked as on the right: nothing is converted."""
    scalar = {"mul": np.float64(2.0), "lt": np.float64(2.0), "and_": np.int32(1)}[op]
    err = traced_error("np-dtype", lambda v: getattr(operator, op)(scalar, v["x"]))  # L:np-dtype
    assert_names(err, "mismatched dtypes", "float32", str(scalar.dtype))


@pytest.mark.parametrize("in_place", [False, True], ids=["binary", "in-place"])
def test_numpy_array_on_the_left(in_place):
    array = np.ones((2, 2))
    op = operator.iadd if in_place else operator.add
    err = traced_error("np-array", lambda v: op(array, v["f"]))  # L:np-array
    assert_names(err, "`+`", "cannot use ndarray", "operands are fields, scalars")


# --- shift offsets ---------------------------------------------------------------------------------

OFFSET_CASES = {
    "float": (1.25, ("got 1.25 (float)", "weighted sum", "f(I + 1)", "half shift")),
    "np.float64": (np.float64(1.0), ("got np.float64(1.0)", "write the int: f(I + 1)")),
    "whole-float": (2.0, ("got 2.0 (float)", "f(I + 2)")),
    "bool": (True, ("got True (bool)", "f(I + 1)")),
    "np.bool_": (np.True_, ("(bool)", "f(I + 1)")),
    "str": ("1", ("got '1' (str)", "not a string: f(I + 1)")),
    "np.int64": (np.int64(1), ("got np.int64(1)", "int(n)")),
    "none": (None, ("got None", "f(I + 1)")),
}


@pytest.mark.parametrize("case", sorted(OFFSET_CASES))
def test_shift_offset_that_is_not_an_int(case):
    value, hints = OFFSET_CASES[case]
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def shifted(f: F64) -> F64:
            return f(I + value)  # L:offset

    assert_located(info.value, "offset")
    assert_names(info.value, f"`I + {value!r}`", "a shift offset is a whole number of grid points")
    assert_names(info.value, *hints)


def test_half_shift_along_the_fields_own_dimension():
    """`J - 0.5` is a half shift onto J, from its staggered counterpart: of a field over J
    it is an error that says to shift by whole points."""
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def shifted(f: F64) -> F64:
            return f(J - 0.5)  # L:offset-minus

    assert_located(info.value, "offset-minus")
    assert_names(info.value, "`J - 0.5`", "half shift", "over J already", "f(J - 1)")


def test_offset_written_outside_a_field_operator():
    with pytest.raises(sc.DefinitionError) as info:
        _ = I + 0.25  # L:offset-outside

    assert_located(info.value, "offset-outside")


def test_int_offsets_still_work():
    @sc.field_operator
    def shifted(f: F64) -> F64:
        return f(I + 1, J - 2) + f(I - 0) + f(I + (-1))

    assert sc.Dimension("I") + 3 == sc.Offset(I, 3)
    assert "Shift" in repr(_body(shifted))


# --- program parameters ------------------------------------------------------------------------------


@sc.field_operator
def copy(f: F64) -> F64:
    return f


PARAMETER_CASES = {
    "sqrt": (np.sqrt, lambda f: (f,)),
    "xor": (operator.xor, lambda f: (f, f)),
    "numpy-left": (operator.mul, lambda f: (np.float64(2.0), f)),
}


@pytest.mark.parametrize("case", sorted(PARAMETER_CASES))
def test_numpy_and_operators_on_a_program_parameter(case):
    fn, operands = PARAMETER_CASES[case]
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def uses_parameter(f: F64, out: F64):
            copy(fn(*operands(f)), out=out)  # L:program-param

    assert_located(info.value, "program-param")
    assert_names(info.value, "program parameter 'f' used in an expression", "@field_operator")
