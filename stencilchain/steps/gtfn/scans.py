"""Scan calls and chains of scan calls on the CPU: columns in parallel, each walking its
levels in registers where the axis has the smallest stride, else blocks of neighbouring
columns walking the levels together with the loop over the block innermost. A chain's
blocks in C order store what its scans write into buffers, written to the arrays column
by column after each block (ADR 0055)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.ir_walk import refs_in
from stencilchain.steps.cpp.expressions import Pos
from stencilchain.steps.cpp.loop_order import loop_order, stride_dispatch
from stencilchain.steps.cpp.scan_chains import chain_scan, chained_temporaries
from stencilchain.steps.cpp.scans import SCAN_BLOCK, scan_block
from stencilchain.steps.cpp.signature import bound_var, domain_loop, index_var
from stencilchain.steps.gtfn.bodies import point_statements, scan_body, scan_readers
from stencilchain.steps.gtfn.context import PointAccess, TranslationContext, extents
from stencilchain.steps.settings import DataLayout

# Columns a chain of CPU scans (`scan_chains`) walks together: where the axis is the
# arrays' fastest dimension (C order), enough columns for independent divisions to overlap;
# else a wide block along the fastest dimension (long unit-stride runs per level). The
# buffers between the calls take width x levels elements per thread (cache-resident).
CHAIN_BLOCK_NARROW = 64
CHAIN_BLOCK_WIDE = 256


@dataclasses.dataclass(frozen=True)
class _StagedAccess(PointAccess):
    """A chain's access where the outputs in `staged` are stored into the block's buffers
    (level-major), written to their arrays after the block (`sc_store_columns`)."""

    staged: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def store(self, name: str, value: str, pos: Pos | None = None) -> str:
        if name in self.staged:
            assert not pos, "a scan stores at its point (a jam never runs a scan)"
            return f"{self.staged[name]} = {value};"
        return super().store(name, value, pos)


def cpu_scan_call(ctx: TranslationContext, index: int, call: ir.ProgramCall) -> list[str]:
    """Columns in parallel. Where the first output's smallest stride is along the axis
    (C order over (..., K)), each column walks its levels in registers; else blocks of
    neighbouring columns along the dimension of smallest stride walk the levels
    together, the loop over the block's columns innermost (unit stride, vectorizable)."""
    scan = ctx.scans[call.callee]
    columns = ctx.parallel_dims(call)
    body = scan_body(ctx.access(), call)
    lines = ctx.domain_code(index)
    if not columns:
        lines += ["    " + s for s in body]
        lines.append("}")
        return lines
    lines.append(f"    const std::int64_t sc_points = {scan_points(columns, scan.axis)};")
    per_column = column_loops(ctx, columns, len(columns) - 1, body)
    if ctx.data_layout is DataLayout.UNIT_STRIDE and scan.dims[-1] == scan.axis:
        lines += ["    " + s for s in per_column]
        lines.append("}")
        return lines
    out = ctx.fields[call.outs[0]]
    access = ctx.access()

    def stride(d: Dimension) -> str:
        return access.stride(out, out.type.dims.index(d))

    dispatch = stride_dispatch(
        [stride(d) for d in columns],
        [scan_blocks(ctx, call, columns, k) for k in range(len(columns))],
        fallback=(stride(scan.axis), per_column),
        comment="the column dimension of smallest stride",
    )
    lines += ["    " + s for s in dispatch]
    lines.append("}")
    return lines


def scan_points(columns: list[Dimension], axis: Dimension) -> str:
    """The C++ of the points a scan call computes (its columns times its levels): what the
    `openmp_threshold` compares, as for field-operator calls. Counting only the columns
    left a column solve on one thread up to 65,535 columns however deep they were."""
    return " * ".join(extents([*columns, axis]))


