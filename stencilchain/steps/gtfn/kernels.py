"""The CPU kernel functions' interface, shared by the plain and the tiled loop nests of a
call: their parameters and arguments, the `sc_unit` test that picks a kernel's
unit-stride instance, and the parallel region that runs them."""

from __future__ import annotations

from collections.abc import Sequence

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.ir_walk import refs_in
from stencilchain.steps.cpp.signature import FieldArg, bound_var, size_var
from stencilchain.steps.gtfn.context import TranslationContext, names_of


def team_or_caller(ctx: TranslationContext, name: str, body: Sequence[str]) -> list[str]:
    """`body` as a lambda `name` run by every thread of a team from `openmp_threshold`
    points on, else once on the calling thread without a team (a region whose `if`
    clause is false still starts a team of one). Outside a region `sc_num_threads()` is 1
    and an orphaned `omp for` runs every iteration."""
    return [
        f"const auto {name} = [&]() {{",
        *body,
        "};",
        f"if (sc_points >= {ctx.openmp_threshold}) {{",
        "#pragma omp parallel",
        f"    {name}();",
        "} else {",
        f"    {name}();",
        "}",
    ]


def unit_test(ctx: TranslationContext, call: ir.ProgramCall, along: Dimension) -> str:
    """`sc_unit`: whether every array the call reads or writes (but tables) has unit
    stride along `along`."""
    access = ctx.access()
    strides = [
        access.stride(f, f.type.dims.index(along))
        for f in call_fields(ctx, call)
        if along in f.type.dims and not isinstance(f.type, ir.TableType)
    ]
    unit = [f"{s} == 1" for s in strides if s != "1"]
    return f"const bool sc_unit = {' && '.join(unit) or 'true'};"


def call_fields(ctx: TranslationContext, call: ir.ProgramCall) -> list[FieldArg]:
    """The fields a call reads or writes (temporaries and tables included)."""
    names = [r.name for r in refs_in(*call.args) if isinstance(r.type, ir.FieldType)]
    unique = dict.fromkeys([*names, *call.outs])
    return [ctx.fields[n] for n in unique if n in ctx.fields]


def _arrays(ctx: TranslationContext) -> list[FieldArg]:
    """The arrays a kernel function takes: the program's fields and its temporaries
    that are not per-thread buffers of a scan chain."""
    return [
        *ctx.signature.fields,
        *(t for t in ctx.temporaries if t.name not in ctx.buffered),
    ]


def kernel_parameters(ctx: TranslationContext, dims: Sequence[Dimension]) -> list[str]:
    """The parameters of a kernel function: the program's arguments and the arrays of
    its temporaries, every pointer `__restrict__` (the bindings check that no output
    shares memory with another argument; temporaries are allocations of their own),
    then the call's bounds."""
    params: list[str] = []
    for f in _arrays(ctx):
        const = "" if f.written else "const "
        params.append(f"{const}{f.type.dtype.cpp}* __restrict__ {f.pointer}")
        params += [f"const std::int64_t {f.stride(a)}" for a in range(len(f.type.dims))]
    params += [f"const std::int64_t {size_var(d)}" for d in ctx.signature.dims]
    params += [f"const {s.dtype.cpp} {s.variable}" for s in ctx.signature.scalars]
    params += [
        f"const std::int64_t {bound_var(d, side)}" for d in dims for side in ("start", "stop")
    ]
    return params


def kernel_arguments(ctx: TranslationContext, dims: Sequence[Dimension]) -> list[str]:
    """The arguments of a kernel function's call, in the order of `kernel_parameters`."""
    names: list[str] = []
    for f in _arrays(ctx):
        names += names_of(f)
    names += [size_var(d) for d in ctx.signature.dims]
    names += [s.variable for s in ctx.signature.scalars]
    names += [bound_var(d, side) for d in dims for side in ("start", "stop")]
    return names
