"""What the block of every call is made of: the conditional block that runs it where its
domain is not empty (an interstate condition, so an empty domain does nothing on either
device), the map range of each dimension of the domain, the arrays' dtypes and the GPU
thread blocks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import ScalarType
from stencilchain.steps.dace.calling_convention import (
    bound_symbol,
    field_bound_symbol,
    size_symbol,
)

if TYPE_CHECKING:
    import dace

__all__ = ["call_block", "dace_dtype", "gpu_block_size", "map_range", "nonempty", "where_nonempty"]

_DACE_DTYPES = {
    "float32": "float32",
    "float64": "float64",
    "int32": "int32",
    "int64": "int64",
    "bool": "bool_",
}
# GPU thread-block shapes per map dimensionality (the last map parameter is x).
_GPU_BLOCK_SIZE = {1: [256, 1, 1], 2: [64, 4, 1]}
_GPU_BLOCK_SIZE_3D = [32, 4, 2]


def gpu_block_size(map_dims: int) -> list[int]:
    """The GPU thread block of a map over `map_dims` dimensions."""
    return _GPU_BLOCK_SIZE.get(map_dims, _GPU_BLOCK_SIZE_3D)


def dace_dtype(dtype: ScalarType) -> Any:
    """DaCe's type of `dtype`."""
    import dace

    return getattr(dace, _DACE_DTYPES[dtype.name])


def _bound_text(dim: Dimension, bound: ir.Bound) -> str:
    """A bound as the text of an interstate condition."""
    if bound.param is not None or bound.field is not None:
        base = (
            field_bound_symbol(bound, dim)
            if bound.param is None
            else bound_symbol(bound.param, dim)
        )
        return base if bound.value == 0 else f"{base} + ({bound.value})"
    if not bound.from_end:
        return str(bound.value)
    if bound.value == 0:
        return size_symbol(dim)
    sign = "+" if bound.value > 0 else "-"
    return f"{size_symbol(dim)} {sign} {abs(bound.value)}"


def nonempty(call: ir.ProgramCall) -> str:
    """The interstate condition under which the call's domain is not empty."""
    return (
        " and ".join(
            f"({_bound_text(dd.dim, lo)}) < ({_bound_text(dd.dim, hi)})"
            for dd in call.domain.dims
            for lo in dd.starts
            for hi in dd.stops
        )
        or "0 < 1"  # a zero-dimensional domain: its one point
    )


def where_nonempty(nonempty: str, condition: str | None) -> str:
    """A branch's condition: the domain is not empty and, if given, `condition` holds."""
    return nonempty if condition is None else f"({nonempty}) and ({condition})"


def call_block(sdfg: dace.SDFG, label: str) -> Any:
    """The conditional block of one call, added to `sdfg` (its start if it is the first)."""
    from dace.sdfg.state import ConditionalBlock

    block = ConditionalBlock(label, sdfg=sdfg, parent=sdfg)
    sdfg.add_node(block, is_start_block=sdfg.number_of_nodes() == 0)
    return block


def map_range(dd: ir.DimDomain, symbols: Mapping[str, Any]) -> Any:
    """The map range of one dimension of a domain: [max(starts), min(stops)) (start `max`
    of the starts, stop `min` of the stops, `Bound.from_end` counting from `n_<dim>`)."""
    import dace

    sympy = dace.symbolic.sympy

    def value(bound: ir.Bound) -> Any:
        if bound.param is not None:
            return symbols[bound_symbol(bound.param, dd.dim)] + bound.value
        if bound.field is not None:
            return symbols[field_bound_symbol(bound, dd.dim)] + bound.value
        return symbols[size_symbol(dd.dim)] + bound.value if bound.from_end else bound.value

    starts = [value(b) for b in dd.starts]
    stops = [value(b) for b in dd.stops]
    start = starts[0] if len(starts) == 1 else sympy.Max(*starts)
    stop = stops[0] if len(stops) == 1 else sympy.Min(*stops)
    return dace.subsets.Range([(start, stop - 1, 1)])
