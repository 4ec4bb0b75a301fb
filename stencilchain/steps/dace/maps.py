"""A field-operator call as maps: a conditional block whose branch, where the domain is not
empty, is a map over the call's domain around one C++ tasklet computing the inlined body
(`tasklets`); one branch per possible innermost dimension (`loop_orders`). On the CPU with
auto-optimization a compound body runs tile by tile instead (`tiled_maps`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stencilchain.program import ir
from stencilchain.steps.cpp.loop_order import loop_order
from stencilchain.steps.dace.build_context import BuildContext
from stencilchain.steps.dace.call_blocks import (
    call_block,
    gpu_block_size,
    map_range,
    nonempty,
    where_nonempty,
)
from stencilchain.steps.dace.calling_convention import index_symbol
from stencilchain.steps.dace.loop_orders import loop_orders
from stencilchain.steps.dace.tasklets import Tasklet, add_tasklet, array_strides
from stencilchain.steps.dace.tile_memlets import add_mapped_tasklet
from stencilchain.steps.dace.tiled_maps import add_tiled_call

if TYPE_CHECKING:
    import dace

__all__ = ["add_call"]


def add_call(
    ctx: BuildContext,
    sdfg: dace.SDFG,
    index: int,
    call: ir.ProgramCall,
    symbols: Mapping[str, Any],
) -> Any:
    """A conditional block running the call's map where its domain is not empty."""
    import dace
    from dace.sdfg.state import ControlFlowRegion

    dims = [dd.dim for dd in call.domain.dims]
    ranges = {dd.dim: map_range(dd, symbols) for dd in call.domain.dims}
    condition_nonempty = nonempty(call)
    tasklet = Tasklet(
        ctx.transforms, ctx.program, ctx.params, dims, ctx.prefix, array_strides(sdfg)
    )
    outs = tuple(None if o in ctx.unread else o for o in call.outs)
    body = ctx.fused[index] if index in ctx.fused else ctx.body(call)
    if not dims:  # a zero-dimensional result: one tasklet, no map
        return _point_call(sdfg, index, call, tasklet, tasklet.code(body, outs), condition_nonempty)
    if ctx.tiled:
        tiled = add_tiled_call(ctx, sdfg, index, call, symbols, body, outs)
        if tiled is not None:
            return tiled
    code = tasklet.code(body, outs)
    block = call_block(sdfg, f"call{index}_{call.callee}")
    for inner, condition in loop_orders(ctx, call, dims):
        # on the CPU the outer loops in GTFN's order (Fortran order: plane by plane); a
        # GPU map keeps the order it had (not measured there)
        order = (
            [d for d in dims if d != inner] + [inner]
            if ctx.gpu
            else loop_order(list(dims), list(dims).index(inner))
        )
        label = f"call{index}_{call.callee}_inner_{inner.name}"
        region = ControlFlowRegion(label, sdfg=sdfg)
        state = region.add_state(label, is_start_block=True)
        _tasklet_node, map_entry, _map_exit = add_mapped_tasklet(
            state,
            f"call{index}_{call.callee}",
            [(index_symbol(d), ranges[d]) for d in order],
            {c: tasklet.memlet(c) for c in tasklet.inputs},
            code,
            {c: dace.Memlet(m) for c, m in tasklet.outputs.items()},
        )
        if ctx.gpu:
            map_entry.map.gpu_block_size = gpu_block_size(len(order))
        block.add_branch(where_nonempty(condition_nonempty, condition), region)
    return block


def _point_call(
    sdfg: dace.SDFG,
    index: int,
    call: ir.ProgramCall,
    tasklet: Tasklet,
    code: str,
    condition: str,
) -> Any:
    """The block of a call over zero dimensions: one tasklet writing its one point."""
    from dace.sdfg.state import ControlFlowRegion

    block = call_block(sdfg, f"call{index}_{call.callee}")
    label = f"call{index}_{call.callee}_point"
    region = ControlFlowRegion(label, sdfg=sdfg)
    state = region.add_state(label, is_start_block=True)
    add_tasklet(state, f"call{index}_{call.callee}", tasklet.inputs, tasklet.outputs, code, {})
    block.add_branch(condition, region)
    return block
