"""A field-operator call as tiled maps, on the CPU with auto-optimization: a parallel map
over tiles of the domain holding one sequential map per stage of the call's tile plan
(`stencilchain.steps.dace.tiling`), each writing its buffer on the stack around the tile;
the last map writes the outputs."""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.steps.cpp.loop_order import loop_order
from stencilchain.steps.dace.build_context import BuildContext
from stencilchain.steps.dace.call_blocks import (
    call_block,
    dace_dtype,
    map_range,
    nonempty,
    where_nonempty,
)
from stencilchain.steps.dace.calling_convention import index_symbol
from stencilchain.steps.dace.loop_orders import loop_orders
from stencilchain.steps.dace.tasklets import Tasklet, array_strides
from stencilchain.steps.dace.tile_memlets import Box, at, box_of, image, memlet_of, union, whole_of
from stencilchain.steps.dace.tiling import TilePlan, plan_tiles

if TYPE_CHECKING:
    import dace

__all__ = [
    "STACK_BYTES",
    "TILE_INNER",
    "TILE_INNER_MIN",
    "TILE_OUTER",
    "add_tiled_call",
    "tile_size",
]

# The tile of a tiled call (`add_tiled_call`): points along the innermost dimension, and
# along each of the others.
TILE_INNER = 256
TILE_OUTER = 4
# ... the innermost tile halved down to this before the others are (`tile_size`)
TILE_INNER_MIN = 64
# The largest tile buffer: DaCe's compiler.max_stack_array_size (at its default in every
# build, see build_settings), above which a "register" array is allocated on the heap.
STACK_BYTES = 65536


def add_tiled_call(
    ctx: BuildContext,
    sdfg: dace.SDFG,
    index: int,
    call: ir.ProgramCall,
    symbols: Mapping[str, Any],
    body: ir.Expr,
    outs: tuple[str | None, ...],
) -> Any:
    """The call as a conditional block of tiled maps (`stencilchain.steps.dace.tiling`),
    or None if its body has nothing worth materializing (then it is one pointwise map)."""
    dims = tuple(dd.dim for dd in call.domain.dims)
    label = f"call{index}_{call.callee}"
    orders = loop_orders(ctx, call, list(dims))
    plans = {
        inner: plan_tiles(body, dims, f"{ctx.prefix}c{index}{inner.name}_") for inner, _ in orders
    }
    plain = [p is None or any(s.type.dims != dims for s in p.stages) for p in plans.values()]
    if any(plain):
        return None
    from dace.sdfg.state import ControlFlowRegion

    ranges = {dd.dim: map_range(dd, symbols) for dd in call.domain.dims}
    block = call_block(sdfg, label)
    for inner, condition in orders:
        plan = plans[inner]
        assert plan is not None
        order = loop_order(list(dims), list(dims).index(inner))
        name = f"{label}_tiles_inner_{inner.name}"
        region = ControlFlowRegion(name, sdfg=sdfg)
        state = region.add_state(name, is_start_block=True)
        add_tiles(ctx, sdfg, state, name, plan, outs, dims, order, ranges)
        block.add_branch(where_nonempty(nonempty(call), condition), region)
    return block


