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
