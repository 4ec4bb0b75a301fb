"""Scan operators in the DSL: what they trace to, and every misuse with its line.

Each line that an error should point at ends with a `# L:<name>` marker.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import ir

from ._support import assert_error_at

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F64 = sc.Field[[I, J, K], sc.float64]
F32 = sc.Field[[I, J, K], sc.float32]
F64_IJ = sc.Field[[I, J], sc.float64]

HERE = os.path.abspath(__file__)


assert_at = functools.partial(assert_error_at, path=HERE)


@sc.scan_operator(axis=K, forward=False, init=(0.0, np.float32(1)))
def pair(state, f: F64, g: F32, w: sc.float64):  # type: ignore[no-untyped-def]
    s, p = state
    return s + w * f, p * g


@sc.program
def uses_pair(f: F64, g: F32, s: F64, p: F32) -> None:
    pair(f, g, 2.0, out=(s, p))


def test_a_scan_is_one_definition_in_the_program() -> None:
    program = uses_pair.ir
    (scan,) = program.scan_operators
    assert program.field_operators == ()
    assert (scan.name, scan.axis, scan.forward, scan.tuple_state) == ("pair", K, False, True)
    assert [lit.type for lit in scan.init] == [sc.float64, sc.float32]
    assert scan.return_type == ir.TupleType((ir.FieldType((I, J, K), sc.float64), F32))
    assert program.calls[0].callee == "pair"
    assert program.scan_operator("pair") is scan
    assert "scan_operator pair" in str(program) and "backward along K" in str(program)


def test_the_scan_is_part_of_the_fingerprint() -> None:
    @sc.scan_operator(axis=K, forward=True, init=(0.0, np.float32(1)))
    def pair(state, f: F64, g: F32, w: sc.float64):  # type: ignore[no-untyped-def]
        s, p = state
        return s + w * f, p * g

    @sc.program
    def uses_pair(f: F64, g: F32, s: F64, p: F32) -> None:
        pair(f, g, 2.0, out=(s, p))

    assert uses_pair.fingerprint() != globals()["uses_pair"].fingerprint()


def test_without_out_a_scan_makes_temporaries() -> None:
    @sc.program
    def chained(f: F64, g: F32, s: F64, p: F32) -> None:
        first, second = pair(f, g, 1.0)
        pair(first, second, 1.0, out=(s, p))

    program = chained.ir
    assert [t.type for t in program.temporaries] == [ir.FieldType((I, J, K), sc.float64), F32]
    assert [call.outs for call in program.calls] == [("tmp0", "tmp1"), ("s", "p")]


def test_a_shift_in_the_body_says_to_shift_before_the_scan() -> None:
    with pytest.raises(
        sc.DefinitionError, match="shift the argument before calling the scan"
    ) as err:

        @sc.scan_operator(axis=K, init=0.0)
        def shifted(total, f: F64):  # type: ignore[no-untyped-def]
            return total + f(K - 1)  # L:shift

    assert_at(err.value, "shift")
    assert "`shifted(f(K - 1))`" in str(err.value)


def test_a_tuple_init_needs_a_tuple_result() -> None:
    with pytest.raises(sc.DefinitionError, match="a tuple of 2 scalars") as err:

        @sc.scan_operator(axis=K, init=(0.0, 0.0))  # L:tuple_result
        def one(state, f: F64):  # type: ignore[no-untyped-def]
            return state[0] + f

    assert_at(err.value, "tuple_result")


def test_a_scalar_init_needs_a_scalar_result() -> None:
    with pytest.raises(sc.DefinitionError, match="one scalar, like its init") as err:

        @sc.scan_operator(axis=K, init=0.0)  # L:scalar_result
        def two(state, f: F64):  # type: ignore[no-untyped-def]
            return state + f, state

    assert_at(err.value, "scalar_result")


def test_an_init_that_is_no_number_is_refused() -> None:
    with pytest.raises(sc.DefinitionError, match="init= must be a number") as err:

        @sc.scan_operator(axis=K, init=[0.0, 1.0])  # L:init_list
        def listed(state, f: F64):  # type: ignore[no-untyped-def]
            return state

    assert_at(err.value, "init_list")


def test_the_axis_must_be_a_dimension_of_the_fields() -> None:
    with pytest.raises(sc.DefinitionError, match="axis K is not a dimension") as err:

        @sc.scan_operator(axis=K, init=0.0)  # L:axis
        def flat(state, f: F64_IJ):  # type: ignore[no-untyped-def]
            return state + f

    assert_at(err.value, "axis")


def test_the_axis_must_be_a_dimension_object() -> None:
    with pytest.raises(sc.DefinitionError, match="axis= must be a Dimension"):

        @sc.scan_operator(axis="K", init=0.0)  # type: ignore[arg-type]
        def named(state, f: F64):  # type: ignore[no-untyped-def]
            return state + f


def test_a_result_of_another_dtype_than_the_state_is_refused() -> None:
    with pytest.raises(sc.DefinitionError, match="mismatched dtypes float64 and float32") as err:

        @sc.scan_operator(axis=K, init=0.0)  # L:dtype_result
        def wrong(state, g: F32):  # type: ignore[no-untyped-def]
            return g

    assert_at(err.value, "dtype_result")
    assert "fixed by init=" in str(err.value)


def test_mixing_the_state_with_values_of_another_dtype_is_refused() -> None:
    with pytest.raises(sc.DefinitionError, match="mismatched dtypes") as err:

        @sc.scan_operator(axis=K, init=0.0)
        def mixed(state, g: F32):  # type: ignore[no-untyped-def]
            return state + g  # L:dtype_mix

    assert_at(err.value, "dtype_mix")


def test_fields_over_different_dimensions_are_refused() -> None:
    """(An (I, J) field in an (I, J, K) scan is broadcast: tests/program/test_scan_broadcast_args.py.)"""
    with pytest.raises(sc.DefinitionError, match="over different dimensions") as err:

        @sc.scan_operator(axis=K, init=0.0)  # L:dims
        def different(state, f: sc.Field[[J, K], sc.float64], h: F64_IJ):  # type: ignore[no-untyped-def]
            return state + f

    assert_at(err.value, "dims")


def test_a_scan_called_outside_a_program_says_where_it_belongs() -> None:
    with pytest.raises(sc.DefinitionError, match="call it from a @program"):
        pair(np.zeros((2, 2, 2)), np.zeros((2, 2, 2), np.float32), 1.0)


def test_a_scan_called_inside_a_field_operator_is_a_scan_call() -> None:
    """(Lowered into program calls: tests/program/test_scans_in_field_operators.py.)"""

    @sc.field_operator
    def inside(f: F64, g: F32) -> F64:
        s, _p = pair(f, g, 1.0)
        return s  # type: ignore[no-any-return]

    assert isinstance(inside.definition.body, ir.TupleGet)
    assert isinstance(inside.definition.body.expr, ir.ScanCall)
    assert inside.scans() == {"pair": pair.definition}


def test_a_wrong_argument_of_a_scan_call_is_named() -> None:
    with pytest.raises(sc.DefinitionError, match="argument 'g' of pair"):

        @sc.program
        def wrong(f: F64, s: F64, p: F32) -> None:
            pair(f, f, 1.0, out=(s, p))
