"""The one C++ expression emitter (steps/cpp/expressions.py), on small IR expressions: the
literals of each dtype, reads moved by shifts, infix and wrapping arithmetic, `where`, math
calls, NumPy's integer `//` and `%`, and common-subexpression sharing."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

import stencilchain as sc
from stencilchain.program import ir
from stencilchain.steps.cpp.expressions import Absolute, ExpressionEmitter

I, J = sc.Dimension("I"), sc.Dimension("J")
F64 = ir.FieldType((I, J), sc.float64)
F32 = ir.FieldType((I, J), sc.float32)
I32 = ir.FieldType((I, J), sc.int32)
B = ir.FieldType((I, J), sc.bool_)


def read(name: str, pos: Mapping[sc.Dimension, int | Absolute]) -> str:
    """A field read as `name[i, j]`, with the offsets of the position."""
    return f"{name}[{pos.get(I, 0)}, {pos.get(J, 0)}]"


def emitter(**policy: bool) -> ExpressionEmitter:
    return ExpressionEmitter(read, lambda name: f"s_{name}", **{"cse": True, **policy})


def emitted(expr: ir.Expr, **policy: bool) -> tuple[str, list[str]]:
    """The C++ value of `expr` at the current point, and the statements before it."""
    e = emitter(**policy)
    value = e.emit(expr, {})
    return value, e.statements


@pytest.mark.parametrize(
    ("value", "dtype", "hex_text", "decimal_text"),
    [
        (0.1, sc.float64, "0x1.999999999999ap-4", "0.1"),
        (-2.5, sc.float64, "-0x1.4000000000000p+1", "(-2.5)"),
        (0.1, sc.float32, "static_cast<float>(0x1.999999999999ap-4)", "static_cast<float>(0.1)"),
        (7, sc.int32, "static_cast<std::int32_t>(7LL)", "static_cast<std::int32_t>(7LL)"),
        (
            -(2**63),
            sc.int64,
            "static_cast<std::int64_t>((-9223372036854775807LL - 1))",
            "static_cast<std::int64_t>((-9223372036854775807LL - 1))",
        ),
        (True, sc.bool_, "true", "true"),
    ],
)
def test_literals_in_their_dtype(
    value: float, dtype: sc.ScalarType, hex_text: str, decimal_text: str
) -> None:
    literal = ir.Literal(value, dtype)
    assert emitted(literal) == (hex_text, [])  # in place: no statement
    assert emitted(literal, decimal_literals=True) == (decimal_text, [])


def test_reads_are_in_place_and_shifts_move_them() -> None:
    f = ir.Ref("f", F64)
    assert emitted(f) == ("f[0, 0]", [])
    assert emitted(ir.Shift(f, ((I, 1), (J, -2)), F64)) == ("f[1, -2]", [])
    assert emitted(ir.Ref("alpha", sc.float64)) == ("s_alpha", [])


def test_a_binary_operation_is_one_statement() -> None:
    f, g = ir.Ref("f", F64), ir.Ref("g", F64)
    assert emitted(ir.Binary("add", f, ir.Shift(g, ((I, 1),), F64), F64)) == (
        "t0",
        ["const double t0 = (f[0, 0] + g[1, 0]);"],
    )
    a, b = ir.Ref("a", I32), ir.Ref("b", I32)
    assert emitted(ir.Binary("mul", a, b, I32)) == (
        "t0",
        [
            "const std::int32_t t0 = static_cast<std::int32_t>("
            "static_cast<std::uint32_t>(a[0, 0]) * static_cast<std::uint32_t>(b[0, 0]));"
        ],
    )  # wraps around, as NumPy's int32 does


def test_where_of_a_field_condition_is_a_select() -> None:
    cond = ir.Binary("lt", ir.Ref("f", F64), ir.Literal(0.0, sc.float64), B)
    where = ir.Where(cond, ir.Ref("f", F64), ir.Ref("g", F64), F64)
    assert emitted(where) == (
        "t1",
        ["const bool t0 = (f[0, 0] < 0x0.0p+0);", "const double t1 = (t0 ? f[0, 0] : g[0, 0]);"],
    )


def test_math_calls() -> None:
    f = ir.Ref("f", F32)
    assert emitted(ir.MathCall("sqrt", (f,), F32)) == (
        "t0",
        ["const float t0 = std::sqrt(f[0, 0]);"],
    )
    assert emitted(ir.MathCall("minimum", (f, ir.Ref("g", F32)), F32))[1] == [
        "const float t0 = ((f[0, 0] != f[0, 0] || g[0, 0] != g[0, 0]) ? f[0, 0] + g[0, 0] : "
        "(g[0, 0] < f[0, 0] ? g[0, 0] : f[0, 0]));"
    ]  # NaN propagates, as numpy.minimum


def test_integer_floordiv_and_mod_are_numpys() -> None:
    a, b = ir.Ref("a", I32), ir.Ref("b", I32)
    _, (floordiv,) = emitted(ir.Binary("floordiv", a, b, I32))
    assert floordiv == (
        "const std::int32_t t0 = (b[0, 0] == 0 ? std::int32_t(0) : b[0, 0] == -1 ? "
        "static_cast<std::int32_t>(static_cast<std::uint32_t>(0) - "
        "static_cast<std::uint32_t>(a[0, 0])) : "
        "static_cast<std::int32_t>(a[0, 0] / b[0, 0] - "
        "(((a[0, 0] % b[0, 0]) != 0 && ((a[0, 0] < 0) != (b[0, 0] < 0))) ? 1 : 0)));"
    )  # rounded towards -inf; 0 for // 0, and MIN // -1 wraps to MIN
    _, (mod,) = emitted(ir.Binary("mod", a, b, I32))
    assert mod == (
        "const std::int32_t t0 = ((b[0, 0] == 0 || b[0, 0] == -1) ? std::int32_t(0) : "
        "static_cast<std::int32_t>(((a[0, 0] % b[0, 0]) != 0 && "
        "(((a[0, 0] % b[0, 0]) < 0) != (b[0, 0] < 0))) ? "
        "(a[0, 0] % b[0, 0]) + b[0, 0] : (a[0, 0] % b[0, 0])));"
    )  # the sign of the divisor; 0 for % 0 and % -1


def test_what_both_sides_of_a_scalar_branch_share_is_emitted_before_it() -> None:
    f = ir.Ref("f", F64)
    square = ir.Binary("mul", f, f, F64)
    cond = ir.Binary("gt", ir.Ref("alpha", sc.float64), ir.Literal(0.0, sc.float64), sc.bool_)
    half = ir.Binary("mul", square, ir.Literal(0.5, sc.float64), F64)
    where = ir.Where(
        cond, ir.Binary("add", half, square, F64), ir.Binary("sub", square, f, F64), F64
    )
    for cse in (True, False):
        value, statements = emitted(where, cse=cse)
        assert value == "t2"
        # the square once, before the blocks; what only one side computes stays in it
        assert statements[:3] == [
            "const bool t0 = (s_alpha > 0x0.0p+0);",
            "const double t1 = (f[0, 0] * f[0, 0]);",
            "double t2;",
        ]
        assert sum("f[0, 0] * f[0, 0]" in line for line in statements) == 1
        assert (
            "if (t0) {" in statements
            and "    const double t3 = (t1 * 0x1.0000000000000p-1);" in statements
        )


def test_a_shared_subexpression_is_emitted_once() -> None:
    f = ir.Ref("f", F64)
    square = ir.Binary("mul", f, f, F64)
    total = ir.Binary("add", square, square, F64)
    assert emitted(total) == (
        "t1",
        ["const double t0 = (f[0, 0] * f[0, 0]);", "const double t1 = (t0 + t0);"],
    )
    # without CSE the same object is still one statement (the IR is a DAG: docs/adr/0056),
    # but an equal expression made separately is emitted again
    assert emitted(total, cse=False)[1] == [
        "const double t0 = (f[0, 0] * f[0, 0]);",
        "const double t1 = (t0 + t0);",
    ]
    twin = ir.Binary("add", square, ir.Binary("mul", f, f, F64), F64)
    assert emitted(twin, cse=False)[1] == [
        "const double t0 = (f[0, 0] * f[0, 0]);",
        "const double t1 = (f[0, 0] * f[0, 0]);",
        "const double t2 = (t0 + t1);",
    ]
    shifted = ir.Binary("add", square, ir.Shift(square, ((I, 1),), F64), F64)
    assert emitted(shifted)[1] == [  # the same node at another point is another value
        "const double t0 = (f[0, 0] * f[0, 0]);",
        "const double t1 = (f[1, 0] * f[1, 0]);",
        "const double t2 = (t0 + t1);",
    ]
