"""The SDFG of a program: its int64 symbols, its arrays and scalars (`calling_convention`),
one transient per temporary of the program, then one block per call (`maps`, `scans`) or
per chain of scans (`scans`: its temporaries in buffers of one block of columns, not
arrays), each run after the one before.

The transients are dense over the same size symbols, added widest dtype first (so that
packed one after another in a workspace every one stays aligned). A temporary whose
values no call needs is neither allocated nor written, and a call that writes only such
temporaries has no block (DaCe's dead-dataflow elimination cannot remove the outputs of
C++ tasklets itself); its domain is still checked, as on every backend (by the shim).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from stencilchain.program import ir
from stencilchain.program.own_ranges import below_zero_offsets
from stencilchain.steps.dace.build_context import BuildContext
from stencilchain.steps.dace.call_blocks import dace_dtype
from stencilchain.steps.dace.calling_convention import (
    has_stride_symbol,
    size_symbol,
    stride_symbol,
    symbol_names,
)
from stencilchain.steps.dace.maps import add_call
from stencilchain.steps.dace.scans import add_scan_call
from stencilchain.steps.settings import DataLayout

if TYPE_CHECKING:
    import dace

__all__ = ["program_sdfg"]


def program_sdfg(ctx: BuildContext) -> dace.SDFG:
    """The SDFG of the program of `ctx`, before optimization."""
    import dace

    program = ctx.program
    layout = ctx.data_layout
    sdfg = dace.SDFG(program.name)
    symbols = {name: dace.symbol(name, dace.int64) for name in symbol_names(program, layout)}
    for name in symbols:
        sdfg.add_symbol(name, dace.int64)
    for param in program.params:
        if isinstance(param.type, ir.FieldType):
            ftype = param.type
            shape = [symbols[size_symbol(d)] for d in ftype.dims]
            strides = [
                symbols[stride_symbol(param.name, axis)]
                if has_stride_symbol(ftype, axis, layout)
                else 1
                for axis in range(len(ftype.dims))
            ]
            # an input starting below 0 (program/own_ranges.py) is read from its start on:
            # DaCe's offset, and the shim passes a pointer to its first element
            offset = below_zero_offsets(program).get(param.name)
            if offset is not None:
                shape = [n + o for n, o in zip(shape, offset)]
            if not ftype.dims:  # a zero-dimensional field: an array of one element
                shape, strides = [1], [1]
            sdfg.add_array(
                param.name,
                shape,
                dace_dtype(ftype.dtype),
                strides=strides,
                offset=None if offset is None else list(offset),
            )
        else:
            sdfg.add_scalar(param.name, dace_dtype(param.type))
    widest_first = sorted(
        program.temporaries, key=lambda t: -program.field_type(t.name).dtype.numpy.itemsize
    )
    for temporary in widest_first:
        if temporary.name in ctx.unread or temporary.name in ctx.chained:
            continue
        ttype = program.field_type(temporary.name)
        shape = [symbols[size_symbol(d)] for d in ttype.dims] or [1]
        laid_out = layout is DataLayout.STRIDED and temporary.name in ctx.layouts
        sdfg.add_transient(
            temporary.name,
            shape,
            dace_dtype(ttype.dtype),
            strides=(
                [symbols[stride_symbol(temporary.name, a)] for a in range(len(ttype.dims))]
                if laid_out
                else None
            ),
            total_size=math.prod(shape),
        )
    chain_of = {chain[0]: chain for chain in ctx.chains}
    in_chains = {index for chain in ctx.chains for index in chain}
    previous = None
    for index, call in enumerate(program.calls):
        if index in chain_of:
            block = add_scan_call(ctx, sdfg, chain_of[index], symbols)
        elif index in in_chains or all(o in ctx.unread for o in call.outs):
            continue
        elif call.callee in ctx.scans:
            block = add_scan_call(ctx, sdfg, (index,), symbols)
        else:
            block = add_call(ctx, sdfg, index, call, symbols)
        if previous is not None:
            sdfg.add_edge(previous, block, dace.InterstateEdge())
        previous = block
    if previous is None:  # every call writes only temporaries no call reads
        sdfg.add_state("nothing_to_do", is_start_block=True)
    return sdfg
