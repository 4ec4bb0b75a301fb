"""Broadcasting: a field over a subset of another's dimensions combines with it, and
`sc.broadcast(x, dims)` makes it explicit (also for scalars and literals). The typing rule,
and the misuse errors (at the user's line). The values, on the embedded executor and on
every CPU toolchain against NumPy: tests/runtime/test_broadcasting_compiled.py.
"""

from __future__ import annotations

import functools
import os

import pytest

import stencilchain as sc
from stencilchain.program import ir

from ._support import assert_located as assert_located_in

I = sc.Dimension("I")
J = sc.Dimension("J")
K = sc.Dimension("K")

F3 = sc.Field[[I, J, K], sc.float64]
FK = sc.Field[[K], sc.float64]
FI = sc.Field[[I], sc.float64]
FJ = sc.Field[[J], sc.float64]
FIJ = sc.Field[[I, J], sc.float64]
FJI = sc.Field[[J, I], sc.float64]
FKI = sc.Field[[K, I], sc.float64]
FK32 = sc.Field[[K], sc.float32]
BK = sc.Field[[K], sc.bool_]

HERE = os.path.abspath(__file__)


def body(fop: sc.FieldOperator) -> ir.Expr:
    return fop.definition.body


# --- the typing rule ------------------------------------------------------------------------------


def test_the_result_has_the_dimensions_of_the_widest_operand():
    @sc.field_operator
    def scaled(nu: FK, f: F3, ki: FKI):
        return nu * f, f * nu, ki + f, sc.math.maximum(nu, f), sc.where(nu > 0.0, f, nu)

    elems = body(scaled).elems  # type: ignore[union-attr]
    assert all(elem.type.dims == (I, J, K) for elem in elems)
    wide = ir.FieldType((I, J, K), sc.float64)
    assert elems[0] == ir.Binary(
        "mul", ir.Broadcast(ir.Ref("nu", FK_TYPE), wide), ir.Ref("f", wide), wide
    )
    assert elems[1].right == ir.Broadcast(ir.Ref("nu", FK_TYPE), wide)

    @sc.field_operator
    def alone(nu: FK) -> FK:
        return nu * nu + 1.0

    assert "Broadcast" not in repr(body(alone))


FK_TYPE = ir.FieldType((K,), sc.float64)


def test_explicit_broadcast_of_fields_scalars_and_literals():
    @sc.field_operator
    def filled(a: FI, b: FJ, g: FIJ, alpha: sc.float64):
        return (
            sc.broadcast(a, (I, J)) * b,
            sc.broadcast(alpha, (I, J)),
            sc.broadcast(1.5, (I, J)),
            sc.broadcast(g, (I, J)),
        )

    elems = body(filled).elems  # type: ignore[union-attr]
    assert [e.type.dims for e in elems] == [(I, J)] * 4
    assert elems[2] == ir.Broadcast(ir.Literal(1.5, sc.float64), ir.FieldType((I, J), sc.float64))
    assert elems[3] == ir.Ref("g", ir.FieldType((I, J), sc.float64))  # already over (I, J)

    @sc.field_operator
    def transposed(a: FI) -> FJI:
        return sc.broadcast(a, (J, I))

    assert body(transposed).type == ir.FieldType((J, I), sc.float64)


def test_a_broadcast_field_can_be_shifted_along_any_of_its_dimensions():
    @sc.field_operator
    def shifted(nu: FK) -> F3:
        wide = sc.broadcast(nu, (I, J, K))
        return wide(I + 1) + wide(K - 1)

    text = str(body(shifted))
    assert "Shift" in text and "Broadcast" in text


# --- misuse ------------------------------------------------------------------------------------------


# `err` points at the line of this file marked `# L:<marker>` (or a few lines below it)
assert_located = functools.partial(assert_located_in, path=HERE)


MISUSE = {
    "disjoint": (
        lambda v: v["a"] * v["b"],
        (
            "mismatched dimensions",
            "Field[[I], float64]",
            "Field[[J], float64]",
            "sc.broadcast(x, (I, J))",
        ),
    ),
    "not-nested": (
        lambda v: v["ki"] * v["ij"],
        # in the order of the operator's parameters (F3 is over I, J, K), not the operands'
        ("mismatched dimensions", "a subset of them", "sc.broadcast(x, (I, J, K))"),
    ),
    "same-dims-other-order": (
        lambda v: v["ij"] + v["ji"],
        ("mismatched dimensions", "in the same order"),
    ),
    "broadcast-to-a-subset": (
        lambda v: sc.broadcast(v["ij"], (I,)),
        ("sc.broadcast of field Field[[I, J], float64] to (I)", "the target lacks J"),
    ),
    "broadcast-not-dims": (
        lambda v: sc.broadcast(v["a"], ("I", "J")),
        ("the dimensions must be a tuple of sc.Dimension",),
    ),
    "broadcast-twice-the-same": (
        lambda v: sc.broadcast(v["a"], (I, I)),
        ("must be distinct",),
    ),
    "dtype": (lambda v: v["nu32"] * v["f"], ("mismatched dtypes float32 and float64",)),
    "shift-outside": (
        lambda v: v["nu"](I + 1),
        ("unknown dimension I in a shift of Field[[K], float64]",),
    ),
}


@pytest.mark.parametrize("case", sorted(MISUSE))
def test_misuse(case):
    make, parts = MISUSE[case]
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def traced(a: FI, b: FJ, ij: FIJ, ji: FJI, ki: FKI, nu: FK, nu32: FK32, f: F3):
            return make(locals())

    assert info.value.location is not None  # the line that made the error: the lambda's
    path, line = info.value.location
    assert (os.path.abspath(path), line) == (HERE, make.__code__.co_firstlineno)
    for part in parts:
        assert part in str(info.value), f"{part!r} not in {info.value}"


def test_a_call_argument_is_not_broadcast_implicitly():
    @sc.field_operator
    def lap(f: F3) -> F3:
        return f(I + 1) + f(I - 1) - 2.0 * f

    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def caller(nu: FK) -> F3:
            return lap(nu)  # L:call-arg

    assert_located(info.value, "call-arg")
    assert "pass sc.broadcast(x, (I, J, K))" in str(info.value)


def test_an_output_over_other_dimensions_is_an_error():
    @sc.field_operator
    def scaled(nu: FK, f: F3) -> F3:
        return nu * f

    with pytest.raises(sc.DefinitionError):

        @sc.program
        def writes_k(nu: FK, f: F3, out: FK):
            scaled(nu, f, out=out)
