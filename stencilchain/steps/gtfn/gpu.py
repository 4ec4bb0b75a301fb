"""CUDA kernels and their launches: one thread per point of a call (per column of a scan,
which walks its levels), in a grid-stride loop."""

from __future__ import annotations

from stencilchain.program import ir
from stencilchain.steps.cpp.signature import bound_var, index_var
from stencilchain.steps.gtfn.bodies import point_statements, scan_body
from stencilchain.steps.gtfn.context import TranslationContext, extents, names_of

CUDA_BLOCK_SIZE = 256


def gpu_kernel(ctx: TranslationContext, index: int, call: ir.ProgramCall) -> str:
    """The kernel of call `index`: one thread per point (per column of a scan)."""
    dims = [dd.dim for dd in call.domain.dims]
    threads = ctx.parallel_dims(call)
    params = ctx.signature.declaration()
    params = params[params.index("(") + 1 : params.rindex(", char* err")]
    for t in ctx.temporaries:
        params += f", {t.type.dtype.cpp}* {t.pointer}"
        params += "".join(f", std::int64_t {t.stride(a)}" for a in range(len(t.type.dims)))
    bounds = ", ".join(
        f"std::int64_t {bound_var(d, 'start')}, std::int64_t {bound_var(d, 'stop')}" for d in dims
    )
    if bounds:  # none for a zero-dimensional result
        params += f", {bounds}"
    lines = [f"__global__ void sc_kernel_{index}({params}) {{"]
    lines += [
        f"    const std::int64_t sc_total = {' * '.join(extents(threads) or ['1'])};",
        "    for (std::int64_t sc_idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;",
        "         sc_idx < sc_total; sc_idx += static_cast<std::int64_t>(blockDim.x) * gridDim.x) {",
        "        std::int64_t sc_rest = sc_idx;",
    ]
    for d in reversed(threads):
        extent = f"({bound_var(d, 'stop')} - {bound_var(d, 'start')})"
        lines.append(
            f"        const std::int64_t {index_var(d)} = {bound_var(d, 'start')} + sc_rest % {extent};"
        )
        lines.append(f"        sc_rest /= {extent};")
    lines.append("        (void)sc_rest;")
    access = ctx.access()
    body = scan_body(access, call) if call.callee in ctx.scans else point_statements(access, call)
    lines += ["        " + s for s in body]
    lines += ["    }", "}"]
    return "\n".join(lines)


def gpu_call(ctx: TranslationContext, index: int, call: ir.ProgramCall) -> list[str]:
    """The launch of kernel `index` over the call's points, and its error check."""
    dims = [dd.dim for dd in call.domain.dims]
    lines = ctx.domain_code(index)
    points = " * ".join(extents(ctx.parallel_dims(call)) or ["1"])
    args = ", ".join(
        ctx.signature.argument_names()
        + [n for t in ctx.temporaries for n in names_of(t)]
        + [bound_var(d, s) for d in dims for s in ("start", "stop")]
    )
    lines += [
        f"    const std::int64_t sc_points = {points};",
        f"    const std::int64_t sc_blocks = std::min<std::int64_t>((sc_points + {CUDA_BLOCK_SIZE - 1}) / {CUDA_BLOCK_SIZE}, 65535);",
        f"    sc_kernel_{index}<<<static_cast<unsigned>(sc_blocks), {CUDA_BLOCK_SIZE}>>>({args});",
        "    const cudaError_t sc_status = cudaGetLastError();",
        "    if (sc_status != cudaSuccess) {",
        f'        std::snprintf(err, err_len, "launch of {call.callee} in {ctx.original.name}() failed: %s", cudaGetErrorString(sc_status));',
        "        return 2;",
        "    }",
        "}",
    ]
    return lines