def scan_blocks(
    ctx: TranslationContext, call: ir.ProgramCall, columns: list[Dimension], inner: int
) -> list[str]:
    """Blocks of SCAN_BLOCK neighbouring columns along `columns[inner]` in parallel
    (OpenMP over the outer column dimensions and the blocks), each block walking
    the levels with the loop over its columns innermost."""
    along = columns[inner]
    outer = [d for k, d in enumerate(columns) if k != inner]
    start, stop = bound_var(along, "start"), bound_var(along, "stop")
    lines = [
        "#pragma omp parallel for schedule(static) "
        f"if (sc_points >= {ctx.openmp_threshold}) collapse({len(outer) + 1})"
    ]
    indent = ""
    for d in outer:
        lines.append(indent + domain_loop(d))
        indent += "    "
    lines.append(
        f"{indent}for (std::int64_t sc_first = {start}; sc_first < {stop}; "
        f"sc_first += {SCAN_BLOCK}) {{"
    )
    indent += "    "
    lines.append(
        f"{indent}const std::int64_t sc_last = std::min<std::int64_t>(sc_first + {SCAN_BLOCK}, {stop});"
    )
    lines += [indent + s for s in _column_block(ctx, call, along, SCAN_BLOCK)]
    for _ in range(len(outer) + 1):
        indent = indent[:-4]
        lines.append(indent + "}")
    return lines


def _chain_call(
    ctx: TranslationContext,
    access: PointAccess,
    call: ir.ProgramCall,
    along: Dimension,
    axis: Dimension,
) -> list[str]:
    """A call of a chain over the block's columns, storing through `access`."""
    if call.callee in ctx.scans:
        width = max(CHAIN_BLOCK_NARROW, CHAIN_BLOCK_WIDE)
        return _column_block(ctx, call, along, width, access)
    return _pointwise_block(ctx, call, along, axis, access)


def staged_outputs(ctx: TranslationContext, chain: tuple[int, ...]) -> list[str]:
    """The arrays a chain writes that its blocks store level-major into buffers where the
    axis is the arrays' fastest dimension (C order), written column by column after each
    block (`sc_store_columns`, ADR 0055): those over the chain's whole box (every column
    dimension and the axis), written by one call, a scan, and read by none of the chain.
    (Staging what a field operator of the chain writes, ICON's copy of the scan's
    results, measured 12-15 % slower; a scan's stores, 15-34 % faster.)"""
    calls = [ctx.program.calls[i] for i in chain]
    scan = chain_scan(ctx.program, chain)
    box = {*ctx.parallel_dims(next(c for c in calls if c.callee == scan.name)), scan.axis}
    read = {ref.name for call in calls for ref in refs_in(*call.args)}
    written = [name for call in calls for name in call.outs]
    by_scans = {name for call in calls if call.callee in ctx.scans for name in call.outs}
    return [
        name
        for name in dict.fromkeys(written)
        if name in by_scans
        and name not in ctx.buffered
        and name not in read
        and written.count(name) == 1
        and set(ctx.fields[name].type.dims) == box
        and len(ctx.fields[name].type.dims) == len(box)
    ]


def _store_columns(ctx: TranslationContext, name: str, along: Dimension, axis: Dimension) -> str:
    """The call writing the block's buffer of output `name` to its array: its columns
    start at `sc_first` along `along`, its levels at the axis's start."""
    field = ctx.fields[name]
    access = ctx.access()
    terms = []
    for k, dim in enumerate(field.type.dims):
        index = {along: "sc_first", axis: bound_var(axis, "start")}.get(dim, index_var(dim))
        terms.append(f"{index} * {access.stride(field, k)}")
    dims = field.type.dims
    return (
        f"sc_store_columns(sc_buf_{name}, sc_width, sc_last - sc_first, sc_levels, "
        f"&{field.pointer}[{' + '.join(terms)}], {access.stride(field, dims.index(along))}, "
        f"{access.stride(field, dims.index(axis))});"
    )


