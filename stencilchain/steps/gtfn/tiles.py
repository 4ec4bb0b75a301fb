"""The tiled CPU launch of a call with a tile plan (`tiling.plan_tiles`), and its kernel:
each stage computed over the tile widened by its extent into a per-thread buffer, then the
result over the tile reading the stages from their buffers."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.steps.cpp.expressions import Pos, cpp_type, index_at
from stencilchain.steps.cpp.loop_order import loop_order
from stencilchain.steps.cpp.signature import bound_var, index_var
from stencilchain.steps.gtfn.bodies import point_value
from stencilchain.steps.gtfn.context import TranslationContext
from stencilchain.steps.gtfn.kernels import (
    kernel_arguments,
    kernel_parameters,
    team_or_caller,
    unit_test,
)
from stencilchain.steps.gtfn.tiling import (
    INNER_TILE,
    MAX_TILE,
    MIN_TILE,
    TILE_BUDGET_BYTES,
    Stage,
    describe,
    element_bytes,
    tile_sizes,
)


def tiled_launch(
    ctx: TranslationContext, index: int, call: ir.ProgramCall, dims: list[Dimension], inner: int
) -> list[str]:
    """Call `index` tile by tile (its plan: `ctx.plans[index]`), `dims[inner]`
    innermost: the tile sizes for the call's extents, each stage's buffers (one per
    thread, from the pool), then the tiles in parallel, each running the kernel
    `tiled_kernel` (its unit-stride instance where the arrays allow)."""
    plan = ctx.plans[index]
    name = tiled_kernel(ctx, index, call, dims, inner)
    order = loop_order(dims, inner)
    sizes = tile_sizes(plan, inner)
    haloed = [d for k, d in enumerate(dims) if k != inner and sizes[k] > 1]
    lines = [f"// {line}" for line in describe(plan, inner)]
    for d in dims:
        lines.append(
            f"const std::int64_t sc_range_{d.name} = {bound_var(d, 'stop')} - {bound_var(d, 'start')};"
        )
    lines.append(
        f"const std::int64_t sc_tile_{dims[inner].name} = "
        f"std::min<std::int64_t>({INNER_TILE}, sc_range_{dims[inner].name});"
    )
    if haloed:
        # square tiles along the dimensions with a halo, halved until the buffers fit
        def width(stage: Stage, k: int, tile: str) -> str:
            return f"(std::min<std::int64_t>({tile}, sc_range_{dims[k].name}) + {stage.high[k] - stage.low[k]})"

        per_stage = []
        for stage in plan.stages:
            factors = [
                width(stage, k, "sc_side" if d in haloed else f"sc_tile_{d.name}")
                for k, d in enumerate(dims)
                if d in haloed or k == inner
            ]
            per_stage.append(" * ".join(factors))
        bytes_of = " + ".join(f"{p}" for p in per_stage)
        lines += [
            f"std::int64_t sc_side = {MAX_TILE};",
            f"while (sc_side > {MIN_TILE} && ({bytes_of}) * {element_bytes(plan)} > {TILE_BUDGET_BYTES}) sc_side /= 2;",
        ]
        lines += [
            f"const std::int64_t sc_tile_{d.name} = std::min<std::int64_t>(sc_side, sc_range_{d.name});"
            for d in haloed
        ]
    for d in dims:
        if d != dims[inner] and d not in haloed:
            lines.append(f"const std::int64_t sc_tile_{d.name} = 1;")
    for d in dims:
        lines.append(
            f"const std::int64_t sc_count_{d.name} = (sc_range_{d.name} + sc_tile_{d.name} - 1) / sc_tile_{d.name};"
        )
    for j, stage in enumerate(plan.stages):
        cpp = cpp_type(stage.expr.type)
        points = " * ".join(
            f"static_cast<std::size_t>(sc_tile_{d.name} + {stage.high[k] - stage.low[k]})"
            for k, d in enumerate(dims)
        )
        lines += [
            "// elements per thread of a buffer, whole cache lines",
            f"const std::size_t sc_n{j} = ({points} + 7) / 8 * 8;",
            f"sc_temporary sc_t_{stage.name};",
            f"if (!sc_allocate(sc_t_{stage.name}, sc_n{j} * static_cast<std::size_t>(sc_max_threads()) * sizeof({cpp}))) {{",
            f'    std::snprintf(err, err_len, "cannot allocate the tile buffers of call {index} '
            f'of {ctx.original.name}()");',
            "    return 5;",
            "}",
        ]
    lines.append(unit_test(ctx, call, dims[inner]))
    region: list[str] = []
    for j, stage in enumerate(plan.stages):
        cpp = cpp_type(stage.expr.type)
        region.append(
            f"    {cpp}* const sc_buf_{j} = static_cast<{cpp}*>(sc_t_{stage.name}.data) + "
            f"sc_n{j} * static_cast<std::size_t>(sc_thread_num());"
        )
    region.append(f"    #pragma omp for schedule(static) collapse({len(dims)})")
    indent = "    "
    for d in order:
        region.append(
            f"{indent}for (std::int64_t sc_ti_{d.name} = 0; sc_ti_{d.name} < sc_count_{d.name}; ++sc_ti_{d.name}) {{"
        )
        indent += "    "
    for d in dims:
        start, stop = bound_var(d, "start"), bound_var(d, "stop")
        region += [
            f"{indent}const std::int64_t sc_lo_{d.name} = {start} + sc_ti_{d.name} * sc_tile_{d.name};",
            f"{indent}const std::int64_t sc_hi_{d.name} = std::min<std::int64_t>(sc_lo_{d.name} + sc_tile_{d.name}, {stop});",
        ]
    args = ", ".join(
        [
            *kernel_arguments(ctx, dims),
            *(f"sc_buf_{j}" for j in range(len(plan.stages))),
            *(f"sc_tile_{d.name}" for d in dims),
            *(f"sc_{side}_{d.name}" for d in dims for side in ("lo", "hi")),
        ]
    )
    region += [
        f"{indent}if (sc_unit) {name}<true>({args});",
        f"{indent}else {name}<false>({args});",
    ]
    for _ in order:
        indent = indent[:-4]
        region.append(indent + "}")
    return lines + team_or_caller(ctx, "sc_tiles", region)


def tiled_kernel(
    ctx: TranslationContext, index: int, call: ir.ProgramCall, dims: list[Dimension], inner: int
) -> str:
    """Define the kernel of one tile of call `index`: each stage of its plan over the
    tile widened by the stage's extent into its buffer (dense, `dims[inner]` fastest),
    then the result over the tile, reading the stages from their buffers. A template on
    `sc_unit`, like `loops.cpu_kernel`. Returns the function's name."""
    plan = ctx.plans[index]
    name = f"sc_call{index}_tiles{inner}"
    order = loop_order(dims, inner)
    position = {d: k for k, d in enumerate(dims)}
    params = [
        *kernel_parameters(ctx, dims),
        *(
            f"{cpp_type(stage.expr.type)}* __restrict__ sc_buf_{j}"
            for j, stage in enumerate(plan.stages)
        ),
        *(f"const std::int64_t sc_tile_{d.name}" for d in dims),
        *(f"const std::int64_t sc_{side}_{d.name}" for d in dims for side in ("lo", "hi")),
    ]
    lines = [
        f"// call {index} ({ctx.original.calls[index].callee}) tile by tile, "
        f"{dims[inner].name} innermost",
        "template <bool sc_unit>",
        f"static void {name}({', '.join(params)}) {{",
    ]
    # each stage's buffer: origin (the widened tile's first point) and strides
    for j, stage in enumerate(plan.stages):
        for d in dims:
            k = position[d]
            lines.append(
                f"    const std::int64_t sc_o{j}_{d.name} = sc_lo_{d.name} + ({stage.low[k]});"
            )
        stride = "1"
        for d in reversed(order[1:]):
            k = position[d]
            width = f"(sc_tile_{d.name} + {stage.high[k] - stage.low[k]})"
            stride = width if stride == "1" else f"{stride} * {width}"
            lines.append(
                f"    const std::int64_t sc_bs{j}_{order[order.index(d) - 1].name} = {stride};"
            )

    def reader(j: int) -> Callable[[Pos], str]:
        def read(pos: Pos) -> str:
            terms = []
            for d in order:
                term = f"({index_at(d, pos)} - sc_o{j}_{d.name})"
                terms.append(term if d == order[-1] else f"{term} * sc_bs{j}_{d.name}")
            return f"sc_buf_{j}[{' + '.join(terms)}]"

        return read

    stages: dict[str, Callable[[Pos], str]] = {}
    for j, stage in enumerate(plan.stages):
        access = ctx.access(unit_dim=dims[inner], stages=stages)
        statements, value = point_value(access, stage.expr)
        ranges = {
            d: (
                f"sc_lo_{d.name} + ({stage.low[position[d]]})",
                f"sc_hi_{d.name} + ({stage.high[position[d]]})",
            )
            for d in dims
        }
        body = [*statements, f"{reader(j)({})} = {value};"]
        lines += [
            "    {  // " + stage.name,
            *("        " + s for s in tile_loops(order, ranges, body)),
            "    }",
        ]
        stages[stage.name] = reader(j)
    access = ctx.access(unit_dim=dims[inner], stages=stages)
    statements, value = point_value(access, plan.result)
    body = [*statements, access.store(call.outs[0], value)]
    ranges = {d: (f"sc_lo_{d.name}", f"sc_hi_{d.name}") for d in dims}
    lines += [
        "    {  // the result",
        *("        " + s for s in tile_loops(order, ranges, body)),
        "    }",
    ]
    lines.append("}")
    ctx.kernels.append("\n".join(lines))
    return name


def tile_loops(
    order: Sequence[Dimension], ranges: Mapping[Dimension, tuple[str, str]], body: Sequence[str]
) -> list[str]:
    """Loops over `ranges` ([first, stop) per dimension) in `order`, around `body`."""
    lines = []
    indent = ""
    for d in order:
        v = index_var(d)
        first, stop = ranges[d]
        lines.append(f"{indent}for (std::int64_t {v} = {first}; {v} < {stop}; ++{v}) {{")
        indent += "    "
    lines += [indent + s for s in body]
    for _ in order:
        indent = indent[:-4]
        lines.append(indent + "}")
    return lines
