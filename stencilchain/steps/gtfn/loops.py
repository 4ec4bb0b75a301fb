"""The CPU loop nests of a field-operator call: points in parallel, one kernel function per
loop order, the one whose innermost loop has the first output's smallest stride picked at
run time; a jammed loop (`tiling.plan_jam`) computes several points per iteration; a call
with a tile plan runs tile by tile instead (`tiles`)."""

from __future__ import annotations

from collections.abc import Callable

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.steps.cpp.loop_order import loop_order, stride_dispatch
from stencilchain.steps.cpp.signature import bound_var, domain_loop, index_var
from stencilchain.steps.gtfn.bodies import point_statements
from stencilchain.steps.gtfn.context import TranslationContext, extents
from stencilchain.steps.gtfn.kernels import (
    kernel_arguments,
    kernel_parameters,
    team_or_caller,
    unit_test,
)
from stencilchain.steps.gtfn.tiles import tiled_launch
from stencilchain.steps.settings import DataLayout

Launch = Callable[[TranslationContext, int, ir.ProgramCall, list[Dimension], int], list[str]]


def cpu_call(ctx: TranslationContext, index: int, call: ir.ProgramCall) -> list[str]:
    """Points in parallel, the loop along the dimension of the first output's smallest
    stride innermost. Each loop order is a kernel function (`cpu_kernel`) that each
    thread calls on its share of the outermost dimension."""
    dims = [dd.dim for dd in call.domain.dims]
    lines = ctx.domain_code(index)
    if not dims:  # a zero-dimensional result: its one point, on the calling thread
        lines += ["    " + s for s in point_statements(ctx.access(), call)]
        lines.append("}")
        return lines
    lines.append(f"    const std::int64_t sc_points = {' * '.join(extents(dims))};")
    first_out = ctx.fields[call.outs[0]]
    launch: Launch = kernel_launch if index not in ctx.plans else tiled_launch
    if ctx.data_layout is DataLayout.UNIT_STRIDE or len(dims) == 1:
        lines += ["    " + s for s in launch(ctx, index, call, dims, len(dims) - 1)]
    else:
        access = ctx.access()
        strides = [access.stride(first_out, first_out.type.dims.index(d)) for d in dims]
        branches = [launch(ctx, index, call, dims, k) for k in range(len(dims))]
        lines += ["    " + s for s in stride_dispatch(strides, branches)]
    lines.append("}")
    return lines


def kernel_launch(
    ctx: TranslationContext, index: int, call: ir.ProgramCall, dims: list[Dimension], inner: int
) -> list[str]:
    """The parallel region that runs kernel `cpu_kernel(index, inner)`: each thread
    takes an equal share of the outermost loop's range, the unit-stride instance where
    every array the call reads or writes (but tables) has unit stride along
    `dims[inner]`."""
    name = cpu_kernel(ctx, index, call, dims, inner)
    outer = loop_order(dims, inner)[0]
    args = ", ".join([*kernel_arguments(ctx, dims), "sc_lo", "sc_hi"])
    start, stop = bound_var(outer, "start"), bound_var(outer, "stop")
    share = [
        f"    const std::int64_t sc_range = {stop} - {start};",
        "    const std::int64_t sc_threads = sc_num_threads(), sc_me = sc_thread_num();",
        f"    const std::int64_t sc_lo = {start} + sc_range * sc_me / sc_threads;",
        f"    const std::int64_t sc_hi = {start} + sc_range * (sc_me + 1) / sc_threads;",
        "    if (sc_lo < sc_hi) {",
        f"        if (sc_unit) {name}<true>({args});",
        f"        else {name}<false>({args});",
        "    }",
    ]
    return [unit_test(ctx, call, dims[inner]), *team_or_caller(ctx, "sc_share", share)]


def cpu_kernel(
    ctx: TranslationContext, index: int, call: ir.ProgramCall, dims: list[Dimension], inner: int
) -> str:
    """Define the kernel function of call `index` with `dims[inner]` innermost: the loop
    nest over the points of [sc_lo, sc_hi) along the outermost dimension. A template on
    `sc_unit`: its true instance reads the arrays (but tables) with stride 1 along the
    innermost dimension, so that the compiler sees unit-stride accesses and vectorizes;
    the pointers are `__restrict__` parameters, which the outlined body of an OpenMP
    region would not keep. With a jam planned for this loop order, its loop steps that many
    points, which share their values, and the points left over run one at a time. Returns
    the function's name."""
    name = f"sc_call{index}_inner{inner}"
    order = loop_order(dims, inner)
    access = ctx.access(unit_dim=dims[inner])
    body = point_statements(access, call)
    params = ", ".join(
        [*kernel_parameters(ctx, dims), "const std::int64_t sc_lo", "const std::int64_t sc_hi"]
    )
    jam = ctx.jams.get((index, inner))
    note = "" if jam is None else f", {jam.factor} points along {jam.dim.name} per iteration"
    lines = [
        f"// call {index} ({ctx.original.calls[index].callee}), {dims[inner].name} innermost{note}",
        "template <bool sc_unit>",
        f"static void {name}({params}) {{",
    ]
    if jam is None:
        lines += _nest(order, body)
    else:
        points = [{jam.dim: u} for u in range(jam.factor)]
        jammed = point_statements(access, call, points)
        lines += _jammed_nest(order, order.index(jam.dim), jam.factor, jammed, body)
    lines.append("}")
    ctx.kernels.append("\n".join(lines))
    return name


def _loop(dim: Dimension, outermost: bool) -> str:
    """The head of the loop along `dim`: the outermost over [sc_lo, sc_hi)."""
    if not outermost:
        return domain_loop(dim)
    v = index_var(dim)
    return f"for (std::int64_t {v} = sc_lo; {v} < sc_hi; ++{v}) {{"


def _nest(order: list[Dimension], body: list[str], depth: int = 0) -> list[str]:
    """The loops of `order` (the first the outermost of the kernel where `depth` is 0)
    around `body`, indented by `depth` levels."""
    lines: list[str] = []
    indent = "    " * (depth + 1)
    for k, d in enumerate(order):
        lines.append(indent + "    " * k + _loop(d, depth == 0 and k == 0))
    lines += [indent + "    " * len(order) + s for s in body]
    for k in reversed(range(len(order))):
        lines.append(indent + "    " * k + "}")
    return lines


def _jammed_nest(
    order: list[Dimension], at: int, factor: int, jammed: list[str], body: list[str]
) -> list[str]:
    """The loops of `order` with the one at position `at` stepping `factor` points, the
    loops inside it around `jammed` (the statements of those points), then the points
    left over one at a time around `body`."""
    lines = ["    " * (k + 1) + _loop(d, k == 0) for k, d in enumerate(order[:at])]
    indent = "    " * (at + 1)
    v = index_var(order[at])
    start = "sc_lo" if at == 0 else bound_var(order[at], "start")
    stop = "sc_hi" if at == 0 else bound_var(order[at], "stop")
    lines += [
        f"{indent}std::int64_t {v} = {start};",
        f"{indent}for (; {v} + {factor - 1} < {stop}; {v} += {factor}) {{",
        *_nest(order[at + 1 :], jammed, at + 1),
        f"{indent}}}",
        f"{indent}for (; {v} < {stop}; ++{v}) {{",
        *_nest(order[at + 1 :], body, at + 1),
        f"{indent}}}",
    ]
    lines += [("    " * (k + 1)) + "}" for k in reversed(range(at))]
    return lines