def _column_block(
    ctx: TranslationContext,
    call: ir.ProgramCall,
    along: Dimension,
    width: int,
    access: PointAccess | None = None,
) -> list[str]:
    """The scan of `call` over the columns `sc_first <= i < sc_last` along `along` (at most
    `width` of them), walking its levels: what a block of a scan and of a chain holds;
    its stores through `access` (by default the arrays and the chain's temporaries)."""
    scan = ctx.scans[call.callee]
    read_argument, store = scan_readers(access or ctx.access(), call)
    return scan_block(
        scan,
        call,
        level=index_var(scan.axis),
        start=bound_var(scan.axis, "start"),
        stop=bound_var(scan.axis, "stop"),
        column=index_var(along),
        first="sc_first",
        last="sc_last",
        width=width,
        read_argument=read_argument,
        store=store,
    )


def _pointwise_block(
    ctx: TranslationContext,
    call: ir.ProgramCall,
    along: Dimension,
    axis: Dimension,
    access: PointAccess,
) -> list[str]:
    """A field-operator call of a chain over the columns `sc_first <= i < sc_last` along
    `along`: level by level, the loop over the block's columns innermost (independent
    points: vectorizable)."""
    level, column = index_var(axis), index_var(along)
    start, stop = bound_var(axis, "start"), bound_var(axis, "stop")
    return [
        f"for (std::int64_t {level} = {start}; {level} < {stop}; ++{level}) {{",
        "    #pragma omp simd",
        f"    for (std::int64_t {column} = sc_first; {column} < sc_last; ++{column}) {{",
        f"        const std::int64_t sc_b = {column} - sc_first;",
        "        (void)sc_b;",
        *("        " + s for s in point_statements(access, call)),
        "    }",
        "}",
    ]


def column_loops(
    ctx: TranslationContext, dims: list[Dimension], inner: int, body: Sequence[str]
) -> list[str]:
    """The loops over a scan call's columns, `dims[inner]` innermost, as a worksharing
    loop: on a thread team from `openmp_threshold` points on, else on the calling thread
    without one (an orphaned `omp for` runs all its iterations on the calling thread).
    The loops are a lambda the compiler does not inline, so that it optimizes them once
    (inlined at both calls, they would double the unit's compile time)."""
    order = loop_order(dims, inner)
    lines = [
        "const auto sc_loops = [&]() __attribute__((noinline)) {",
        "#pragma omp for schedule(static) nowait",
    ]
    indent = ""
    for d in order:
        lines.append(indent + domain_loop(d))
        indent += "    "
    lines += [indent + s for s in body]
    for _ in order:
        indent = indent[:-4]
        lines.append(indent + "}")
    return [
        *lines,
        "};",
        f"if (sc_points >= {ctx.openmp_threshold}) {{",
        "#pragma omp parallel",
        "    sc_loops();",
        "} else {",
        "    sc_loops();",
        "}",
    ]


def cpu_scan_chain(ctx: TranslationContext, chain: tuple[int, ...]) -> list[str]:
    """The calls of a chain (`scan_chains`) column by column: blocks of neighbouring
    columns along the column dimension of smallest stride in parallel, each block
    walking the levels once per call with the loop over its columns innermost, the
    temporaries between the calls in per-thread buffers of one block (from the pool)."""
    calls = [ctx.program.calls[i] for i in chain]
    scan = chain_scan(ctx.program, chain)
    axis = scan.axis
    columns = ctx.parallel_dims(next(c for c in calls if c.callee == scan.name))
    lines = ctx.domain_code(chain[0])
    lines.append(f"    const std::int64_t sc_points = {scan_points(columns, axis)};")
    # loops follow the strides of the last call's first output
    out = ctx.fields[calls[-1].outs[0]]
    access = ctx.access()

    def stride(d: Dimension) -> str:
        return access.stride(out, out.type.dims.index(d))

    setup = [
        f"const bool sc_axis_fastest = std::abs({stride(axis)}) < sc_best;",
        f"const std::int64_t sc_width = sc_axis_fastest ? {CHAIN_BLOCK_NARROW} : {CHAIN_BLOCK_WIDE};",
        f"const std::int64_t sc_levels = {bound_var(axis, 'stop')} - {bound_var(axis, 'start')};",
        "// elements per thread of a buffer, whole cache lines",
        "const std::size_t sc_per_thread = static_cast<std::size_t>(sc_width * sc_levels + 15) / 16 * 16;",
    ]
    buffered = chained_temporaries(ctx.program, [chain])
    staged = staged_outputs(ctx, chain)
    for name in [*buffered, *staged]:
        cpp = ctx.fields[name].type.dtype.cpp
        what = "temporary" if name in buffered else "output"
        setup += [
            f"sc_temporary sc_t_{name};",
            f"if (!sc_allocate(sc_t_{name}, sc_per_thread * static_cast<std::size_t>"
            f"(sc_max_threads()) * sizeof({cpp}))) {{",
            f'    std::snprintf(err, err_len, "cannot allocate the buffers of {what} '
            f'{name} of {ctx.original.name}()");',
            "    return 5;",
            "}",
        ]
    dispatch = stride_dispatch(
        [stride(d) for d in columns],
        [
            chain_blocks(ctx, calls, columns, k, [*buffered, *staged], axis, staged)
            for k in range(len(columns))
        ],
        comment="the column dimension of smallest stride",
        setup=setup,
    )
    lines += ["    " + s for s in dispatch]
    lines.append("}")
    return lines


