"""gt4py's built-in functions of field operators, each stencilchain's construct under
gt4py's name and signature: `neighbor_sum(x, axis=C2EDim)`, `astype(x, float32)` with
NumPy's dtypes, `as_offset(Koff, k_field)` with a FieldOffset, the math functions."""

from __future__ import annotations

from typing import Any

from stencilchain import math as _math
from stencilchain.compat.gt4py._dims import scalar_type
from stencilchain.compat.gt4py._offsets import FieldOffset
from stencilchain.errors import DefinitionError
from stencilchain.program import constructs
from stencilchain.program.dimensions import Dimension
from stencilchain.program.shifts import DynamicOffset


def neighbor_sum(field: object, /, axis: Dimension) -> Any:
    """The sum over the neighbour slots `axis` (missing neighbours add nothing)."""
    return constructs.neighbor_sum(field, axis)


def max_over(field: object, /, axis: Dimension) -> Any:
    """The largest value over the neighbour slots `axis`."""
    return constructs.max_over(field, axis)


def min_over(field: object, /, axis: Dimension) -> Any:
    """The smallest value over the neighbour slots `axis`."""
    return constructs.min_over(field, axis)


def where(mask: object, true_field: object, false_field: object, /) -> Any:
    """`true_field` where `mask` holds, else `false_field` (tuples element by element)."""
    return constructs.where(mask, true_field, false_field)


def astype(value: object, type_: object, /) -> Any:
    """`value` converted to `type_` (float32, float64, int32, int64, bool)."""
    return constructs.astype(value, scalar_type(type_, "astype"))


def broadcast(field: object, dims: tuple[Dimension, ...], /) -> Any:
    """`field` (or a scalar) over `dims`."""
    return constructs.broadcast(field, dims)


def concat_where(domain: object, true_field: object, false_field: object, /) -> Any:
    """`true_field` on the index region `domain` (`K == 0`, `K < k_start`), else
    `false_field`, each evaluated only where it is selected."""
    return constructs.concat_where(domain, true_field, false_field)


def as_offset(offset: object, field: object, /) -> DynamicOffset:
    """`f(as_offset(Koff, k_off))`: read `f` at `k + k_off[point]` along Koff's dimension."""
    if not isinstance(offset, FieldOffset) or not offset.is_cartesian:
        raise DefinitionError(
            f"as_offset({offset!r}, ...): the offset is a Cartesian FieldOffset, "
            "Koff = FieldOffset('Koff', source=K, target=(K,))"
            + (
                "; a data-dependent neighbour slot is not supported"
                if isinstance(offset, FieldOffset)
                else ""
            )
        )
    return constructs.as_offset(offset.source, field)


def neg(x: object, /) -> Any:
    return -x  # type: ignore[operator]


# the math built-ins, under gt4py's names (one positional argument each, or two)
abs = _math.abs
sin, cos, tan = _math.sin, _math.cos, _math.tan
arcsin, arccos, arctan = _math.arcsin, _math.arccos, _math.arctan
sinh, cosh, tanh = _math.sinh, _math.cosh, _math.tanh
arcsinh, arccosh, arctanh = _math.arcsinh, _math.arccosh, _math.arctanh
sqrt, exp, log, gamma, cbrt = _math.sqrt, _math.exp, _math.log, _math.gamma, _math.cbrt
floor, ceil, trunc = _math.floor, _math.ceil, _math.trunc
isfinite, isinf, isnan = _math.isfinite, _math.isinf, _math.isnan
minimum, maximum, fmod, power = _math.minimum, _math.maximum, _math.fmod, _math.power
