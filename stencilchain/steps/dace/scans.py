"""A scan call as SDFG structure: a conditional block running, where the call's domain is
not empty, a map over its columns around a nested SDFG whose `LoopRegion` walks the levels
(one column per GPU thread). On the CPU the map steps over blocks of columns along the
innermost column dimension and each level is one C++ tasklet looping over the block's
columns as GTFN's code does (`#pragma omp simd`, ADR 0065), the state in arrays of one
block on the stack: SCAN_BLOCK columns where the axis is not
the dimension of smallest stride (unit stride across columns), SCAN_BLOCK_NARROW where it
is (interleaved columns overlap their division chains); there, what the scans write to
arrays is stored level-major in a buffer of the block and written column by column after
it (`sc_store_columns`, steps/cpp/columns.h, ADR 0060). A chain of scans
(`steps/cpp/scan_chains`, on the CPU with auto-optimization) runs all its calls in one
nested SDFG per block, one loop over the levels after the other, and the temporaries that
its calls pass along live in a buffer of the block's columns at every level (in cache)
instead of arrays of the whole domain (through memory twice).

Longer than most modules: the CPU's blocks (the level tasklets, the column stores, the
chains) and the GPU's columns share one lowering of a scan's state and levels, which a
split would have to pass between modules."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.steps.cpp.package_text import package_text
from stencilchain.steps.cpp.scans import SCAN_BLOCK, scan_level
from stencilchain.steps.dace.build_context import BuildContext
from stencilchain.steps.dace.call_blocks import (
    call_block,
    dace_dtype,
    gpu_block_size,
    map_range,
    nonempty,
    where_nonempty,
)
from stencilchain.steps.dace.calling_convention import index_symbol
from stencilchain.steps.dace.loop_orders import loop_orders, stride_magnitude
from stencilchain.steps.dace.tasklets import add_tasklet, cpp_literal
from stencilchain.steps.dace.tile_memlets import through_map
from stencilchain.steps.settings import DataLayout

if TYPE_CHECKING:
    import dace

__all__ = ["SCAN_BLOCK", "SCAN_BLOCK_NARROW", "add_scan_call"]

# Columns a CPU scan walks together where the axis is the arrays' fastest dimension (C
# order; elsewhere SCAN_BLOCK): enough interleaved columns to overlap their divisions.
SCAN_BLOCK_NARROW = 64


def add_scan_call(
    ctx: BuildContext,
    sdfg: dace.SDFG,
    indices: tuple[int, ...],
    symbols: Mapping[str, Any],
) -> Any:
    """A conditional block running, where the domain of the calls `indices` (one scan
    call, or a chain of them over one domain) is not empty, a map over the columns
    around a nested SDFG: per call, a sequential loop region over the levels, the state
    in transient scalars, one tasklet per level (the shared emitter)."""
    from dace.sdfg.state import ControlFlowRegion

    calls = [ctx.program.calls[k] for k in indices]
    call = calls[0]
    scan = ctx.scans[call.callee]
    columns = [dd.dim for dd in call.domain.dims if dd.dim != scan.axis]
    axis_domain = next(dd for dd in call.domain.dims if dd.dim == scan.axis)
    axis_range = map_range(axis_domain, symbols)
    (axis_start, axis_last, _step) = axis_range.ranges[0]
    condition_nonempty = nonempty(call)
    label = (
        f"call{indices[0]}_{call.callee}"
        if len(indices) == 1
        else f"calls{indices[0]}_{indices[-1]}_chain"
    )
    block = call_block(sdfg, label)
    # as for field operators: one map per possible innermost column dimension, picked
    # by the strides of the first output parameter (neighbouring columns share cache
    # lines), or of its first input parameter over the scan's dimensions when it writes
    # only temporaries (C order); a chain's, by its last call's
    last = calls[-1]
    by = dataclasses.replace(
        last,
        outs=(
            *last.outs,
            *(
                a.name
                for a in last.args
                if isinstance(a, ir.Ref)
                and a.name in ctx.fields
                and getattr(ctx.params.get(a.name), "dims", None) == scan.dims
            ),
        ),
    )
    orders = loop_orders(ctx, by, columns) if columns else [(None, None)]
    for inner_dim, condition in orders:
        order = [d for d in columns if d != inner_dim] + ([inner_dim] if inner_dim else [])
        branch = f"{label}_inner_{inner_dim.name}" if inner_dim else label
        for along, width, test, fastest in scan_walks(ctx, by, scan, inner_dim, condition):
            name = f"{branch}_blocks{width}" if along else branch
            region = ControlFlowRegion(name, sdfg=sdfg)
            state = region.add_state(name, is_start_block=True)
            staged = staged_outputs(ctx, calls) if fastest and ctx.stages_columns else []
            root = sdfg.root_sdfg  # once per program (DaCe emits every SDFG's global code)
            if staged and "sc_store_columns" not in _global_code(root):
                root.append_global_code(package_text("stencilchain.steps.cpp", "columns.h"))
            add_columns(
                ctx, sdfg, state, name, calls, order, symbols, axis_start, axis_last,
                along, width, staged,
            )  # fmt: skip
            block.add_branch(where_nonempty(condition_nonempty, test), region)
    return block


def _global_code(sdfg: dace.SDFG) -> str:
    """The C++ text that `sdfg` adds at global scope, in every location."""
    return "".join(block.as_string for block in sdfg.global_code.values())


def scan_walks(
    ctx: BuildContext,
    call: ir.ProgramCall,
    scan: ir.ScanOperatorDef,
    inner: Dimension | None,
    condition: str | None,
) -> list[tuple[Dimension | None, int, str | None, bool]]:
    """How the columns walk their levels where `condition` picks `inner` as the innermost
    column dimension: (None: each column on its own, on the GPU; else blocks of `width`
    columns along `inner`, the level loop outside the loop over a block's columns), the
    branch's condition, and whether the axis is the arrays' fastest dimension there. On
    the CPU, blocks of SCAN_BLOCK columns where the axis's stride is not the smaller one
    (unit stride across columns), of SCAN_BLOCK_NARROW where it is (C order: interleaved
    columns overlap their division chains)."""
    if ctx.gpu or inner is None:
        return [(None, 0, condition, False)]
    magnitude = stride_magnitude(ctx, call)
    if ctx.data_layout is DataLayout.UNIT_STRIDE or magnitude is None:
        # C order or unit stride along the last dimension, known here
        fastest = scan.dims[-1] == scan.axis
        return [(inner, SCAN_BLOCK_NARROW if fastest else SCAN_BLOCK, condition, fastest)]
    test = f"{magnitude(scan.axis)} < {magnitude(inner)}"
    also = f"({condition}) and " if condition else ""
    return [
        (inner, SCAN_BLOCK_NARROW, f"{also}({test})", True),
        (inner, SCAN_BLOCK, f"{also}not ({test})", False),
    ]


def staged_outputs(ctx: BuildContext, calls: list[ir.ProgramCall]) -> list[str]:
    """The arrays that the scans `calls` write which a block stores level-major into a
    buffer and writes column by column after the block where the axis is the arrays'
    fastest dimension (ADR 0060, as GTFN's chains, ADR 0055): those over the scans' whole
    box (every column dimension and the axis), written by one call and read by none."""
    scan = ctx.scans[calls[0].callee]
    read = {a.name for call in calls for a in call.args if isinstance(a, ir.Ref)}
    written = [o for call in calls for o in call.outs]
    return [
        name
        for name in dict.fromkeys(written)
        if name not in ctx.unread
        and name not in ctx.chained
        and name not in read
        and written.count(name) == 1
        and getattr(ctx.params.get(name), "dims", None) is not None
        and sorted(d.name for d in ctx.params[name].dims)  # type: ignore[union-attr]
        == sorted(d.name for d in scan.dims)
    ]


def add_columns(
    ctx: BuildContext,
    sdfg: dace.SDFG,
    state: Any,
    label: str,
    calls: list[ir.ProgramCall],
    order: list[Dimension],
    symbols: Mapping[str, Any],
    axis_start: Any,
    axis_last: Any,
    along: Dimension | None = None,
    width: int = 0,
    staged: list[str] | None = None,
) -> None:
    """The map over the columns (in `order`, the last innermost) around the nested
    SDFG of one column; with `along`, the map's last parameter steps over the first
    columns of blocks of `width` columns along it, and the nested SDFG walks a block
    through every call of `calls` (storing the arrays `staged` after the block)."""
    import dace

    p = ctx.prefix
    inner = scan_sdfg(ctx, sdfg, label, calls, along, width, staged or [])
    args = [a for call in calls for a in call.args]
    reads = sorted(
        {
            a.name
            for a in args
            if isinstance(a, ir.Ref) and a.name in ctx.fields and a.name not in ctx.chained
        }
    )
    writes = sorted(
        {o for call in calls for o in call.outs if o not in ctx.unread and o not in ctx.chained}
    )
    # the nested SDFG's arrays are the program's (DaCe 2.0 wants them equivalent to
    # the arrays connected to it): its symbols are the program's, and the column indices
    mapping: dict[str, Any] = {
        f"{p}start": axis_start,
        f"{p}stop": axis_last + 1,
    }
    ranges = {dd.dim: map_range(dd, symbols) for dd in calls[0].domain.dims}
    map_ranges = [(index_symbol(d), ranges[d]) for d in order]
    if along is not None:
        (first, last, _step) = ranges[along].ranges[0]
        map_ranges = [(index_symbol(d), ranges[d]) for d in order if d != along]
        map_ranges.append((f"{p}first", dace.subsets.Range([(first, last, width)])))
        mapping[f"{p}first"] = dace.symbol(f"{p}first", dace.int64)
        mapping[f"{p}columns_stop"] = last + 1
    mapping.update({name: name for name in inner.symbols if name not in mapping})
    scalar_reads = sorted(
        {a.name for a in args if isinstance(a, ir.Ref) and a.name not in ctx.fields}
    )
    nested = state.add_nested_sdfg(
        inner,
        dict.fromkeys([*reads, *scalar_reads]),
        dict.fromkeys(writes),
        symbol_mapping=mapping,
    )
    if order:
        entry, exit_ = state.add_map(label, map_ranges)
        if ctx.gpu:
            entry.map.gpu_block_size = gpu_block_size(len(order))
    else:
        entry = exit_ = None
    if entry is not None and not reads and not scalar_reads:
        # in the map's scope: an empty memlet from its entry (the column reads nothing)
        state.add_nedge(entry, nested, dace.Memlet())
    for name in [*reads, *scalar_reads]:
        access = state.add_access(name)
        memlet = whole_memlet(name, sdfg.arrays[name])
        if entry is None:
            state.add_edge(access, None, nested, name, memlet)
        else:
            through_map(state, access, entry, nested, memlet)
    for name in writes:
        access = state.add_access(name)
        subset = whole_memlet(name, sdfg.arrays[name])
        if exit_ is None:
            state.add_edge(nested, name, access, None, subset)
        else:
            through_map(state, access, exit_, nested, subset)


def whole_memlet(name: str, desc: dace.data.Data) -> dace.Memlet:
    """`dace.Memlet.from_array`, from below 0 along the axes of an array with an offset
    (an input starting below 0, program_sdfg)."""
    import dace

    offset = getattr(desc, "offset", None)
    if not offset or not any(offset):
        return dace.Memlet.from_array(name, desc)
    ranges = [(-o, n - 1 - o, 1) for n, o in zip(desc.shape, offset)]
    return dace.Memlet(data=name, subset=dace.subsets.Range(ranges))


def scan_sdfg(
    ctx: BuildContext,
    outer: dace.SDFG,
    label: str,
    calls: list[ir.ProgramCall],
    along: Dimension | None = None,
    width: int = 0,
    staged: list[str] | None = None,
) -> dace.SDFG:
    """One column of the scans `calls` (one call, or a chain), one after the other: each
    call's state in transient scalars set to its `init`, then a loop region over the
    levels whose state computes the new state and stores it. With `along`, a block of
    columns from `first` along it: the state in arrays of the block (on the stack), each
    level a loop over the block's columns (`_add_block_level`), and the temporaries that a chain
    passes along in transient arrays of the block's columns at every level; the arrays
    `staged` are written into such arrays too, and to the arrays after the last call."""
    import dace

    p = ctx.prefix
    inner = dace.SDFG(f"{label}_column")
    extra = (f"{p}first", f"{p}columns_stop") if along is not None else ()
    for name in (f"{p}start", f"{p}stop", *extra):
        inner.add_symbol(name, dace.int64)
    buffered = {
        o for call in calls[:-1] for o in call.outs if o in ctx.chained and o not in ctx.unread
    }
    arrays = {
        a.name
        for call in calls
        for a in call.args
        if isinstance(a, ir.Ref) and a.name in ctx.fields
    }
    arrays |= {o for call in calls for o in call.outs if o not in ctx.unread}
    for name in sorted(arrays - buffered):
        desc = copy.deepcopy(outer.arrays[name])
        desc.transient = False
        inner.add_datadesc(name, desc)
        for symbol in sorted(str(x) for x in desc.free_symbols):
            if symbol not in inner.symbols:
                inner.add_symbol(symbol, dace.int64)
    first_scan = ctx.scans[calls[0].callee]
    for d in first_scan.dims:
        if d != first_scan.axis and d != along:
            inner.add_symbol(index_symbol(d), dace.int64)
    stage = {name: f"{p}staged_{name}" for name in staged or []}
    if buffered or stage:
        assert along is not None  # chains run in blocks of columns (the CPU)
        levels = dace.symbolic.pystr_to_symbolic(f"{p}stop - {p}start")
        for name in sorted(buffered) + sorted(stage):
            ftype = ctx.params[name]
            assert isinstance(ftype, ir.FieldType)
            inner.add_array(
                stage.get(name, name),
                [levels, width],
                dace_dtype(ftype.dtype),
                transient=True,
                storage=dace.StorageType.CPU_Heap,
            )
    scalars = {
        a.name
        for call in calls
        for a in call.args
        if isinstance(a, ir.Ref) and a.name not in ctx.fields
    }
    for name in sorted(scalars):
        inner.add_scalar(name, outer.arrays[name].dtype)
    previous = None
    for j, call in enumerate(calls):
        tag = "" if len(calls) == 1 else f"_{j}"
        previous = _add_scan_levels(
            ctx, inner, f"{label}{tag}", call, along, width, buffered, tag, previous, stage
        )
    if stage:
        assert along is not None
        _add_column_stores(ctx, inner, label, first_scan, along, width, stage, previous)
    return inner


def _add_column_stores(
    ctx: BuildContext,
    inner: dace.SDFG,
    label: str,
    scan: ir.ScanOperatorDef,
    along: Dimension,
    width: int,
    stage: Mapping[str, str],
    previous: Any,
) -> None:
    """A state after `previous` writing each buffer of `stage` (array name: buffer, the
    block's columns at every level, level-major) to its array, column by column: one C++
    tasklet calling `sc_store_columns` (steps/cpp/columns.h) on pointers to the buffer
    and to the block's first column at the first level."""
    import dace

    p = ctx.prefix
    store = inner.add_state(f"{label}_store_columns")
    inner.add_edge(previous, store, dace.InterstateEdge())
    columns = f"std::min<std::int64_t>({p}first + {width}, {p}columns_stop) - {p}first"
    levels = f"{p}stop - {p}start"
    inputs: dict[str, dace.Memlet] = {}
    outputs: dict[str, dace.Memlet] = {}
    code = []
    for k, (name, buffer) in enumerate(stage.items()):
        desc = inner.arrays[name]
        ftype = ctx.params[name]
        assert isinstance(ftype, ir.FieldType)
        ranges = []
        for d in ftype.dims:
            if d == along:
                ranges.append(f"{p}first:min({p}first + {width}, {p}columns_stop)")
            elif d == scan.axis:
                ranges.append(f"{p}start:{p}stop")
            else:
                ranges.append(index_symbol(d))
        strides = {d: desc.strides[j] for j, d in enumerate(ftype.dims)}
        inputs[f"{p}buf{k}"] = dace.Memlet.from_array(buffer, inner.arrays[buffer])
        outputs[f"{p}col{k}"] = dace.Memlet(data=name, subset=", ".join(ranges))
        code.append(
            f"sc_store_columns({p}buf{k}, {width}, {columns}, {levels}, {p}col{k}, "
            f"{dace.symbolic.symstr(strides[along], cpp_mode=True)}, "
            f"{dace.symbolic.symstr(strides[scan.axis], cpp_mode=True)});"
        )
    tasklet = store.add_tasklet(
        f"{label}_store_columns",
        dict.fromkeys(inputs),
        dict.fromkeys(outputs),
        "\n".join(code),
        language=dace.Language.CPP,
    )
    for connector, memlet in inputs.items():
        store.add_edge(store.add_read(memlet.data), None, tasklet, connector, memlet)
    for connector, memlet in outputs.items():
        store.add_edge(tasklet, connector, store.add_write(memlet.data), None, memlet)


def _add_scan_levels(
    ctx: BuildContext,
    inner: dace.SDFG,
    label: str,
    call: ir.ProgramCall,
    along: Dimension | None,
    width: int,
    buffered: set[str],
    tag: str,
    previous: Any,
    stage: Mapping[str, str] | None = None,
) -> Any:
    """The states of one scan call in the column SDFG `inner`, after `previous` (or
    first): its state set to `init`, then its loop region over the levels (returned).
    `tag` tells its state arrays from those of the other calls of a chain."""
    import dace
    from dace.sdfg.state import LoopRegion

    p = ctx.prefix
    scan = ctx.scans[call.callee]
    level = f"{p}level"
    if along is None:
        block: dict[str, str] = {}
        element = "0"
    else:
        stop = f"min({p}first + {width}, {p}columns_stop)"
        block = {index_symbol(along): f"{p}first:{stop}"}
        element = f"{index_symbol(along)} - {p}first"

    def state(k: int) -> str:
        return f"{p}state{tag}{'_' if tag else ''}{k}"

    for k, lit in enumerate(scan.init):
        if along is None:
            inner.add_scalar(state(k), dace_dtype(lit.type), transient=True)
        else:
            inner.add_array(
                state(k),
                [width],
                dace_dtype(lit.type),
                transient=True,
                storage=dace.StorageType.Register,
            )
    init = inner.add_state(f"{label}_init", is_start_block=previous is None)
    if previous is not None:
        inner.add_edge(previous, init, dace.InterstateEdge())
    init_code = "\n".join(
        f"{p}o{k} = {cpp_literal(lit.value, lit.type)};" for k, lit in enumerate(scan.init)
    )
    add_tasklet(
        init,
        f"{label}_init",
        {},
        {f"{p}o{k}": f"{state(k)}[{element}]" for k in range(len(scan.init))},
        init_code,
        block,
    )
    if scan.forward:
        loop = LoopRegion(
            f"{label}_levels",
            f"{level} < {p}stop",
            level,
            f"{level} = {p}start",
            f"{level} = {level} + 1",
            sdfg=inner,
        )
    else:
        loop = LoopRegion(
            f"{label}_levels",
            f"{level} >= {p}start",
            level,
            f"{level} = {p}stop - 1",
            f"{level} = {level} - 1",
            sdfg=inner,
        )
    inner.add_node(loop)
    inner.add_edge(init, loop, dace.InterstateEdge())
    body = loop.add_state(f"{label}_level", is_start_block=True)
    if along is not None:
        _add_block_level(ctx, inner, body, label, call, along, width, buffered, stage or {}, state)
        return loop
    inputs: dict[str, str] = {}

    def at_level(name: str) -> str:
        ftype = ctx.params[name]
        assert isinstance(ftype, ir.FieldType)
        indices = (level if d == scan.axis else index_symbol(d) for d in ftype.dims)
        return f"{name}[{', '.join(indices)}]"

    def read_argument(param: ir.Param, arg: ir.Expr) -> str:
        assert isinstance(arg, ir.Ref)
        connector = f"{p}in_{arg.name}"
        inputs[connector] = at_level(arg.name) if arg.name in ctx.fields else f"{arg.name}[0]"
        return connector

    def read_state(k: int) -> str:
        inputs[f"{p}s{k}"] = f"{state(k)}[{element}]"
        return f"{p}s{k}"

    statements, values = scan_level(
        scan,
        call,
        read_argument=read_argument,
        read_state=read_state,
        decimal_literals=True,
        prefix=f"{p}t",
    )
    outputs = {f"{p}n{k}": f"{state(k)}[{element}]" for k in range(len(values))}
    for k, name in enumerate(call.outs):
        if name not in ctx.unread:
            outputs[f"{p}out{k}_{name}"] = at_level(name)
    code = list(statements)
    for k, value in enumerate(values):
        code.append(f"{p}n{k} = {value};")
        if call.outs[k] not in ctx.unread:
            code.append(f"{p}out{k}_{call.outs[k]} = {value};")
    add_tasklet(body, f"{label}_level", inputs, outputs, "\n".join(code), {})
    return loop


def _add_block_level(
    ctx: BuildContext,
    inner: dace.SDFG,
    body: Any,
    label: str,
    call: ir.ProgramCall,
    along: Dimension,
    width: int,
    buffered: set[str],
    stage: Mapping[str, str],
    state: Any,
) -> None:
    """One level of a block of columns in the state `body`: one C++ tasklet whose loop over
    the block's columns is GTFN's (`#pragma omp simd`, steps/cpp/scans.scan_block). Each
    array is read and written through a pointer to the block's first column at the level,
    stepping by its stride along `along`; the state arrays (`state(k)`) through pointers to
    the block's state. Without the pragma GCC vectorizes the loop's strided (C order)
    version with half-width vectors."""
    import dace

    p = ctx.prefix
    scan = ctx.scans[call.callee]
    level = f"{p}level"
    stop = f"min({p}first + {width}, {p}columns_stop)"
    column = f"{p}b"
    inputs: dict[str, str] = {}
    outputs: dict[str, str] = {}
    loads: list[str] = []

    def at_level(name: str) -> tuple[str, str | None]:
        """The memlet of `name` at the level over the block's columns, and the C++ of its
        stride between neighbouring columns (None: one element for the whole block)."""
        if name in buffered or name in stage:
            return f"{stage.get(name, name)}[{level} - {p}start, 0:{stop} - {p}first]", "1"
        ftype = ctx.params[name]
        assert isinstance(ftype, ir.FieldType)
        strides = inner.arrays[name].strides
        indices = []
        stride = None
        for j, d in enumerate(ftype.dims):
            if d == scan.axis:
                indices.append(level)
            elif d == along:
                indices.append(f"{p}first:{stop}")
                stride = dace.symbolic.symstr(strides[j], cpp_mode=True)
            else:
                indices.append(index_symbol(d))
        return f"{name}[{', '.join(indices)}]", stride

    def read_argument(param: ir.Param, arg: ir.Expr) -> str:
        assert isinstance(arg, ir.Ref)
        connector = f"{p}in_{arg.name}"
        if arg.name not in ctx.fields:
            inputs[connector] = f"{arg.name}[0]"
            return connector
        memlet, stride = at_level(arg.name)
        if stride is None:
            inputs[connector] = memlet
            return connector
        value = f"{p}v_{arg.name}"
        if connector not in inputs:
            inputs[connector] = memlet
            loads.append(f"const auto {value} = {connector}[{column} * ({stride})];")
        return value

    def read_state(k: int) -> str:
        return f"{p}s{k}"

    statements, values = scan_level(
        scan,
        call,
        read_argument=read_argument,
        read_state=read_state,
        decimal_literals=True,
        prefix=f"{p}t",
    )
    loop = list(loads)
    for k, lit in enumerate(scan.init):
        inputs[f"{p}si{k}"] = f"{state(k)}[0:{width}]"
        outputs[f"{p}so{k}"] = f"{state(k)}[0:{width}]"
        loop.append(f"const {lit.type.cpp} {p}s{k} = {p}si{k}[{column}];")
    loop += statements
    for k, (lit, value) in enumerate(zip(scan.init, values)):
        loop.append(f"const {lit.type.cpp} {p}new{k} = {value};")
    for k in range(len(values)):
        loop.append(f"{p}so{k}[{column}] = {p}new{k};")
        name = call.outs[k]
        if name not in ctx.unread:
            memlet, stride = at_level(name)
            assert stride is not None  # every output has the block's dimension
            connector = f"{p}out{k}_{name}"
            outputs[connector] = memlet
            loop.append(f"{connector}[{column} * ({stride})] = {p}new{k};")
    # the block's columns, by a bound that names the level: one that does not lets GCC
    # unroll-and-jam the level loop (-O3), two levels' gathers at once, slower
    code = [
        f"const std::int64_t {p}columns = std::min<std::int64_t>({{{p}first + {width}, "
        f"{p}columns_stop, {p}columns_stop + {level} - {p}start}}) - {p}first;",
        "#pragma omp simd",
        f"for (std::int64_t {column} = 0; {column} < {p}columns; ++{column}) {{",
        *(f"    {line}" for line in loop),
        "}",
    ]
    add_tasklet(body, f"{label}_level", inputs, outputs, "\n".join(code), {})
