"""What running icon4py's own stencils through scripts/icon4py_coverage.py found wrong in the
compatible front end (docs/guide/icon4py-coverage.md), each as a minimal gt4py program
written here, embedded; all fixed (tests/compat/test_icon4py_spellings.py runs them on every
CPU toolchain)."""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import pytest

import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import Dims, Field

Cell = gtx.Dimension("Cell")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)


def test_program_parameters_annotated_with_python_scalar_types() -> None:
    @gtx.field_operator
    def _scaled(a: Field[Dims[Cell], float], x: float, flag: bool) -> Field[Dims[Cell], float]:
        return a * x if flag else a

    @gtx.program
    def scaled(a: Field[Dims[Cell], float], out: Field[Dims[Cell], float], x: float, flag: bool):
        _scaled(a, x, flag, out=out)

    a, out = np.arange(4.0), np.zeros(4)
    scaled(a, out, 3.0, True, offset_provider={})
    np.testing.assert_array_equal(out, 3.0 * a)
    scaled(a, out, 3.0, False, offset_provider={})
    np.testing.assert_array_equal(out, a)


T = TypeVar("T", np.float64, np.float32)
F64_CK = Field[Dims[Cell, K], gtx.float64]
F64_C = Field[Dims[Cell], gtx.float64]
edge = gtx.Dimension("Edge")
e2c_dim = gtx.Dimension("E2C", gtx.DimensionKind.LOCAL)


def test_generic_field_type_alias_over_a_typevar() -> None:
    cell_k_field = Field[Dims[Cell, K], T]  # type: ignore[valid-type]
    assert cell_k_field[np.float64] == Field[Dims[Cell, K], np.float64]


def test_scan_parameters_annotated_with_numpy_scalar_types() -> None:
    @gtx.scan_operator(axis=K, forward=True, init=0.0)
    def _running_sum(state: gtx.float64, a: gtx.float64) -> gtx.float64:
        return state + a

    @gtx.field_operator
    def _column_sums(a: Field[Dims[Cell, K], gtx.float64]) -> Field[Dims[Cell, K], gtx.float64]:
        return _running_sum(a)

    @gtx.program
    def column_sums(a: Field[Dims[Cell, K], gtx.float64], out: Field[Dims[Cell, K], gtx.float64]):
        _column_sums(a, out=out)

    a, out = np.arange(12.0).reshape(3, 4), np.zeros((3, 4))
    column_sums(a, out, offset_provider={})
    np.testing.assert_array_equal(out, np.cumsum(a, axis=1))


def test_power_of_a_float_field_by_an_int_literal() -> None:
    @gtx.field_operator
    def _square(a: Field[Dims[Cell], gtx.float64]) -> Field[Dims[Cell], gtx.float64]:
        return a**2

    @gtx.program
    def square(a: Field[Dims[Cell], gtx.float64], out: Field[Dims[Cell], gtx.float64]):
        _square(a, out=out)

    a, out = np.arange(4.0), np.zeros(4)
    square(a, out, offset_provider={})
    np.testing.assert_array_equal(out, a**2)


def test_error_of_a_local_reduction_without_its_table_points_at_the_definition() -> None:
    """(A slot read without its table, `w[e2c_dim(0)]`, was the finding; it runs now:
    tests/compat/test_local_slots_without_table.py.)"""

    @gtx.field_operator
    def _first(w: Field[Dims[edge, e2c_dim], float]) -> Field[Dims[edge], float]:
        return gtx.neighbor_sum(w, axis=e2c_dim)

    @gtx.program
    def first(w: Field[Dims[edge, e2c_dim], float], out: Field[Dims[edge], float]):
        _first(w, out=out)

    definitions = {
        _first.definition.__code__.co_firstlineno + 2,  # the reduction
        first.definition.__code__.co_firstlineno,
    }
    with pytest.raises(gtx.DefinitionError, match="reduces over E2C") as caught:
        first(np.ones((5, 2)), np.zeros(5), offset_provider={})
    assert caught.value.location is not None
    assert caught.value.location[1] in definitions


def test_tuple_of_domains_for_fields_over_the_same_dimensions() -> None:
    @gtx.field_operator
    def _twice_and_thrice(a: F64_CK) -> tuple[F64_CK, F64_CK]:
        return 2.0 * a, 3.0 * a

    @gtx.program
    def twice_and_thrice(a: F64_CK, x: F64_CK, y: F64_CK, start: gtx.int32, stop: gtx.int32):
        _twice_and_thrice(
            a,
            out=(x, y),
            domain=({Cell: (start, stop), K: (0, 4)}, {Cell: (start, stop), K: (1, 4)}),
        )

    a, x, y = np.arange(12.0).reshape(3, 4), np.zeros((3, 4)), np.zeros((3, 4))
    twice_and_thrice(a, x, y, np.int32(0), np.int32(3), offset_provider={})
    np.testing.assert_array_equal(x, 2.0 * a)
    np.testing.assert_array_equal(y[:, 1:], 3.0 * a[:, 1:])
    np.testing.assert_array_equal(y[:, 0], 0.0)


def test_math_function_of_a_literal() -> None:
    @gtx.field_operator
    def _times_hundred(a: F64_C) -> F64_C:
        return a * gtx.exp(2.0 * gtx.log(gtx.float64("10.0")))

    @gtx.program
    def times_hundred(a: F64_C, out: F64_C):
        _times_hundred(a, out=out)

    a, out = np.arange(4.0), np.zeros(4)
    times_hundred(a, out, offset_provider={})
    np.testing.assert_allclose(out, 100.0 * a, rtol=1e-14)
