"""Every construct of the DSL, run embedded through a @program and compared with hand-written NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import ir

from ._support import apply_program, assert_written, full, random_array, recording, run_fop

I = sc.Dimension("I")
J = sc.Dimension("J")
K = sc.Dimension("K")

F64 = sc.Field[[I, J], sc.float64]
F32 = sc.Field[[I, J], sc.float32]
I32 = sc.Field[[I, J], sc.int32]
I64 = sc.Field[[I, J], sc.int64]
B = sc.Field[[I, J], sc.bool_]
F64_1D = sc.Field[[I], sc.float64]
F64_3D = sc.Field[[I, J, K], sc.float64]

SHAPE = (7, 9)
ALL = full(2)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def arr(
    rng: np.random.Generator, dtype: object = np.float64, shape: tuple[int, ...] = SHAPE
) -> np.ndarray:
    return random_array(shape, dtype, rng)


# --- arithmetic -------------------------------------------------------------------


@sc.field_operator
def op_add(f: F64, g: F64) -> F64:
    return f + g


@sc.field_operator
def op_sub(f: F64, g: F64) -> F64:
    return f - g


@sc.field_operator
def op_mul(f: F64, g: F64) -> F64:
    return f * g


@sc.field_operator
def op_div(f: F64, g: F64) -> F64:
    return f / g


@sc.field_operator
def op_pow(f: F64, g: F64) -> F64:
    return sc.math.abs(f) ** g


@sc.field_operator
def op_pow_literal(f: F64, g: F64) -> F64:
    return f**2 + 2.0**g


@sc.field_operator
def op_neg(f: F64, g: F64) -> F64:
    return -f + (+g)


ARITHMETIC = [
    (op_add, lambda f, g: f + g),
    (op_sub, lambda f, g: f - g),
    (op_mul, lambda f, g: f * g),
    (op_div, lambda f, g: f / g),
    (op_pow, lambda f, g: np.abs(f) ** g),
    (op_pow_literal, lambda f, g: f**2.0 + 2.0**g),
    (op_neg, lambda f, g: -f + g),
]


@pytest.mark.parametrize(("fop", "reference"), ARITHMETIC, ids=lambda v: getattr(v, "name", ""))
def test_arithmetic(fop, reference, rng):
    f, g = arr(rng), arr(rng)
    (out,), (before,) = run_fop(fop, f, g)
    assert_written(out, before, ALL, reference(f, g))


@sc.field_operator
def int_arith(a: I32, b: I32) -> I32:
    return (a + b) * (a - b) - -a + a**3


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_arithmetic_keeps_integer_dtype(dtype, rng):
    fop = int_arith
    if dtype == np.int64:

        @sc.field_operator
        def int_arith64(a: I64, b: I64) -> I64:
            return (a + b) * (a - b) - -a + a**3

        fop = int_arith64
    a, b = arr(rng, dtype), arr(rng, dtype)
    (out,), (before,) = run_fop(fop, a, b)
    assert_written(out, before, ALL, (a + b) * (a - b) - -a + a**3)


# --- comparisons and logic ------------------------------------------------------------


@sc.field_operator
def cmp_eq(f: F64, g: F64) -> B:
    return f == g


@sc.field_operator
def cmp_ne(f: F64, g: F64) -> B:
    return f != g


@sc.field_operator
def cmp_lt(f: F64, g: F64) -> B:
    return f < g


@sc.field_operator
def cmp_le(f: F64, g: F64) -> B:
    return f <= g


@sc.field_operator
def cmp_gt(f: F64, g: F64) -> B:
    return f > g


@sc.field_operator
def cmp_ge(f: F64, g: F64) -> B:
    return f >= g


COMPARISONS = [
    (cmp_eq, np.equal),
    (cmp_ne, np.not_equal),
    (cmp_lt, np.less),
    (cmp_le, np.less_equal),
    (cmp_gt, np.greater),
    (cmp_ge, np.greater_equal),
]


@pytest.mark.parametrize(("fop", "reference"), COMPARISONS, ids=lambda v: getattr(v, "name", ""))
def test_comparison(fop, reference, rng):
    f = arr(rng)
    g = arr(rng)
    g[::2] = f[::2]  # some points equal, so that == and <= differ from < somewhere
    (out,), (before,) = run_fop(fop, f, g)
    expected = reference(f, g)
    assert expected.any() and not expected.all()
    assert_written(out, before, ALL, expected)


@sc.field_operator
def cmp_literals(f: I32) -> B:
    return (f > 0) | (3 == f) | (f <= -40)  # noqa: SIM300 (the reflected ==)


def test_comparison_with_int_literals(rng):
    f = arr(rng, np.int32)
    (out,), (before,) = run_fop(cmp_literals, f)
    assert_written(out, before, ALL, (f > 0) | (f == 3) | (f <= -40))


@sc.field_operator
def logic_and(a: B, b: B) -> B:
    return a & b


@sc.field_operator
def logic_or(a: B, b: B) -> B:
    return a | b


@sc.field_operator
def logic_not(a: B, b: B) -> B:
    return ~a


@sc.field_operator
def logic_mixed(a: B, b: B) -> B:
    return (~a & b) | (a & ~b) | (a == b) & True


LOGIC = [
    (logic_and, lambda a, b: a & b),
    (logic_or, lambda a, b: a | b),
    (logic_not, lambda a, b: ~a),
    (logic_mixed, lambda a, b: (~a & b) | (a & ~b) | (a == b)),
]


@pytest.mark.parametrize(("fop", "reference"), LOGIC, ids=lambda v: getattr(v, "name", ""))
def test_logic(fop, reference, rng):
    a, b = arr(rng, np.bool_), arr(rng, np.bool_)
    (out,), (before,) = run_fop(fop, a, b)
    assert_written(out, before, ALL, reference(a, b))


@sc.field_operator
def logic_of_comparisons(f: F64, g: F64) -> B:
    return (f > 0.0) & (g < 0.5) | ~(f < g)


def test_logic_of_comparisons(rng):
    f, g = arr(rng), arr(rng)
    (out,), (before,) = run_fop(logic_of_comparisons, f, g)
    assert_written(out, before, ALL, (f > 0.0) & (g < 0.5) | ~(f < g))


# --- where --------------------------------------------------------------------------


@sc.field_operator
def where_fields(f: F64, g: F64) -> F64:
    return sc.where(f > g, f, g)


@sc.field_operator
def where_literals(f: F64, g: F64) -> F64:
    return sc.where(f > g, 1.0, -1)


@sc.field_operator
def where_mixed(f: F64, g: F64) -> F64:
    return sc.where((f < 0.0) | (g < 0.0), 0.0, f * g)


@sc.field_operator
def where_scalar_param(f: F64, g: F64, a: sc.float64) -> F64:
    return sc.where(f > a, a, g)


@sc.field_operator
def where_scalar_cond(f: F64, g: F64, flag: sc.bool_) -> F64:
    return sc.where(flag, f, g)


def test_where_field_branches(rng):
    f, g = arr(rng), arr(rng)
    (out,), (before,) = run_fop(where_fields, f, g)
    assert_written(out, before, ALL, np.where(f > g, f, g))


def test_where_literal_branches(rng):
    f, g = arr(rng), arr(rng)
    (out,), (before,) = run_fop(where_literals, f, g)
    assert_written(out, before, ALL, np.where(f > g, 1.0, -1.0))


def test_where_mixed_branches(rng):
    f, g = arr(rng), arr(rng)
    (out,), (before,) = run_fop(where_mixed, f, g)
    assert_written(out, before, ALL, np.where((f < 0.0) | (g < 0.0), 0.0, f * g))


def test_where_scalar_parameter_branch(rng):
    f, g = arr(rng), arr(rng)
    (out,), (before,) = run_fop(where_scalar_param, f, g, 0.25)
    assert_written(out, before, ALL, np.where(f > 0.25, 0.25, g))


@pytest.mark.parametrize("flag", [True, False, np.True_, np.False_])
def test_where_scalar_condition(flag, rng):
    f, g = arr(rng), arr(rng)
    (out,), (before,) = run_fop(where_scalar_cond, f, g, flag)
    assert_written(out, before, ALL, f.copy() if flag else g.copy())


@sc.field_operator
def where_int32(f: I32) -> I32:
    return sc.where(f > 0, f, 0)


def test_where_int32_with_literal_branch(rng):
    f = arr(rng, np.int32)
    (out,), (before,) = run_fop(where_int32, f)
    assert_written(out, before, ALL, np.where(f > 0, f, np.int32(0)))


# --- math ---------------------------------------------------------------------------


def _unary_math(name):
    fn = getattr(sc.math, name)

    def body(f: F64) -> F64:
        return fn(f)

    body.__name__ = f"math_{name}"
    return sc.field_operator(body)


MATH_UNARY = ["sqrt", "exp", "log", "sin", "cos", "abs", "floor", "ceil"]


@pytest.mark.parametrize("name", MATH_UNARY)
def test_math_unary(name, rng):
    f = arr(rng)
    if name in ("sqrt", "log"):
        f = np.abs(f) + 0.01
    (out,), (before,) = run_fop(_unary_math(name), f)
    assert_written(out, before, ALL, getattr(np, name)(f))


@sc.field_operator
def math_minimum(f: F64, g: F64) -> F64:
    return sc.math.minimum(f, g)


@sc.field_operator
def math_maximum(f: F64, g: F64) -> F64:
    return sc.math.maximum(f, g)


@sc.field_operator
def math_with_literals(f: F64, g: F64) -> F64:
    return sc.math.minimum(sc.math.maximum(f, -0.5), 1) + abs(g)


@pytest.mark.parametrize(
    ("fop", "reference"),
    [
        (math_minimum, np.minimum),
        (math_maximum, np.maximum),
        (math_with_literals, lambda f, g: np.minimum(np.maximum(f, -0.5), 1.0) + np.abs(g)),
    ],
    ids=lambda v: getattr(v, "name", ""),
)
def test_math_binary(fop, reference, rng):
    f, g = arr(rng), arr(rng)
    (out,), (before,) = run_fop(fop, f, g)
    assert_written(out, before, ALL, reference(f, g))


@sc.field_operator
def math_int(a: I32, b: I32) -> I32:
    return sc.math.abs(a) + sc.math.minimum(a, b) - sc.math.maximum(b, 3)


def test_math_on_integers_keeps_integer_dtype(rng):
    a, b = arr(rng, np.int32), arr(rng, np.int32)
    (out,), (before,) = run_fop(math_int, a, b)
    assert_written(out, before, ALL, np.abs(a) + np.minimum(a, b) - np.maximum(b, np.int32(3)))


@sc.field_operator
def math_f32(f: F32) -> F32:
    return sc.math.sqrt(sc.math.abs(f)) + sc.math.sin(f) * sc.math.exp(f)


def test_math_on_float32_stays_float32(rng):
    f = arr(rng, np.float32)
    (out,), (before,) = run_fop(math_f32, f)
    expected = np.sqrt(np.abs(f)) + np.sin(f) * np.exp(f)
    assert expected.dtype == np.float32
    assert_written(out, before, ALL, expected)


# --- astype ----------------------------------------------------------------------------


@sc.field_operator
def cast_to_f32(f: F64) -> F32:
    return sc.astype(f, sc.float32)


@sc.field_operator
def cast_to_i32(f: F64) -> I32:
    return sc.astype(f * 10.0, sc.int32)


@sc.field_operator
def cast_i32_to_f64(a: I32) -> F64:
    return sc.astype(a, sc.float64) / 4.0


@sc.field_operator
def cast_bool_to_i64(b: B) -> I64:
    return sc.astype(b, sc.int64) * 3


@sc.field_operator
def cast_f64_to_bool(f: F64) -> B:
    return sc.astype(sc.math.floor(f), sc.bool_)


@sc.field_operator
def cast_same(f: F64) -> F64:
    return sc.astype(f, sc.float64)


@sc.field_operator
def cast_scalar(f: F32, a: sc.float64) -> F32:
    return f * sc.astype(a, sc.float32)


CASTS = [
    (cast_to_f32, np.float64, lambda x: x.astype(np.float32)),
    (cast_to_i32, np.float64, lambda x: (x * 10.0).astype(np.int32)),
    (cast_i32_to_f64, np.int32, lambda x: x.astype(np.float64) / 4.0),
    (cast_bool_to_i64, np.bool_, lambda x: x.astype(np.int64) * 3),
    (cast_f64_to_bool, np.float64, lambda x: np.floor(x).astype(np.bool_)),
    (cast_same, np.float64, lambda x: x.copy()),
]


@pytest.mark.parametrize(("fop", "dtype", "reference"), CASTS, ids=lambda v: getattr(v, "name", ""))
def test_astype(fop, dtype, reference, rng):
    x = arr(rng, dtype)
    (out,), (before,) = run_fop(fop, x)
    assert_written(out, before, ALL, reference(x))


def test_astype_of_a_scalar_parameter(rng):
    f = arr(rng, np.float32)
    (out,), (before,) = run_fop(cast_scalar, f, 0.1)
    assert_written(out, before, ALL, f * np.float32(0.1))


# --- scalar parameters and literals ---------------------------------------------------------


@sc.field_operator
def axpb(f: F64, alpha: sc.float64, beta: sc.float64) -> F64:
    return alpha * f + beta


@pytest.mark.parametrize("alpha", [0.3, 2, np.float64(-1.5)])
def test_scalar_parameters(alpha, rng):
    f = arr(rng)
    (out,), (before,) = run_fop(axpb, f, alpha, -0.75)
    assert_written(out, before, ALL, np.float64(alpha) * f + -0.75)


@sc.field_operator
def scalar_expr(f: F64, alpha: sc.float64, beta: sc.float64) -> F64:
    return f * (alpha * beta - 1.0) + (alpha - beta) / 2.0


def test_expression_of_scalar_parameters(rng):
    f = arr(rng)
    alpha, beta = np.float64(0.3), np.float64(1.7)
    (out,), (before,) = run_fop(scalar_expr, f, alpha, beta)
    assert_written(out, before, ALL, f * (alpha * beta - 1.0) + (alpha - beta) / 2.0)


@sc.field_operator
def int_scale(a: I32, k: sc.int32) -> I32:
    return a * k + 1


@pytest.mark.parametrize("k", [3, np.int32(-2)])
def test_int32_scalar_parameter(k, rng):
    a = arr(rng, np.int32)
    (out,), (before,) = run_fop(int_scale, a, k)
    assert_written(out, before, ALL, a * np.int32(k) + np.int32(1))


@sc.field_operator
def f32_scale(f: F32, k: sc.float32) -> F32:
    return f * k


def test_float32_scalar_parameter_from_python_float_is_float32(rng):
    f = arr(rng, np.float32)
    (out,), (before,) = run_fop(f32_scale, f, 0.1)
    assert_written(out, before, ALL, f * np.float32(0.1))


@sc.program
def literal_arguments(f: F64, g: F32, alpha: sc.float64, o: F64, o32: F32):
    axpb(f, 0.5, -1, out=o, domain={I: (0, 3)})
    axpb(beta=alpha, alpha=2, f=f, out=o, domain={I: (3, None)})
    f32_scale(g, 0.1, out=o32)


def test_literal_and_keyword_arguments_in_a_program(rng):
    f, g = arr(rng), arr(rng, np.float32)
    o, o32 = np.zeros_like(f), recording(np.zeros_like(g))
    literal_arguments(f, g, 0.75, o, o32)
    np.testing.assert_array_equal(o[:3], 0.5 * f[:3] + -1.0)
    np.testing.assert_array_equal(o[3:], 2.0 * f[3:] + 0.75)
    np.testing.assert_array_equal(o32, g * np.float32(0.1), strict=True)
    assert o32.assigned == [np.dtype(np.float32)]
    first = literal_arguments.ir.calls[0]
    assert first.args[1:] == (ir.Literal(0.5, sc.float64), ir.Literal(-1.0, sc.float64))


@sc.field_operator
def lit_i32(a: I32) -> I32:
    return 2 * a + 3 - 2147483647 * (a * 0)


@sc.field_operator
def lit_i64(a: I64) -> I64:
    return 2 * a + 3 + 2**40


@sc.field_operator
def lit_f64_int(f: F64) -> F64:
    return 2 * f + 3


@sc.field_operator
def lit_f32_int(f: F32) -> F32:
    return 2 * f + 3


def test_int_literal_with_int32_field(rng):
    a = arr(rng, np.int32)
    (out,), (before,) = run_fop(lit_i32, a)
    assert lit_i32.definition.body.type == I32
    assert_written(out, before, ALL, np.int32(2) * a + np.int32(3))


def test_int_literal_with_int64_field(rng):
    a = arr(rng, np.int64)
    (out,), (before,) = run_fop(lit_i64, a)
    assert_written(out, before, ALL, 2 * a + 3 + np.int64(2**40))


@pytest.mark.parametrize(("fop", "dtype"), [(lit_f64_int, np.float64), (lit_f32_int, np.float32)])
def test_int_literal_with_float_field(fop, dtype, rng):
    f = arr(rng, dtype)
    (out,), (before,) = run_fop(fop, f)
    assert_written(out, before, ALL, dtype(2) * f + dtype(3))


@sc.field_operator
def lit_f32_float(f: F32) -> F32:
    return f * 0.1 + 0.2


def test_float_literal_with_float32_field_computes_in_float32(rng):
    f = arr(rng, np.float32, (40, 40))
    body = lit_f32_float.definition.body
    assert body.type == F32
    assert isinstance(body, ir.Binary) and body.right == ir.Literal(0.2, sc.float32)
    (out,), (before,) = run_fop(lit_f32_float, f)
    expected = f * np.float32(0.1) + np.float32(0.2)
    assert_written(out, before, ALL, expected)
    # the check can tell: computing in float64 and rounding gives other values somewhere
    in_float64 = (f.astype(np.float64) * 0.1 + 0.2).astype(np.float32)
    assert (in_float64 != expected).any()


@sc.field_operator
def lone_literals(f: F32) -> F64:
    return sc.where(f > 0, 1.0, 0.5)


def test_literals_with_no_typed_partner_are_float64(rng):
    f = arr(rng, np.float32)
    (out,), (before,) = run_fop(lone_literals, f)
    assert_written(out, before, ALL, np.where(f > 0, 1.0, 0.5))


@sc.field_operator
def lit_bool(b: B) -> B:
    return (b & True) | False


def test_bool_literal(rng):
    b = arr(rng, np.bool_)
    (out,), (before,) = run_fop(lit_bool, b)
    assert_written(out, before, ALL, b.copy())


# --- shifts --------------------------------------------------------------------------------


@sc.field_operator
def shift_i(f: F64) -> F64:
    return f(I + 1)


@sc.field_operator
def shift_two(f: F64) -> F64:
    return f(I - 1, J + 2)


@sc.field_operator
def shift_expr(f: F64, g: F64) -> F64:
    return (f + g)(I + 1)


@sc.field_operator
def shift_nested(f: F64) -> F64:
    return f(I + 1)(J - 1) - f(J + 2)(J - 2)


@sc.field_operator
def shift_cancel(f: F64) -> F64:
    return f(I + 1)(I - 1) + f(I, J)


@sc.field_operator
def lap(f: F64) -> F64:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


def np_lap(f: np.ndarray) -> np.ndarray:
    return -4.0 * f[1:-1, 1:-1] + f[2:, 1:-1] + f[:-2, 1:-1] + f[1:-1, 2:] + f[1:-1, :-2]


def test_shift_forward(rng):
    f = arr(rng)
    (out,), (before,) = run_fop(shift_i, f)
    assert_written(out, before, np.s_[:-1, :], f[1:, :])


def test_shift_in_two_dimensions(rng):
    f = arr(rng)
    (out,), (before,) = run_fop(shift_two, f)
    assert_written(out, before, np.s_[1:, :-2], f[:-1, 2:])


def test_shift_of_an_expression(rng):
    f, g = arr(rng), arr(rng)
    (out,), (before,) = run_fop(shift_expr, f, g)
    assert_written(out, before, np.s_[:-1, :], (f + g)[1:, :])


def test_nested_shifts_add_up(rng):
    f = arr(rng)
    (out,), (before,) = run_fop(shift_nested, f)
    assert shift_nested.definition.body.left == ir.Shift(ir.Ref("f", F64), ((I, 1), (J, -1)), F64)
    assert_written(out, before, np.s_[:-1, 1:], f[1:, :-1] - f[:-1, 1:])


def test_shifts_that_cancel_read_in_place(rng):
    f = arr(rng)
    (out,), (before,) = run_fop(shift_cancel, f)
    assert_written(out, before, ALL, f + f)


def test_laplacian(rng):
    f = arr(rng)
    (out,), (before,) = run_fop(lap, f)
    assert_written(out, before, np.s_[1:-1, 1:-1], np_lap(f))


# --- calls of field operators ------------------------------------------------------------------


@sc.field_operator
def lap_plus(f: F64, g: F64) -> F64:
    return lap(f) + g


@sc.field_operator
def inner_scale(f: F64, a: sc.float64) -> F64:
    return f * a


@sc.field_operator
def middle(f: F64) -> F64:
    return inner_scale(f, 2.0)(J + 1) + f


@sc.field_operator
def outer(f: F64, a: sc.float64) -> F64:
    return middle(f)(I - 1) - inner_scale(f, a)


@sc.field_operator
def shifted_call(f: F64) -> F64:
    return lap(f)(I + 1)


@sc.field_operator
def call_of_shifted(f: F64) -> F64:
    return lap(f(J + 1))


@sc.field_operator
def lap_of_lap_fused(f: F64) -> F64:
    return lap(lap(f))


def test_call_of_another_field_operator(rng):
    f, g = arr(rng), arr(rng)
    (out,), (before,) = run_fop(lap_plus, f, g)
    assert_written(out, before, np.s_[1:-1, 1:-1], np_lap(f) + g[1:-1, 1:-1])


def test_nested_calls_with_scalar_arguments(rng):
    f = arr(rng)
    a = 0.5
    (out,), (before,) = run_fop(outer, f, a)
    # middle(f)[i, j] = 2 f[i, j+1] + f[i, j]; outer[i, j] = middle[i-1, j] - a f[i, j]
    expected = (2.0 * f[:-1, 1:] + f[:-1, :-1]) - f[1:, :-1] * a
    assert_written(out, before, np.s_[1:, :-1], expected)
    assert set(outer.definitions()) == {"outer", "middle", "inner_scale"}


def test_call_whose_result_is_shifted(rng):
    f = arr(rng)
    (out,), (before,) = run_fop(shifted_call, f)
    assert_written(out, before, np.s_[:-2, 1:-1], np_lap(f))  # out[i] = lap(f)[i + 1]


def test_call_of_a_shifted_argument(rng):
    f = arr(rng)
    (out,), (before,) = run_fop(call_of_shifted, f)
    assert_written(out, before, np.s_[1:-1, :-2], np_lap(f))  # out[:, j] = lap(f)[:, j + 1]


def test_call_of_a_call(rng):
    f = arr(rng)
    (out,), (before,) = run_fop(lap_of_lap_fused, f)
    assert_written(out, before, np.s_[2:-2, 2:-2], np_lap(np_lap(f)))


# --- tuple returns --------------------------------------------------------------------------------


@sc.field_operator
def pair(f: F64, g: F64) -> tuple[F64, B]:
    return f + g, f > g


@sc.field_operator
def pair_user(f: F64, g: F64) -> F64:
    s, bigger = pair(f, g)
    return sc.where(bigger, s(I + 1), -s)


def test_tuple_return_written_to_tuple_out(rng):
    f, g = arr(rng), arr(rng)
    (s, bigger), (s0, b0) = run_fop(pair, f, g)
    assert pair.return_type == ir.TupleType((F64, B))
    assert_written(s, s0, ALL, f + g)
    assert_written(bigger, b0, ALL, f > g)


def test_tuple_return_used_by_another_field_operator(rng):
    f, g = arr(rng), arr(rng)
    (out,), (before,) = run_fop(pair_user, f, g)
    s = f + g
    expected = np.where(f[:-1] > g[:-1], s[1:], -s[:-1])
    assert_written(out, before, np.s_[:-1, :], expected)


@sc.field_operator
def swap(f: F64, g: F64) -> tuple[F64, F64]:
    return g, f


@sc.program
def swap_in_place(f: F64, g: F64):
    swap(f, g, out=(f, g))


def test_tuple_outputs_that_are_also_inputs_are_swapped(rng):
    f, g = arr(rng), arr(rng)
    f0, g0 = f.copy(), g.copy()
    swap_in_place(f, g)
    np.testing.assert_array_equal(f, g0)
    np.testing.assert_array_equal(g, f0)


# --- programs: chained calls and domains ------------------------------------------------------------


@sc.program
def lap_of_lap(f: F64, tmp: F64, out: F64):
    lap(f, out=tmp)
    lap(tmp, out=out)


def test_chained_calls_shrink_the_inferred_domain(rng):
    f = arr(rng, shape=(10, 12))
    tmp = np.full_like(f, np.nan)
    out = np.full_like(f, np.nan)
    lap_of_lap(f, tmp, out)
    np.testing.assert_array_equal(tmp[1:-1, 1:-1], np_lap(f))
    np.testing.assert_array_equal(out[2:-2, 2:-2], np_lap(np_lap(f)))
    assert np.isnan(tmp[[0, -1], :]).all() and np.isnan(tmp[:, [0, -1]]).all()
    for edge in (out[:2], out[-2:], out[:, :2], out[:, -2:]):
        assert np.isnan(edge).all()
    first, second = lap_of_lap.ir.calls
    assert [d.resolve(10) for d in first.domain.dims] == [(1, 9), (1, 9)]
    assert [d.resolve(12) for d in second.domain.dims][1] == (2, 10)


@sc.field_operator
def double(f: F64) -> F64:
    return 2.0 * f


@sc.program
def lap_then_pointwise(f: F64, tmp: F64, out: F64):
    lap(f, out=tmp)
    double(tmp, out=out)


def test_pointwise_call_after_a_stencil_stays_in_the_written_region(rng):
    f = arr(rng)
    tmp = np.full_like(f, np.nan)
    out = np.full_like(f, np.nan)
    lap_then_pointwise(f, tmp, out)
    np.testing.assert_array_equal(out[1:-1, 1:-1], 2.0 * np_lap(f))
    assert np.isnan(out[0]).all() and np.isnan(out[:, -1]).all()


@sc.program
def lap_three_times(f: F64, t: F64, u: F64, out: F64):
    lap(f, out=t)
    lap(t, out=u)
    lap(u, out=out)


def test_three_chained_stencils_write_the_interior_minus_three(rng):
    f = arr(rng, shape=(11, 10))
    t, u, out = (np.full_like(f, np.nan) for _ in range(3))
    lap_three_times(f, t, u, out)
    np.testing.assert_array_equal(out[3:-3, 3:-3], np_lap(np_lap(np_lap(f))))
    inside = np.zeros(f.shape, bool)
    inside[3:-3, 3:-3] = True
    assert np.isnan(out[~inside]).all()


@sc.program
def partial_then_lap(f: F64, tmp: F64, out: F64):
    double(f, out=tmp, domain={I: (1, 5)})
    lap(tmp, out=out)


def test_inferred_domain_stays_inside_an_explicitly_written_region(rng):
    f = arr(rng, shape=(10, 9))
    tmp, out = np.full_like(f, np.nan), np.full_like(f, np.nan)
    partial_then_lap(f, tmp, out)
    np.testing.assert_array_equal(tmp[1:5], 2.0 * f[1:5])
    # lap reads tmp at I-1..I+1, and tmp holds rows 1..4: out gets rows 2 and 3
    np.testing.assert_array_equal(out[2:4, 1:-1], np_lap(2.0 * f)[1:3])
    inside = np.zeros(f.shape, bool)
    inside[2:4, 1:-1] = True
    assert np.isnan(out[~inside]).all()
    (_, second) = partial_then_lap.ir.calls
    assert [d.resolve(10) for d in second.domain.dims] == [(2, 4), (1, 9)]


@sc.program
def in_place_pointwise(f: F64, g: F64):
    op_add(f, g, out=f)


def test_pointwise_call_may_write_a_field_it_reads_in_place(rng):
    f, g = arr(rng), arr(rng)
    expected = f + g
    in_place_pointwise(f, g)
    np.testing.assert_array_equal(f, expected)


@pytest.mark.parametrize(
    ("domain", "region"),
    [
        ({I: (1, -1), J: (1, -1)}, np.s_[1:-1, 1:-1]),
        ({I: (2, None), J: (1, -2)}, np.s_[2:, 1:-2]),
        ({I: (-4, -1)}, np.s_[-4:-1, :]),
        ({I: (-3, None), J: (-5, None)}, np.s_[-3:, -5:]),
        ({I: (1, 4), J: (2, 6)}, np.s_[1:4, 2:6]),
        ({J: (3, None)}, np.s_[:, 3:]),
    ],
    ids=str,
)
def test_explicit_domain_of_a_pointwise_call(domain, region, rng):
    f, g = arr(rng), arr(rng)
    (out,), (before,) = run_fop(op_add, f, g, domain=domain)
    assert_written(out, before, region, (f + g)[region])


def test_empty_explicit_domain_writes_nothing(rng):
    f, g = arr(rng), arr(rng)
    out = arr(rng)
    before = out.copy()
    apply_program(op_add, {I: (5, 3)})(f, g, out)
    np.testing.assert_array_equal(out, before)


@pytest.mark.parametrize(
    ("domain", "region"),
    [
        ({I: (2, -1), J: (1, -3)}, np.s_[2:-1, 1:-3]),
        ({I: (-3, -1)}, np.s_[-3:-1, 1:-1]),
        ({J: (1, 4)}, np.s_[1:-1, 1:4]),
    ],
    ids=str,
)
def test_explicit_domain_of_a_stencil(domain, region, rng):
    f = arr(rng)
    (out,), (before,) = run_fop(lap, f, domain=domain)
    full_lap = np.full(SHAPE, np.nan)
    full_lap[1:-1, 1:-1] = np_lap(f)
    assert_written(out, before, region, full_lap[region])


# --- dimensions, dtypes and layouts --------------------------------------------------------------------


@sc.field_operator
def lap_1d(f: F64_1D) -> F64_1D:
    return f(I - 1) - 2.0 * f + f(I + 1)


def test_one_dimensional_field(rng):
    f = arr(rng, shape=(11,))
    (out,), (before,) = run_fop(lap_1d, f)
    assert_written(out, before, np.s_[1:-1], f[:-2] - 2.0 * f[1:-1] + f[2:])


@sc.field_operator
def stencil_3d(f: F64_3D, g: F64_3D) -> F64_3D:
    return f(K + 1) - f(K - 1) + g(I + 1, J - 1) * 0.5


def test_three_dimensional_field(rng):
    f, g = arr(rng, shape=(5, 6, 7)), arr(rng, shape=(5, 6, 7))
    (out,), (before,) = run_fop(stencil_3d, f, g)
    expected = f[:-1, 1:, 2:] - f[:-1, 1:, :-2] + g[1:, :-1, 1:-1] * 0.5
    assert_written(out, before, np.s_[:-1, 1:, 1:-1], expected)


def _copy_op(name, ftype):
    def body(x: ftype) -> ftype:  # type: ignore[valid-type]
        return x(I + 1)

    body.__name__ = name
    body.__annotations__ = {"x": ftype, "return": ftype}
    return sc.field_operator(body)


DTYPES = {
    "float32": (sc.float32, np.float32),
    "float64": (sc.float64, np.float64),
    "int32": (sc.int32, np.int32),
    "int64": (sc.int64, np.int64),
    "bool": (sc.bool_, np.bool_),
}


@pytest.mark.parametrize("name", DTYPES)
def test_fields_of_every_dtype(name, rng):
    dsl, npt = DTYPES[name]
    fop = _copy_op(f"shift_{name}", sc.Field[[I, J], dsl])
    x = arr(rng, npt)
    (out,), (before,) = run_fop(fop, x)
    assert out.dtype == npt
    assert_written(out, before, np.s_[:-1, :], x[1:, :])


@sc.field_operator
def per_dtype_f32(a: F32, b: F32) -> F32:
    return a * 2 - b / 3.0


@sc.field_operator
def per_dtype_i64(a: I64, b: I64) -> I64:
    return a * 2 - b


def test_float32_arithmetic_of_two_fields(rng):
    a, b = arr(rng, np.float32), arr(rng, np.float32)
    (out,), (before,) = run_fop(per_dtype_f32, a, b)
    assert_written(out, before, ALL, a * np.float32(2) - b / np.float32(3.0))


def test_int64_arithmetic_of_two_fields(rng):
    a, b = arr(rng, np.int64), arr(rng, np.int64)
    (out,), (before,) = run_fop(per_dtype_i64, a, b)
    assert_written(out, before, ALL, a * 2 - b)


@sc.field_operator
def lap_scaled(f: F64, alpha: sc.float64) -> F64:
    return f + alpha * lap(f)


@sc.program
def smooth(f: F64, out: F64, alpha: sc.float64):
    lap_scaled(f, alpha, out=out)


def _layout(base: np.ndarray, layout: str) -> np.ndarray:
    if layout == "C":
        return np.ascontiguousarray(base)
    if layout == "F":
        return np.asfortranarray(base)
    big = np.zeros((base.shape[0] * 2, base.shape[1] * 3 + 1))
    view = big[::2, 1::3]
    view[...] = base
    assert not view.flags.c_contiguous and not view.flags.f_contiguous
    return view


@pytest.mark.parametrize("in_layout", ["C", "F", "sliced"])
@pytest.mark.parametrize("out_layout", ["C", "F", "sliced"])
def test_memory_layouts(in_layout, out_layout, rng):
    base = arr(rng, shape=(8, 10))
    f = _layout(base, in_layout)
    out = _layout(np.full((8, 10), -7.0), out_layout)
    surroundings = out.base.copy() if out.base is not None else None
    program = lap_scaled_program()
    program(f, out, 0.1)
    expected = base[1:-1, 1:-1] + 0.1 * np_lap(base)
    np.testing.assert_array_equal(out[1:-1, 1:-1], expected)
    border = np.ones(out.shape, bool)
    border[1:-1, 1:-1] = False
    assert (out[border] == -7.0).all()
    if out_layout == "sliced":
        untouched = np.ones(out.base.shape, bool)
        untouched[::2, 1::3] = False
        np.testing.assert_array_equal(out.base[untouched], surroundings[untouched])


def lap_scaled_program():
    @sc.program
    def lap_scaled_prog(f: F64, out: F64, alpha: sc.float64):
        lap_scaled(f, alpha, out=out)

    return lap_scaled_prog


def test_read_only_input_is_accepted(rng):
    f = arr(rng)
    f.flags.writeable = False
    out = np.zeros_like(f)
    smooth(f, out, 0.5)
    np.testing.assert_array_equal(out[1:-1, 1:-1], f[1:-1, 1:-1] + 0.5 * np_lap(f))


def test_output_array_is_written_in_place_not_replaced(rng):
    f = arr(rng)
    out = recording(np.zeros_like(f))
    smooth(f, out, 0.5)
    assert out.assigned == [np.dtype(np.float64)]


# --- the IR's text form and types -------------------------------------------------------------------


def test_program_ir_text_is_readable():
    text = str(lap_of_lap.ir)
    assert text.startswith("program lap_of_lap(")
    for needle in (
        "f: Field[[I, J], float64]",
        "tmp",
        "out",
        "field_operator lap(",
        "f(I+1)",
        "f(J-1)",
    ):
        assert needle in text, needle
    assert "tmp = lap(f)" in text and "out = lap(tmp)" in text


def test_program_ir_text_of_scalars_calls_and_tuples():
    @sc.program
    def text_prog(f: F64, g: F64, a: sc.float64, s: F64, bigger: B, o: F64):
        pair(f, g, out=(s, bigger))
        outer(f, a, out=o)

    text = str(text_prog.ir)
    for needle in (
        "a: float64",
        "s, bigger = pair(f, g)",
        "o = outer(f, a)",
        "inner_scale(f, 2.0",
        "field_operator middle(",
        "-> tuple[Field[[I, J], float64], Field[[I, J], bool]]",
    ):
        assert needle in text, needle
    assert "text_prog" in repr(text_prog)


@pytest.mark.parametrize(
    ("fop", "dtype"),
    [
        (cmp_lt, sc.bool_),
        (lit_f32_float, sc.float32),
        (cast_to_i32, sc.int32),
        (cast_bool_to_i64, sc.int64),
        (math_f32, sc.float32),
        (lone_literals, sc.float64),
        (where_int32, sc.int32),
    ],
    ids=lambda v: getattr(v, "name", str(v)),
)
def test_result_dtype_in_the_ir(fop, dtype):
    assert fop.return_type == ir.FieldType((I, J), dtype)
