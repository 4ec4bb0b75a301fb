"""Every mistake fails with a message that names the culprit.

Definition errors also carry the file and line of the offending user code: each such
line below ends with a `# L:<name>` marker, and the tests look the line up by it.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest

import stencilchain as sc

from ._support import assert_located as assert_located_in
from ._support import marked_line

I = sc.Dimension("I")
J = sc.Dimension("J")
K = sc.Dimension("K")

F64 = sc.Field[[I, J], sc.float64]
F32 = sc.Field[[I, J], sc.float32]
I32 = sc.Field[[I, J], sc.int32]
B = sc.Field[[I, J], sc.bool_]
F64_IK = sc.Field[[I, K], sc.float64]
F64_K = sc.Field[[K], sc.float64]

HERE = os.path.abspath(__file__)


def line_of(marker: str) -> int:
    """The line of this file that ends with `# L:<marker>`."""
    return marked_line(HERE, marker)


# `err` points at the line of this file marked `# L:<marker>` (or a few lines below it)
assert_located = functools.partial(assert_located_in, path=HERE)


def assert_names(err: BaseException, *names: str) -> None:
    message = str(err)
    for name in names:
        assert name in message, f"{name!r} not in {message!r}"


@sc.field_operator
def lap(f: F64) -> F64:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


@sc.field_operator
def copy(f: F64) -> F64:
    return f


@sc.field_operator
def pair(f: F64, g: F64) -> tuple[F64, F64]:
    return f + g, f - g


# --- definition errors in field operators ---------------------------------------------------------


def test_unknown_dimension_in_a_shift():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def shifts_k(f: F64) -> F64:
            return f(K + 1)  # L:unknown-dim

    assert_located(info.value, "unknown-dim")
    assert_names(info.value, "unknown dimension K", "Field[[I, J], float64]", "I, J")


def test_adding_fields_of_different_dimensions():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def adds_dims(f: F64, g: F64_IK) -> F64:
            return f + g  # L:dims

    assert_located(info.value, "dims")
    assert_names(
        info.value,
        "`+`",
        "mismatched dimensions",
        "Field[[I, J], float64]",
        "Field[[I, K], float64]",
    )


def test_dimension_mismatch_in_where():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def where_dims(f: F64, g: F64_IK) -> F64:
            return sc.where(f > 0.0, f, g)  # L:where-dims

    assert_located(info.value, "where-dims")
    assert_names(info.value, "sc.where", "Field[[I, K], float64]")


def test_different_dtypes_without_a_cast():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def adds_dtypes(f: F64, g: F32) -> F64:
            return f * g  # L:dtypes

    assert_located(info.value, "dtypes")
    assert_names(info.value, "`*`", "mismatched dtypes float64 and float32", "sc.astype")


def test_scalar_parameter_of_another_dtype_without_a_cast():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def scales_f32(f: F32, a: sc.float64) -> F32:
            return f * a  # L:scalar-dtype

    assert_located(info.value, "scalar-dtype")
    assert_names(info.value, "float32", "scalar float64")


def test_float_literal_with_int_field():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def float_lit(a: I32) -> I32:
            return a + 1.5  # L:float-lit

    assert_located(info.value, "float-lit")
    assert_names(info.value, "literal 1.5", "int32")


@pytest.mark.parametrize("value", [2**31, -(2**31) - 1])
def test_int_literal_too_large_for_int32(value):
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def big_lit(a: I32) -> I32:
            return a * value  # L:big-lit

    assert_located(info.value, "big-lit")
    assert_names(info.value, f"literal {value}", "int32")


def test_int_literal_with_bool_field():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def bool_lit(b: B) -> B:
            return b & 1  # L:bool-lit

    assert_located(info.value, "bool-lit")
    assert_names(info.value, "literal 1", "bool")


@pytest.mark.parametrize(
    ("ftype", "value"), [("f64", 2**2000), ("f32", 2**200)], ids=["f64", "f32"]
)
def test_int_literal_not_representable_in_a_float_field(ftype, value):
    with pytest.raises(sc.DefinitionError) as info:
        if ftype == "f64":

            @sc.field_operator
            def huge_lit64(f: F64) -> F64:
                return f + value  # L:huge-lit-f64

        else:

            @sc.field_operator
            def huge_lit32(f: F32) -> F32:
                return f + value  # L:huge-lit-f32

    assert_located(info.value, f"huge-lit-{ftype}")
    assert_names(info.value, f"literal {value}")


@pytest.mark.parametrize("op", ["mul", "lt"])
def test_numpy_scalar_of_another_dtype_on_the_left(op):
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def np_left(f: F32):
            s = np.float64(0.5)
            return s * f if op == "mul" else s < f  # L:np-left

    assert_located(info.value, "np-left")
    assert_names(info.value, "mismatched dtypes", "float32", "float64")


def test_numpy_scalar_of_another_dtype_on_the_right():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def np_right(f: F32) -> F32:
            return f * np.float64(0.5)  # L:np-right

    assert_located(info.value, "np-right")
    assert_names(info.value, "mismatched dtypes float32 and float64", "np.float64(0.5)")


def test_shifting_a_scalar():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def shifts_scalar(f: F64, a: sc.float64) -> F64:
            return f + a(I + 1)  # L:shift-scalar

    assert_located(info.value, "shift-scalar")
    assert_names(info.value, "cannot shift a scalar", "float64")


def test_same_dimension_twice_in_one_shift():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def shifts_twice(f: F64) -> F64:
            return f(I + 1, I - 1)  # L:twice

    assert_located(info.value, "twice")
    assert_names(info.value, "dimension I appears twice")


def test_shift_by_something_else():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def shifts_int(f: F64) -> F64:
            return f(1)  # L:shift-int

    assert_located(info.value, "shift-int")
    assert_names(info.value, "got 1")


def test_returning_a_scalar():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator  # L:ret-scalar
        def returns_scalar(f: F64, a: sc.float64) -> F64:
            return a * 2.0

    assert_located(info.value, "ret-scalar", 1)
    assert_names(info.value, "returns_scalar", "returns a scalar float64")


@pytest.mark.parametrize("value", [1.0, "f", [1]], ids=["float", "str", "list"])
def test_returning_a_non_field(value):
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator  # L:ret-nonfield
        def returns_other(f: F64):
            return value

    assert_located(info.value, "ret-nonfield", 1)
    assert_names(info.value, "returns_other", f"returns {value!r}")


def test_returning_nothing():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator  # L:ret-none
        def returns_nothing(f: F64):
            f + 1.0

    assert_located(info.value, "ret-none", 1)
    assert_names(info.value, "returns_nothing", "returns None")


def test_returning_an_empty_tuple():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator  # L:ret-empty
        def returns_empty(f: F64):
            return ()

    assert_located(info.value, "ret-empty", 1)
    assert_names(info.value, "returns_empty", "empty tuple")


def test_return_annotation_that_does_not_match():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator  # L:ret-ann
        def returns_f64(f: F64) -> F32:
            return f

    assert_located(info.value, "ret-ann", 1)
    assert_names(info.value, "returns_f64", "Field[[I, J], float32]", "Field[[I, J], float64]")


def test_if_on_a_traced_value():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def branches(f: F64) -> F64:
            if f > 0.0:  # L:if
                return f
            return -f

    assert_located(info.value, "if")
    assert_names(info.value, "on a field", "sc.where")


def test_chained_comparison():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def chained(f: F64, g: F64) -> B:
            return 0.0 < f < g  # L:chained

    assert_located(info.value, "chained")
    assert_names(info.value, "chained comparisons")


def test_division_of_ints():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def divides_ints(a: I32, b: I32) -> I32:
            return a / b  # L:int-div

    assert_located(info.value, "int-div")
    assert_names(info.value, "`/`", "division of int32", "sc.astype")


@pytest.mark.parametrize("op", ["floordiv", "mod"])
def test_floor_division_and_modulo(op):
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def divmod_(a: F64, b: F64) -> F64:
            return a // b if op == "floordiv" else a % b  # L:divmod

    assert_located(info.value, "divmod")
    assert_names(info.value, "`//`" if op == "floordiv" else "`%`")


def test_invert_of_a_float():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def inverts(f: F64) -> F64:
            return ~f  # L:invert

    assert_located(info.value, "invert")
    assert_names(info.value, "`~` of a float64")


def test_logical_operator_on_floats():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def ands(f: F64, g: F64) -> F64:
            return f & g  # L:and

    assert_located(info.value, "and")
    assert_names(info.value, "`&`", "float64")


def test_arithmetic_and_ordering_of_bools():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def adds_bools(a: B, b: B) -> B:
            return a + b  # L:bool-add

    assert_located(info.value, "bool-add")
    assert_names(info.value, "`+`", "arithmetic on bool")
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def orders_bools(a: B, b: B) -> B:
            return a < b  # L:bool-lt

    assert_located(info.value, "bool-lt")
    assert_names(info.value, "`<`", "ordering comparison of bool")


def test_negation_of_a_bool():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def negates_bool(a: B) -> B:
            return -a  # L:bool-neg

    assert_located(info.value, "bool-neg")
    assert_names(info.value, "unary `-` of a bool")


def test_float_math_of_an_int():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def sqrt_int(a: I32) -> I32:
            return sc.math.sqrt(a)  # L:sqrt-int

    assert_located(info.value, "sqrt-int")
    assert_names(info.value, "sc.math.sqrt", "int32")


def test_math_of_literals_is_a_scalar_value():
    """gt4py accepts a math function of literals (icon4py's `log(wpfloat("10.0"))`): a
    scalar value, the same at every point."""

    @sc.field_operator
    def min_lits(f: F64) -> F64:
        return f + sc.math.minimum(1.0, 2.0) * sc.math.exp(sc.float64(0.0))

    @sc.program
    def prog(f: F64, out: F64):
        min_lits(f, out=out)

    f = np.random.default_rng(0).random((4, 5))
    out = np.zeros_like(f)
    prog(f, out)
    np.testing.assert_array_equal(out, f + 1.0)


def test_where_condition_that_is_not_bool():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def where_float(f: F64) -> F64:
            return sc.where(f, f, 0.0)  # L:where-float

    assert_located(info.value, "where-float")
    assert_names(info.value, "sc.where", "the condition is field Field[[I, J], float64]")


def test_astype_of_a_literal_and_to_a_non_dtype():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def cast_lit(f: F64) -> F64:
            return f + sc.astype(1, sc.float64)  # L:cast-lit

    assert_located(info.value, "cast-lit")
    assert_names(info.value, "sc.astype")
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def cast_np(f: F64) -> F64:
            return sc.astype(f, np.float32)  # L:cast-np

    assert_located(info.value, "cast-np")
    assert_names(info.value, "sc.astype", "float32", "is not a dtype")


def test_missing_annotation():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator  # L:no-ann
        def unannotated(f: F64, g) -> F64:
            return f + g

    assert_located(info.value, "no-ann", 1)
    assert_names(info.value, "unannotated", "parameter 'g' needs an annotation")


def test_annotation_that_is_not_a_dsl_type():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator  # L:bad-ann
        def numpy_annotated(f: F64, a: np.ndarray) -> F64:  # `float` is a float64 scalar
            return f * a

    assert_located(info.value, "bad-ann", 1)
    assert_names(info.value, "numpy_annotated", "parameter 'a'", "ndarray")


def test_field_operator_called_with_numpy_arrays():
    with pytest.raises(sc.DefinitionError) as info:
        lap(np.zeros((4, 4)))  # L:direct-call

    assert_located(info.value, "direct-call")
    assert_names(info.value, "field operator lap", "ndarray", "@program")


def test_field_operator_called_with_a_wrong_field_inside_another():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def calls_lap_f32(g: F32) -> F64:
            return lap(g)  # L:inner-arg

    assert_located(info.value, "inner-arg")
    assert_names(
        info.value, "argument 'f' of lap", "Field[[I, J], float64]", "Field[[I, J], float32]"
    )


def test_field_operator_called_with_out_inside_another():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def calls_with_out(f: F64, g: F64) -> F64:
            return lap(f, out=g)  # L:inner-out

    assert_located(info.value, "inner-out")
    assert_names(info.value, "field operator lap", "out=")


# --- definition errors in programs -------------------------------------------------------------------------


def test_program_writing_a_field_it_reads_at_an_offset_reads_it_from_before_the_call():
    """Was a DefinitionError ("writes 'f', which it also reads at offsets"); the call now
    reads a snapshot of f (docs/adr/0042; every toolchain:
    tests/runtime/test_in_place_calls_compiled.py)."""

    @sc.program
    def lap_in_place(f: F64):
        lap(f, out=f)

    f = np.random.default_rng(0).random((6, 5))
    expected = f.copy()
    expected[1:-1, 1:-1] = (
        -4.0 * f[1:-1, 1:-1] + f[2:, 1:-1] + f[:-2, 1:-1] + f[1:-1, 2:] + f[1:-1, :-2]
    )
    lap_in_place(f)
    np.testing.assert_array_equal(f, expected)


def test_program_writing_one_of_its_tuple_outputs_read_at_an_offset_reads_the_old_values():
    @sc.field_operator
    def shifted_pair(f: F64, g: F64) -> tuple[F64, F64]:
        return f(J + 1), g

    @sc.program
    def pair_in_place(f: F64, g: F64):
        shifted_pair(f, g, out=(g, f))

    rng = np.random.default_rng(1)
    f, g = rng.random((4, 5)), rng.random((4, 5))
    expected_f, expected_g = f.copy(), g.copy()
    expected_g[:, :-1] = f[:, 1:]
    expected_f[:, :-1] = g[:, :-1]
    pair_in_place(f, g)
    np.testing.assert_array_equal(f, expected_f)
    np.testing.assert_array_equal(g, expected_g)


def test_missing_out():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def no_out(f: F64, o: F64):
            lap(f)  # L:no-out

    assert_located(info.value, "no-out")
    assert_names(
        info.value,
        "call of lap in program no_out",
        "temporary 'tmp0'",
        "no later call reads",
        "out=",
    )


@pytest.mark.parametrize("target", ["scalar", "f32"])
def test_wrong_out_type(target):
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def wrong_out(f: F64, s: sc.float64, o: F32):
            copy(f, out=s if target == "scalar" else o)  # L:wrong-out

    assert_located(info.value, "wrong-out")
    got = "float64" if target == "scalar" else "Field[[I, J], float32]"
    assert_names(
        info.value, "call of copy in program wrong_out", "Field[[I, J], float64]", f"got {got}"
    )


@pytest.mark.parametrize("target", ["scalar", "f32"])
def test_wrong_out_type_names_the_out_argument(target):
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def wrong_out_named(f: F64, the_scalar: sc.float64, the_f32: F32):
            copy(f, out=the_scalar if target == "scalar" else the_f32)

    assert_names(info.value, "'the_scalar'" if target == "scalar" else "'the_f32'")


def test_out_that_is_not_a_program_field():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def out_literal(f: F64):
            copy(f, out=1.0)  # L:out-literal

    assert_located(info.value, "out-literal")
    assert_names(info.value, "out=", "got 1.0")


@pytest.mark.parametrize("outs", ["one", "three"])
def test_out_tuple_arity_mismatch(outs):
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def arity(f: F64, g: F64, a: F64, b: F64, c: F64):
            pair(f, g, out=a if outs == "one" else (a, b, c))  # L:arity

    assert_located(info.value, "arity")
    assert_names(info.value, "call of pair in program arity", "a tuple of 2 fields")


def test_tuple_out_for_a_single_field():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def single_as_tuple(f: F64, a: F64, b: F64):
            copy(f, out=(a, b))  # L:single-tuple

    assert_located(info.value, "single-tuple")
    assert_names(info.value, "copy returns Field[[I, J], float64]", "one field")


def test_same_field_twice_in_out():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def twice_out(f: F64, g: F64, a: F64):
            pair(f, g, out=(a, a))  # L:twice-out

    assert_located(info.value, "twice-out")
    assert_names(info.value, "'a' appears twice")


def test_tuple_return_over_different_dimensions_inside_a_field_operator():
    # a program writes such a tuple, each field over its own domain
    # (tests/program/test_tuple_results_own_domains.py); a field operator cannot use it
    @sc.field_operator
    def mixed_dims(f: F64, g: F64_K):
        return f + 1.0, g * 2.0

    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def uses_mixed(f: F64, g: F64_K):
            return mixed_dims(f, g)[0]  # L:uses-mixed

    assert_located(info.value, "uses-mixed")
    assert_names(info.value, "mixed_dims", "Field[[K], float64]", "@program")


def test_domain_on_a_dimension_not_in_the_output():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def domain_k(f: F64, o: F64):
            copy(f, out=o, domain={K: (0, None)})  # L:domain-k

    assert_located(info.value, "domain-k")
    assert_names(info.value, "domain names K", "I, J")


def test_domain_stop_zero():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def stop_zero(f: F64, o: F64):
            copy(f, out=o, domain={I: (0, 0)})  # L:stop-zero

    assert_located(info.value, "stop-zero")
    assert_names(info.value, "domain of I has stop 0", "None")


@pytest.mark.parametrize("value", [(0,), (0.5, None), [1, 2], (None, 3), (True, 3)], ids=str)
def test_domain_that_is_not_a_pair_of_ints(value):
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def bad_domain(f: F64, o: F64):
            copy(f, out=o, domain={J: value})  # L:bad-domain

    assert_located(info.value, "bad-domain")
    assert_names(info.value, "domain of J", repr(value))


def test_domain_that_is_not_a_dict():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def domain_list(f: F64, o: F64):
            copy(f, out=o, domain=[(0, None)])  # L:domain-list

    assert_located(info.value, "domain-list")
    assert_names(info.value, "domain= must be a dict")


@pytest.mark.parametrize(
    ("domain", "needle"),
    [
        ({I: (0, -1)}, "domain of I starts at 0 but the call reads I-1"),
        ({J: (1, None)}, "domain of J stops at end but the call reads J+1"),
    ],
    ids=["start", "stop-none"],
)
def test_explicit_domain_reading_outside_the_array(domain, needle):
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def outside(f: F64, o: F64):
            lap(f, out=o, domain=domain)  # L:outside

    assert_located(info.value, "outside")
    assert_names(info.value, "call of lap in program outside", needle)


@pytest.mark.parametrize("expr", ["add", "neg", "shift", "compare"])
def test_arithmetic_on_program_parameters(expr):
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def arith(field_in: F64, o: F64):
            if expr == "add":
                copy(field_in + 1.0, out=o)  # L:prog-add
            elif expr == "neg":
                copy(-field_in, out=o)  # L:prog-neg
            elif expr == "shift":
                copy(field_in(I + 1), out=o)  # L:prog-shift
            else:
                copy(field_in < 0.0, out=o)  # L:prog-compare

    assert_located(info.value, f"prog-{expr}")
    assert_names(info.value, "program parameter 'field_in'", "@field_operator")


def test_program_returning_a_value():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program  # L:prog-returns
        def returns(f: F64, o: F64):
            copy(f, out=o)
            return o

    assert_located(info.value, "prog-returns", 1)
    assert_names(info.value, "program returns", "out=")


def test_program_calling_nothing():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program  # L:prog-empty
        def empty(f: F64):
            pass

    assert_located(info.value, "prog-empty", 1)
    assert_names(info.value, "program empty calls no field operator")


def test_program_missing_annotation():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program  # L:prog-no-ann
        def unannotated_prog(f: F64, o):
            copy(f, out=o)

    assert_located(info.value, "prog-no-ann", 1)
    assert_names(info.value, "program unannotated_prog", "parameter 'o'")


def test_program_passing_a_wrong_field_type():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def passes_f32(g: F32, o: F64):
            copy(g, out=o)  # L:prog-arg

    assert_located(info.value, "prog-arg")
    assert_names(
        info.value,
        "argument 'f' of copy",
        "expected Field[[I, J], float64]",
        "Field[[I, J], float32]",
    )


def test_program_passing_a_scalar_of_another_dtype():
    @sc.field_operator
    def scale(f: F64, a: sc.float64) -> F64:
        return f * a

    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def passes_int(f: F64, k: sc.int32, o: F64):
            scale(f, k, out=o)  # L:prog-scalar

    assert_located(info.value, "prog-scalar")
    assert_names(info.value, "argument 'a' of scale", "float64", "int32")


def test_program_calling_with_a_wrong_number_of_arguments():
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def too_few(f: F64, o: F64):
            pair(f, out=(o, o))  # L:too-few

    assert_located(info.value, "too-few")
    assert_names(info.value, "field operator pair", "'g'")


def test_two_different_field_operators_of_the_same_name():
    def make(scale):
        @sc.field_operator
        def twin(f: F64) -> F64:
            return f * scale

        return twin

    first, second = make(1.0), make(2.0)
    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def twins(f: F64, a: F64, b: F64):
            first(f, out=a)
            second(f, out=b)  # L:twins

    assert_located(info.value, "twins")
    assert_names(info.value, "two different field operators are named twin")


# --- call errors ---------------------------------------------------------------------------------


@sc.field_operator
def smooth_op(f: F64, alpha: sc.float64) -> F64:
    return f + alpha * lap(f)


@sc.program
def smooth(f: F64, out: F64, alpha: sc.float64):
    smooth_op(f, alpha, out=out)


@sc.field_operator
def scale_f32(f: F32, a: sc.float32) -> F32:
    return f * a


@sc.field_operator
def shift_i32(f: I32, k: sc.int32) -> I32:
    return f(I + 1) + k


@sc.program
def typed_scalars(f: F32, a: sc.float32, g: I32, k: sc.int32, o32: F32, oi: I32):
    scale_f32(f, a, out=o32)
    shift_i32(g, k, out=oi)


def _smooth_args():
    f = np.random.default_rng(0).random((6, 7))
    return f, np.zeros_like(f), 0.5


def test_argument_error_is_a_type_and_value_error():
    assert issubclass(sc.ArgumentError, TypeError)
    assert issubclass(sc.ArgumentError, ValueError)


@pytest.mark.parametrize("count", [2, 4])
def test_wrong_argument_count(count):
    args = (*_smooth_args(), 1.0)[:count]
    with pytest.raises(sc.ArgumentError) as info:
        smooth(*args)
    assert_names(info.value, "smooth()", "takes 3 arguments", "(f, out, alpha)", f"got {count}")


@pytest.mark.parametrize("shape", [(6,), (6, 7, 1)])
def test_wrong_ndim(shape):
    _, out, alpha = _smooth_args()
    with pytest.raises(sc.ArgumentError) as info:
        smooth(np.zeros(shape), out, alpha)
    assert_names(
        info.value, "argument 'f' of smooth()", "expected 2 dimension(s)", "(I, J)", str(shape)
    )


def test_wrong_dtype_is_never_converted():
    f, out, alpha = _smooth_args()
    with pytest.raises(sc.ArgumentError) as info:
        smooth(f.astype(np.float32), out, alpha)
    assert_names(info.value, "argument 'f' of smooth()", "expected dtype float64", "got float32")
    assert not out.any()
    with pytest.raises(sc.ArgumentError) as info:
        smooth(f, out.astype(np.float32), alpha)
    assert_names(info.value, "argument 'out' of smooth()", "float32")
    with pytest.raises(sc.ArgumentError) as info:
        smooth(f, out.astype(">f8"), alpha)
    assert_names(info.value, "argument 'out' of smooth()")


def test_shapes_that_differ_are_fields_over_their_own_ranges():
    # each field over its own range (tests/program/test_own_ranges.py): a larger `out`
    # is written where the reads of `f` stay inside `f`; a domain beyond is named
    f, _, alpha = _smooth_args()
    out = np.zeros((6, 8))
    smooth(f, out, alpha)
    same = np.zeros_like(f)
    smooth(f, same, alpha)
    np.testing.assert_array_equal(out[:, :7], same)
    assert not out[:, 7].any()
    with pytest.raises(sc.DomainError) as info:
        smooth_everywhere(f, np.zeros((6, 8)), alpha)
    assert_names(info.value, "argument 'f'", "leaves its range [0, 7) along J")


@sc.program
def smooth_everywhere(f: F64, out: F64, alpha: sc.float64):
    smooth_op(f, alpha, out=out, domain={I: (1, -1), J: (1, -1)})


def test_read_only_output():
    f, out, alpha = _smooth_args()
    out.flags.writeable = False
    with pytest.raises(sc.ArgumentError) as info:
        smooth(f, out, alpha)
    assert_names(info.value, "argument 'out' of smooth()", "read-only")


@pytest.mark.parametrize(
    "value", [[[1.0, 2.0]], (1.0,), 1.0, None], ids=["list", "tuple", "float", "None"]
)
def test_non_array_for_a_field(value):
    _, out, alpha = _smooth_args()
    with pytest.raises(sc.ArgumentError) as info:
        smooth(value, out, alpha)
    assert_names(
        info.value, "argument 'f' of smooth()", "expected a numpy array", type(value).__name__
    )


@pytest.mark.parametrize(
    ("value", "needle"),
    [("0.5", "str '0.5'"), (None, "NoneType"), (True, "bool True"), (np.array(0.5), "ndarray")],
    ids=["str", "None", "bool", "0d-array"],
)
def test_scalar_of_wrong_type(value, needle):
    f, out, _ = _smooth_args()
    with pytest.raises(sc.ArgumentError) as info:
        smooth(f, out, value)
    assert_names(info.value, "argument 'alpha' of smooth()", "expected a float64 scalar", needle)


def _typed_args():
    rng = np.random.default_rng(1)
    f = rng.random((5, 6), dtype=np.float32)
    g = rng.integers(0, 9, (5, 6)).astype(np.int32)
    return [f, np.float32(0.5), g, 3, np.zeros_like(f), np.zeros_like(g)]


@pytest.mark.parametrize(
    ("index", "name", "value", "needles"),
    [
        (1, "a", np.float64(0.5), ["float32 scalar", "of dtype float64"]),
        (1, "a", "x", ["float32 scalar", "str 'x'"]),
        (3, "k", 1.5, ["int32 scalar", "float 1.5"]),
        (3, "k", 2**31, ["int32 scalar", str(2**31)]),
        (3, "k", -(2**31) - 1, ["int32 scalar", str(-(2**31) - 1)]),
        (3, "k", np.int64(3), ["int32 scalar", "of dtype int64"]),
        (3, "k", True, ["int32 scalar", "bool True"]),
    ],
    ids=["np.float64", "str", "float-for-int", "int32-max+1", "int32-min-1", "np.int64", "bool"],
)
def test_typed_scalar_of_wrong_type(index, name, value, needles):
    args = _typed_args()
    args[index] = value
    with pytest.raises(sc.ArgumentError) as info:
        typed_scalars(*args)
    assert_names(info.value, f"argument '{name}' of typed_scalars()", *needles)
    assert not args[4].any() and not args[5].any()  # checked before any work


@pytest.mark.parametrize(
    ("index", "value"),
    [(1, 0.5), (1, 2), (1, np.float32(1.5)), (3, 2**31 - 1), (3, -(2**31)), (3, np.int32(4))],
)
def test_typed_scalar_of_right_type(index, value):
    args = _typed_args()
    args[index] = value
    typed_scalars(*args)
    assert args[5][:-1].any()


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@pytest.mark.parametrize(("index", "name", "value"), [(1, "a", 10**40)], ids=["1e40-for-float32"])
def test_int_not_representable_in_a_float_parameter(index, name, value):
    args = _typed_args()
    args[index] = value
    with pytest.raises(sc.ArgumentError) as info:
        typed_scalars(*args)
    assert_names(info.value, f"argument '{name}' of typed_scalars()")


def test_int_too_large_for_a_float64_parameter():
    f, out, _ = _smooth_args()
    with pytest.raises(sc.ArgumentError) as info:
        smooth(f, out, 10**400)
    assert_names(info.value, "argument 'alpha' of smooth()")


def test_argument_errors_come_before_any_work():
    @sc.program
    def two_calls(f: F64, tmp: F64, out: F64, alpha: sc.float64):
        lap(f, out=tmp)
        smooth_op(tmp, alpha, out=out)

    f, tmp, alpha = _smooth_args()
    with pytest.raises(sc.ArgumentError) as info:
        two_calls(f, tmp, np.zeros((6, 7), np.float32), alpha)
    assert_names(info.value, "argument 'out' of two_calls()")
    assert not tmp.any()


# --- domain errors at call time --------------------------------------------------------------------


@sc.program
def absolute_stop(f: F64, o: F64):
    lap(f, out=o, domain={I: (1, 8)})


@sc.program
def from_end_start(f: F64, o: F64):
    copy(f, out=o, domain={J: (-10, None)})


@pytest.mark.parametrize("rows", [8, 6])
def test_absolute_stop_reading_outside_a_too_small_array(rows):
    f, o = np.ones((rows, 5)), np.zeros((rows, 5))
    with pytest.raises(sc.DomainError) as info:
        absolute_stop(f, o)
    assert_names(info.value, "call of lap in absolute_stop()", "domain I", "[1, 8)", f"size {rows}")
    assert not o.any()


def test_absolute_stop_within_a_large_enough_array():
    f = np.random.default_rng(3).random((9, 5))
    o = np.full_like(f, np.nan)
    absolute_stop(f, o)
    expected = -4.0 * f[1:8, 1:-1] + f[2:9, 1:-1] + f[0:7, 1:-1] + f[1:8, 2:] + f[1:8, :-2]
    np.testing.assert_array_equal(o[1:8, 1:-1], expected)
    assert np.isnan(o[[0, 8]]).all() and np.isnan(o[:, [0, -1]]).all()


def test_from_end_start_before_the_array():
    f, o = np.ones((4, 5)), np.zeros((4, 5))
    with pytest.raises(sc.DomainError) as info:
        from_end_start(f, o)
    assert_names(info.value, "call of copy in from_end_start()", "domain J", "size 5")
    f, o = np.ones((4, 12)), np.zeros((4, 12))
    from_end_start(f, o)
    assert (o[:, 2:] == 1.0).all() and not o[:, :2].any()