def chain_blocks(
    ctx: TranslationContext,
    calls: list[ir.ProgramCall],
    columns: list[Dimension],
    inner: int,
    buffered: list[str],
    axis: Dimension,
    staged: Sequence[str] = (),
) -> list[str]:
    """The parallel loop over the blocks of a chain along `columns[inner]` (`axis`: the
    scans' axis). `buffered`: the names with per-thread buffers (`sc_buf_NAME`), the
    chain's temporaries and its `staged` outputs: where the axis is the fastest dimension
    (`sc_axis_fastest`), the calls storing those run in a second version storing into
    the buffers, written to the arrays column by column after the block."""
    along = columns[inner]
    outer = [d for k, d in enumerate(columns) if k != inner]
    start, stop = bound_var(along, "start"), bound_var(along, "stop")
    lines = [f"#pragma omp parallel if (sc_points >= {ctx.openmp_threshold})", "{"]
    for name in buffered:
        cpp = ctx.fields[name].type.dtype.cpp
        lines.append(
            f"    {cpp}* const sc_buf_{name} = static_cast<{cpp}*>(sc_t_{name}.data) + "
            "sc_per_thread * static_cast<std::size_t>(sc_thread_num());"
        )
    lines.append(f"    #pragma omp for schedule(static) collapse({len(outer) + 1})")
    indent = "    "
    for d in outer:
        lines.append(indent + domain_loop(d))
        indent += "    "
    lines += [
        f"{indent}for (std::int64_t sc_first = {start}; sc_first < {stop}; sc_first += sc_width) {{",
        f"{indent}    const std::int64_t sc_last = std::min<std::int64_t>(sc_first + sc_width, {stop});",
    ]
    indent += "    "
    level = f"({index_var(axis)} - {bound_var(axis, 'start')})"
    in_buffers = _StagedAccess(
        ctx, staged={name: f"sc_buf_{name}[{level} * sc_width + sc_b]" for name in staged}
    )
    for call in calls:
        block = _chain_call(ctx, ctx.access(), call, along, axis)
        if any(name in staged for name in call.outs):
            block = [
                "if (sc_axis_fastest) {  // outputs into the block's buffers",
                *("    " + s for s in _chain_call(ctx, in_buffers, call, along, axis)),
                "} else {",
                *("    " + s for s in block),
                "}",
            ]
        lines += [f"{indent}{{  // {call.callee}", *(indent + "    " + s for s in block)]
        lines.append(indent + "}")
    if staged:
        lines.append(f"{indent}if (sc_axis_fastest) {{  // the staged outputs, column by column")
        for name in staged:
            lines.append(f"{indent}    {_store_columns(ctx, name, along, axis)}")
        lines.append(indent + "}")
    for _ in range(len(outer) + 1):
        indent = indent[:-4]
        lines.append(indent + "}")
    lines.append("}")
    return lines