def add_tiles(
    ctx: BuildContext,
    sdfg: dace.SDFG,
    state: Any,
    label: str,
    plan: TilePlan,
    outs: tuple[str | None, ...],
    dims: tuple[Dimension, ...],
    order: list[Dimension],
    ranges: Mapping[Dimension, Any],
) -> None:
    """A parallel map over tiles of the domain (`order`, the last innermost) holding one
    sequential map per stage of `plan`: each stage writes its buffer (on the stack, of
    the tile's size plus the stage's halo, dense with the innermost dimension
    contiguous) on its box around the tile; the last map writes the outputs."""
    import dace

    sympy = dace.symbolic.sympy
    p = ctx.prefix
    call_dims = list(dims)
    size = tile_size(plan, dims, order)
    tile = {d: dace.symbol(f"{p}tile_{d.name}", dace.int64) for d in order}
    first = {d: ranges[d].ranges[0][0] for d in order}
    last = {d: ranges[d].ranges[0][1] for d in order}
    outer_entry, outer_exit = state.add_map(
        label,
        [(str(tile[d]), dace.subsets.Range([(first[d], last[d], size[d])])) for d in order],
    )
    params = dict(ctx.params)
    origins: dict[str, dict[Dimension, str]] = {}
    for stage in plan.stages:
        lo = dict(zip(call_dims, stage.low))
        hi = dict(zip(call_dims, stage.high))
        shape = {d: size[d] + hi[d] - lo[d] for d in order}
        strides, stride = {}, 1
        for d in reversed(order):
            strides[d] = stride
            stride *= shape[d]
        sdfg.add_transient(
            stage.name,
            [shape[d] for d in call_dims],
            dace_dtype(stage.type.dtype),
            strides=[strides[d] for d in call_dims],
            storage=dace.StorageType.Register,
            lifetime=dace.AllocationLifetime.Scope,
        )
        params[stage.name] = stage.type
        origins[stage.name] = {d: f"{tile[d]} + ({lo[d]})" for d in order}
    end = {d: dace.symbol(f"{p}tile_end_{d.name}", dace.int64) for d in order}
    clipped = {
        end[d].name: sympy.Min(tile[d] + size[d] - 1, last[d]) for d in order
    }  # a tile's last point
    whole_map = ({tile[d].name: first[d] for d in order}, {end[d].name: last[d] for d in order})
    reads: dict[str, Any] = {}
    read_boxes: dict[str, list[Box]] = {}  # per array read: its boxes around each stage
    written: dict[str, Any] = {}
    writes: dict[str, Any] = {}
    write_boxes: dict[str, list[Box]] = {}
    steps: list[tuple[ir.Expr, tuple[str | None, ...], tuple[int, ...], tuple[int, ...]]]
    steps = [(s.expr, (s.name,), s.low, s.high) for s in plan.stages]
    zero = tuple(0 for _ in call_dims)
    steps.append((plan.result, outs, zero, zero))
    for k, (body, targets, lo_t, hi_t) in enumerate(steps):
        lo = dict(zip(call_dims, lo_t))
        hi = dict(zip(call_dims, hi_t))
        tasklet = Tasklet(
            ctx.transforms, ctx.program, params, call_dims, p, array_strides(sdfg), origins
        )
        code = tasklet.code(body, targets)
        stage_ranges = [
            (
                index_symbol(d),
                dace.subsets.Range([(tile[d] + lo[d], clipped[end[d].name] + hi[d], 1)]),
            )
            for d in order
        ]
        points = functools.reduce(
            operator.mul, (clipped[end[d].name] + hi[d] - tile[d] - lo[d] + 1 for d in order), 1
        )
        # the stage's map, from the tile's first point to its (placeholder) last
        stage_map = (
            {index_symbol(d): tile[d] + lo[d] for d in order},
            {index_symbol(d): end[d] + hi[d] for d in order},
        )
        entry, exit_ = state.add_map(
            f"{label}_stage{k}", stage_ranges, schedule=dace.ScheduleType.Sequential
        )
        node = state.add_tasklet(
            f"{label}_stage{k}",
            dict.fromkeys(tasklet.inputs),
            dict.fromkeys(tasklet.outputs),
            code,
            language=dace.Language.CPP,
        )
        inputs: dict[str, list[tuple[str, Any]]] = {}
        for connector in tasklet.inputs:
            memlet = tasklet.memlet(connector)
            inputs.setdefault(memlet.data, []).append((connector, memlet))
        for data, memlets in inputs.items():
            whole = whole_of(sdfg.arrays[data])
            box = union([image(box_of(m), *stage_map, whole) for _, m in memlets], whole)
            volume = sum(m.volume for _, m in memlets) * points
            around = memlet_of(
                data, _clip(box, clipped), volume, any(m.dynamic for _, m in memlets)
            )
            for connector, memlet in memlets:
                state.add_edge(entry, f"OUT_{data}", node, connector, memlet)
            entry.add_in_connector(f"IN_{data}")
            entry.add_out_connector(f"OUT_{data}")
            if data in written:  # a buffer of an earlier stage of this tile
                state.add_edge(written[data], None, entry, f"IN_{data}", around)
                continue
            if data not in reads:
                reads[data] = state.add_read(data)
            state.add_edge(outer_entry, f"OUT_{data}", entry, f"IN_{data}", around)
            read_boxes.setdefault(data, []).append(box)
        outputs: dict[str, list[tuple[str, Any]]] = {}
        for connector, text in tasklet.outputs.items():
            memlet = dace.Memlet(text)
            outputs.setdefault(memlet.data, []).append((connector, memlet))
        for data, memlets in outputs.items():
            whole = whole_of(sdfg.arrays[data])
            box = union([image(box_of(m), *stage_map, whole) for _, m in memlets], whole)
            around = memlet_of(data, _clip(box, clipped), len(memlets) * points, False)
            for connector, memlet in memlets:
                state.add_edge(node, connector, exit_, f"IN_{data}", memlet)
            exit_.add_in_connector(f"IN_{data}")
            exit_.add_out_connector(f"OUT_{data}")
            if data in origins:  # this tile's buffer
                written[data] = state.add_access(data)
                state.add_edge(exit_, f"OUT_{data}", written[data], None, around)
                continue
            if data not in writes:
                writes[data] = state.add_write(data)
            state.add_edge(exit_, f"OUT_{data}", outer_exit, f"IN_{data}", around)
            write_boxes.setdefault(data, []).append(box)
        if not tasklet.inputs:
            state.add_nedge(outer_entry, entry, dace.Memlet())
    # around the map over tiles: all the tiles' boxes (their number of points unknown)
    for boxes, nodes, scope, into in (
        (read_boxes, reads, outer_entry, True),
        (write_boxes, writes, outer_exit, False),
    ):
        for data, data_boxes in boxes.items():
            whole = whole_of(sdfg.arrays[data])
            box = union([image(b, *whole_map, whole) for b in data_boxes], whole)
            memlet = memlet_of(data, box, 0, True)
            scope.add_in_connector(f"IN_{data}")
            scope.add_out_connector(f"OUT_{data}")
            if into:
                state.add_edge(nodes[data], None, scope, f"IN_{data}", memlet)
            else:
                state.add_edge(scope, f"OUT_{data}", nodes[data], None, memlet)


def _clip(box: Box, clipped: Mapping[str, Any]) -> Box:
    """`box` with each tile's placeholder last point replaced by the tile's last point."""
    return tuple((at(begin, clipped), at(end, clipped)) for begin, end in box)


def tile_size(
    plan: TilePlan, dims: tuple[Dimension, ...], order: list[Dimension]
) -> dict[Dimension, int]:
    """The tile along each dimension: TILE_INNER along the innermost, TILE_OUTER along the
    others, halved until every buffer fits in STACK_BYTES: the innermost down to
    TILE_INNER_MIN, then the others (a thin tile recomputes more of its halo), then the
    innermost again."""
    inner, outer = TILE_INNER, TILE_OUTER

    def fits() -> bool:
        for stage in plan.stages:
            points = stage.type.dtype.numpy.itemsize
            for d, lo, hi in zip(dims, stage.low, stage.high):
                points *= (inner if d == order[-1] else outer) + hi - lo
            if points > STACK_BYTES:
                return False
        return True

    while not fits() and (outer > 1 or inner > 1):
        if inner > TILE_INNER_MIN or outer == 1:
            inner //= 2
        else:
            outer //= 2
    return {d: inner if d == order[-1] else outer for d in order}
