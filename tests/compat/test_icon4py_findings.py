"""What running icon4py's own stencils through scripts/icon4py_coverage.py found wrong in the
compatible front end (docs/guide/icon4py-coverage.md), each as a minimal gt4py program
written here; xfail (strict) until fixed."""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import pytest

import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import Dims, Field

Cell = gtx.Dimension("Cell")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)


@pytest.mark.xfail(
    strict=True,
    reason="a program parameter annotated with Python's bool, float or int (gtx.bool, "
    "gtx.float: the same objects) is a DefinitionError 'needs an annotation ... got <class "
    "'bool'>', though coming-from-gt4py.md maps them to bool, float64, int64 and field "
    "operators accept them; 18 icon4py programs annotate flags `bool` and a few scalars "
    "`float`",
)
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


@pytest.mark.xfail(
    strict=True,
    reason="a generic field type alias over a TypeVar, `CellKField = Field[Dims[Cell, K], T]` "
    "then `CellKField[float64]` (icon4py's field_type_aliases module, imported by nearly every "
    "icon4py stencil), fails when the alias is made: 'Field[...]: expected a dtype such as "
    "float64, got ~T'",
)
def test_generic_field_type_alias_over_a_typevar() -> None:
    cell_k_field = Field[Dims[Cell, K], T]  # type: ignore[valid-type]
    assert cell_k_field[np.float64] == Field[Dims[Cell, K], np.float64]


@pytest.mark.xfail(
    strict=True,
    reason="a scan operator's parameter annotated with a NumPy scalar type (gtx.float64, "
    "icon4py's wpfloat/vpfloat), as gt4py writes a scan's per-level values, is taken as a "
    "scalar parameter: called with a field it is a DefinitionError 'expected a float64 "
    "scalar, got Field[[Cell, K], float64]' (the same scan annotated `float` works); "
    "icon4py's tridiagonal solves and diagnose_pressure",
)
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


@pytest.mark.xfail(
    strict=True,
    reason="`f ** 2` of a float64 field is a DefinitionError 'mismatched dtypes float64 and "
    "int32', but gt4py types `**` as its left operand whatever the arithmetic exponent "
    "(ffront/foast_passes/type_deduction.py, `if node.op == BinaryOperator.POW: return "
    "left.type`); icon4py's saturation adjustment writes `x ** 2`",
)
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


@pytest.mark.xfail(
    strict=True,
    reason="the DefinitionError of a slot read of a local field in a program without that "
    "connectivity's table (a documented limitation) points at the line that called the "
    "program, not at the field operator or the program; icon4py's FFSL back-trajectory "
    "stencils",
)
def test_error_of_a_slot_read_without_its_table_points_at_the_definition() -> None:
    edge = gtx.Dimension("Edge")
    e2c_dim = gtx.Dimension("E2C", gtx.DimensionKind.LOCAL)

    @gtx.field_operator
    def _first(w: Field[Dims[edge, e2c_dim], float]) -> Field[Dims[edge], float]:
        return w[e2c_dim(0)]

    @gtx.program
    def first(w: Field[Dims[edge, e2c_dim], float], out: Field[Dims[edge], float]):
        _first(w, out=out)

    definitions = {
        _first.definition.__code__.co_firstlineno + 2,  # the slot read
        first.definition.__code__.co_firstlineno,
    }
    with pytest.raises(gtx.DefinitionError, match="slot") as caught:
        first(np.ones((5, 2)), np.zeros(5), offset_provider={})
    assert caught.value.location is not None
    assert caught.value.location[1] in definitions


@pytest.mark.xfail(
    strict=True,
    reason="a tuple of domains, one per field of out=, is refused ('domain= must be a dict') "
    "when the fields are over the same dimensions (docs/dsl.md allows it for results over "
    "different dimensions; gt4py for any tuple out=); icon4py's "
    "compute_rho_theta_pgrad_and_update_vn (compute_cell_diagnostics_for_dycore writes the "
    "same, behind a maximum() in a bound)",
)
def test_tuple_of_domains_for_fields_over_the_same_dimensions() -> None:
    f64 = Field[Dims[Cell, K], gtx.float64]

    @gtx.field_operator
    def _twice_and_thrice(a: f64) -> tuple[f64, f64]:
        return 2.0 * a, 3.0 * a

    @gtx.program
    def twice_and_thrice(a: f64, x: f64, y: f64, start: gtx.int32, stop: gtx.int32):
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


@pytest.mark.xfail(
    strict=True,
    reason="a math function of a literal, `log(wpfloat('10.0'))`, is a DefinitionError "
    "'of literals only; compute it in Python instead'; gt4py accepts it (icon4py's graupel "
    "microphysics writes `exp(local_hlp * log(wpfloat('10.0')))`)",
)
def test_math_function_of_a_literal() -> None:
    f64 = Field[Dims[Cell], gtx.float64]

    @gtx.field_operator
    def _times_hundred(a: f64) -> f64:
        return a * gtx.exp(2.0 * gtx.log(gtx.float64("10.0")))

    @gtx.program
    def times_hundred(a: f64, out: f64):
        _times_hundred(a, out=out)

    a, out = np.arange(4.0), np.zeros(4)
    times_hundred(a, out, offset_provider={})
    np.testing.assert_allclose(out, 100.0 * a, rtol=1e-14)
