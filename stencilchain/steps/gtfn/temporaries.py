"""The temporaries of a GTFN program: allocated per call from a per-program pool, after
the domain checks, and given back on every return (the helpers are temporaries.h and
cpu_pool.h or gpu_pool.h beside this module)."""

from __future__ import annotations

from stencilchain.steps.cpp.package_text import package_text
from stencilchain.steps.cpp.signature import FieldArg, ProgramSignature, size_var
from stencilchain.steps.settings import DataLayout

_PACKAGE = "stencilchain.steps.gtfn"


def temporary_helpers(gpu: bool, count: int) -> str:
    """The allocation helpers of a program with `count` temporaries."""
    if gpu:
        pool = package_text(_PACKAGE, "gpu_pool.h")
    else:
        pool = f"#define SC_POOL_CAPACITY {2 * count}\n" + package_text(_PACKAGE, "cpu_pool.h")
    return pool + package_text(_PACKAGE, "temporaries.h")


def allocations(
    temporaries: tuple[FieldArg, ...],
    signature: ProgramSignature,
    data_layout: DataLayout,
    program_name: str,
) -> list[str]:
    """The statements that allocate `temporaries` (status 5 if one cannot be): dense, with
    their axes ordered like the strides of the first field parameter over the same
    dimensions (C order without one, or with a unit-stride layout), so that loops chosen
    by the output's strides also stream the inputs."""
    lines = ["// temporaries"]
    for t in temporaries:
        dims, cpp, name = t.type.dims, t.type.dtype.cpp, t.name
        n = len(dims)
        sizes = ", ".join(size_var(d) for d in dims)
        like = next((f for f in signature.fields if f.type.dims == dims), None)
        if like is None or data_layout is DataLayout.UNIT_STRIDE:
            reference = ", ".join(["0"] * n)  # all ties: C order
        else:
            reference = ", ".join(f"{like.stride(a)}" for a in range(n))
        overflows = " || ".join(
            f"__builtin_mul_overflow(sc_bytes_{name}, static_cast<std::size_t>({size_var(d)}), "
            f"&sc_bytes_{name})"
            for d in dims
        )
        lines.append(f"sc_temporary sc_t_{name};")
        if n:  # a zero-dimensional temporary is one element, without strides
            lines += [
                f"std::int64_t sc_s_{name}[{n}];",
                "{",
                f"    const std::int64_t sc_like[{n}] = {{{reference}}};",
                f"    const std::int64_t sc_size[{n}] = {{{sizes}}};",
                f"    sc_dense_like({n}, sc_like, sc_size, sc_s_{name});",
                "}",
            ]
        lines.append(f"std::size_t sc_bytes_{name} = sizeof({cpp});")
        if n:
            lines += [
                "// more bytes than a size_t holds: SIZE_MAX, which no allocator grants",
                f"if ({overflows}) sc_bytes_{name} = SIZE_MAX;",
            ]
        lines += [
            f"if (sc_bytes_{name} == SIZE_MAX || !sc_allocate(sc_t_{name}, sc_bytes_{name})) {{",
            f'    std::snprintf(err, err_len, "cannot allocate %zu bytes for temporary {name} '
            f'of {program_name}()", sc_bytes_{name});',
            "    return 5;",
            "}",
            f"{cpp}* const {t.pointer} = static_cast<{cpp}*>(sc_t_{name}.data);",
        ]
        lines += [f"const std::int64_t {t.stride(a)} = sc_s_{name}[{a}];" for a in range(n)]
    return lines
