"""Integer `//` and `%`, bitwise operators and shifts, `^` on bool values, and the math
functions: their types, their misuse, and the values the embedded executor gives (NumPy's).
The compiled toolchains are checked against the same values in
tests/runtime/test_integer_and_math_compiled.py.
"""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import ir, semantics
from stencilchain.program.pretty import format_expr
from stencilchain.program.transforms import fold_constants

I = sc.Dimension("I")
I32 = sc.Field[[I], sc.int32]
I64 = sc.Field[[I], sc.int64]
F64 = sc.Field[[I], sc.float64]
F32 = sc.Field[[I], sc.float32]
B = sc.Field[[I], sc.bool_]


def body(fop: sc.FieldOperator) -> ir.Expr:
    return fop.definition.body


# --- types ------------------------------------------------------------------------------------------


INTEGER_OPERATORS = {
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "lshift": operator.lshift,
    "rshift": operator.rshift,
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
}


@pytest.mark.parametrize("op", sorted(INTEGER_OPERATORS))
@pytest.mark.parametrize("dtype", [sc.int32, sc.int64], ids=str)
def test_integer_operators_keep_the_dtype(op, dtype):
    fn = INTEGER_OPERATORS[op]

    def traced(a, s):  # type: ignore[no-untyped-def]
        return fn(a, s), fn(a, 3), fn(-3, a)

    traced.__annotations__ = {"a": sc.Field[[I], dtype], "s": dtype}
    result = body(sc.field_operator(traced))
    assert isinstance(result, ir.MakeTuple)
    for elem in result.elems:
        assert isinstance(elem, ir.Binary) and elem.op == op
        assert elem.type == ir.FieldType((I,), dtype)
        literals = [e for e in (elem.left, elem.right) if isinstance(e, ir.Literal)]
        assert all(lit.type == dtype for lit in literals)


def test_bool_xor_and_not_are_logical():
    @sc.field_operator
    def logic(p: B, q: B):
        return p ^ q, ~p, p ^ True

    elems = body(logic).elems  # type: ignore[union-attr]
    assert [e.op for e in elems] == ["xor", "not", "xor"]
    assert all(e.type == ir.FieldType((I,), sc.bool_) for e in elems)


def test_divmod_of_integers():
    @sc.field_operator
    def both(a: I64, b: I64):
        return divmod(a, b)

    q, r = body(both).elems  # type: ignore[union-attr]
    assert (q.op, r.op) == ("floordiv", "mod")


def test_predicates_are_bool_and_power_is_pow():
    @sc.field_operator
    def checks(x: F32, n: I32, y: F32):
        return sc.math.isnan(x), sc.math.isinf(n), sc.math.isfinite(x), sc.math.power(x, y)

    nan, inf, finite, power = body(checks).elems  # type: ignore[union-attr]
    for pred in (nan, inf, finite):
        assert pred.type == ir.FieldType((I,), sc.bool_)
    assert isinstance(power, ir.Binary) and power.op == "pow"
    assert power.type == ir.FieldType((I,), sc.float32)


