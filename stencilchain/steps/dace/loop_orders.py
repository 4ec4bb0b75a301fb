"""Which dimension a call's map has innermost: with `DataLayout.STRIDED` and more than one
dimension, one map per possible innermost dimension, and a condition on the strides of
the call's first output picks the one whose innermost loop has the smallest stride, so
that C-order and Fortran-order arrays both stream through memory. Only the loop order
depends on it, never the result."""

from __future__ import annotations

from collections.abc import Callable

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.steps.cpp.loop_order import innermost_conditions
from stencilchain.steps.dace.build_context import BuildContext
from stencilchain.steps.dace.calling_convention import stride_symbol
from stencilchain.steps.settings import DataLayout

__all__ = ["loop_orders", "stride_magnitude"]


def stride_magnitude(ctx: BuildContext, call: ir.ProgramCall) -> Callable[[Dimension], str] | None:
    """The |stride| (a symbolic expression) along a dimension of the call's first output
    parameter, or of the parameter a temporary output is laid out like
    (temporary_layouts): what decides the call's loop order; None when it writes none."""
    parameters = [o for o in call.outs if not ctx.program.is_temporary(o)]
    parameters += [ctx.layouts[o] for o in call.outs if o in ctx.layouts]
    if not parameters:
        return None
    out = parameters[0]
    out_type = ctx.params[out]
    assert isinstance(out_type, ir.FieldType)

    def magnitude(dim: Dimension) -> str:
        s = stride_symbol(out, out_type.dims.index(dim))
        return f"max({s}, -{s})"

    return magnitude


def loop_orders(
    ctx: BuildContext, call: ir.ProgramCall, dims: list[Dimension]
) -> list[tuple[Dimension, str | None]]:
    """(innermost dimension, condition on strides) for each map of the call."""
    magnitude = stride_magnitude(ctx, call)
    if ctx.data_layout is DataLayout.UNIT_STRIDE or len(dims) == 1 or magnitude is None:
        return [(dims[-1], None)]  # C order, like the temporaries
    # the first dimension of smallest |stride| is innermost (the rule GTFN's C++ applies)
    conditions = innermost_conditions([magnitude(d) for d in dims], conjunction=" and ")
    return list(zip(dims, conditions, strict=True))