def test_the_text_form_names_the_operators():
    @sc.field_operator
    def shown(a: I32, b: I32):
        return (a // b) % 3 << (a >> 1) ^ ~b

    assert format_expr(body(shown)) == "((((a // b) % 3:int32) << (a >> 1:int32)) ^ ~b)"


# --- misuse -----------------------------------------------------------------------------------------

MISUSE = {
    "tan-of-int": (lambda a, x, p: sc.math.tan(a), "sc.math.tan of a int32 value; cast"),
    "gamma-of-int": (lambda a, x, p: sc.math.gamma(a), "sc.math.gamma of a int32 value"),
    "trunc-of-int": (lambda a, x, p: sc.math.trunc(a), "sc.math.trunc of a int32 value"),
    "isnan-of-bool": (lambda a, x, p: sc.math.isnan(p), "sc.math.isnan of a bool value"),
    "fmod-of-bool": (lambda a, x, p: sc.math.fmod(p, p), "sc.math.fmod of a bool value"),
    "power-of-int": (lambda a, x, p: sc.math.power(a, a), "non-negative int literal exponent"),
    "fmod-mixed": (lambda a, x, p: sc.math.fmod(x, a), "mismatched dtypes float64 and int32"),
    "div-of-int": (lambda a, x, p: a / a, "floor division of integers is `//`"),
    "xor-of-float": (lambda a, x, p: x ^ x, "it takes bool values (logical) or integers"),
    "invert-of-float": (lambda a, x, p: ~x, "(logical not) or integers (bitwise not)"),
    "shift-of-float": (lambda a, x, p: x >> 1, "shifts take integers"),
    "literal-too-large": (lambda a, x, p: a << 2**40, "does not fit dtype int32"),
}


@pytest.mark.parametrize("case", sorted(MISUSE))
def test_misuse(case):
    make, message = MISUSE[case]
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def traced(a: I32, x: F64, p: B):
            return make(a, x, p)

    assert message in str(info.value)


# --- values: NumPy's -----------------------------------------------------------------------------


def run_one(fop: sc.FieldOperator, out_dtype: np.dtype, *args: np.ndarray) -> np.ndarray:
    """`fop` over the arrays `args` (all fields over I) by the embedded executor."""
    params = ", ".join(f"a{k}" for k in range(len(args)))
    annotations = {f"a{k}": sc.Field[[I], _dtype(a.dtype)] for k, a in enumerate(args)}
    namespace: dict[str, object] = {"fop": fop}
    exec(f"def run_it({params}, out):\n    fop({params}, out=out)\n", namespace)
    fn = namespace["run_it"]
    fn.__annotations__ = {**annotations, "out": sc.Field[[I], _dtype(out_dtype)]}  # type: ignore[attr-defined]
    out = np.zeros(len(args[0]), dtype=out_dtype)
    sc.program(fn)(*args, out)  # type: ignore[arg-type]
    return out


def _dtype(dtype: np.dtype) -> sc.ScalarType:
    return {"int32": sc.int32, "int64": sc.int64, "float64": sc.float64}[np.dtype(dtype).name]


@sc.field_operator
def floor_div(a: I32, b: I32) -> I32:
    return a // b


@sc.field_operator
def remainder(a: I32, b: I32) -> I32:
    return a % b


@sc.field_operator
def left(a: I64, b: I64) -> I64:
    return a << b


@sc.field_operator
def right(a: I64, b: I64) -> I64:
    return a >> b


MIN32 = np.iinfo(np.int32).min
MIN64 = np.iinfo(np.int64).min


def test_floor_division_and_remainder():
    a = np.array([7, -7, 7, -7, MIN32, MIN32, 5, 0], dtype=np.int32)
    b = np.array([2, 2, -2, -2, -1, 0, 0, 0], dtype=np.int32)
    quotient = run_one(floor_div, np.dtype(np.int32), a, b)
    rest = run_one(remainder, np.dtype(np.int32), a, b)
    # Python's floor semantics; 0 for a zero divisor; MIN // -1 wraps to MIN
    assert quotient.tolist() == [3, -4, -4, 3, MIN32, 0, 0, 0]
    assert rest.tolist() == [1, 1, -1, -1, 0, 0, 0, 0]


def test_shifts():
    a = np.array([1, -1, -8, MIN64, 5, 5, 5, -5, 3], dtype=np.int64)
    b = np.array([-1, -1, 40, 1, 63, 64, 200, 64, 2], dtype=np.int64)
    # a count outside [0, 64) gives 0 (and -1 for >> of a negative value); >> is arithmetic
    assert run_one(left, np.dtype(np.int64), a, b).tolist() == [
        0, 0, -8 << 40, 0, MIN64, 0, 0, 0, 12,
    ]  # fmt: skip
    assert run_one(right, np.dtype(np.int64), a, b).tolist() == [
        0, -1, -1, MIN64 >> 1, 0, 0, 0, -1, 0,
    ]  # fmt: skip


def test_gamma_is_the_gamma_function_with_tgammas_special_values():
    x = np.array([0.5, 5.0, 0.0, -0.0, -1.0, -2.5, math.inf, -math.inf, math.nan, 200.0])
    with np.errstate(all="ignore"):
        values = semantics.gamma(x)
    assert values.dtype == np.float64
    assert values[0] == math.gamma(0.5) and values[1] == 24.0 and values[5] == math.gamma(-2.5)
    assert values[2] == math.inf and values[3] == -math.inf
    assert np.isnan(values[[4, 7, 8]]).all()
    assert values[6] == math.inf and values[9] == math.inf
    with np.errstate(all="ignore"):
        single = semantics.gamma(np.float32(40.0))  # finite in double, inf in float32
    assert isinstance(single, np.float32) and single == np.inf
    assert semantics.gamma(np.float64(3.0)) == 2.0


def test_folding_a_division_by_a_zero_literal_gives_numpys_value():
    seven, zero = ir.Literal(7, sc.int32), ir.Literal(0, sc.int32)
    for op in ("floordiv", "mod"):
        assert fold_constants(ir.Binary(op, seven, zero, sc.int32)) == ir.Literal(0, sc.int32)
    big = ir.Literal(40, sc.int32)
    assert fold_constants(ir.Binary("lshift", seven, big, sc.int32)) == ir.Literal(0, sc.int32)
