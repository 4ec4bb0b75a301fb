"""The C++ between the argument-checking module and a DaCe-compiled SDFG: the shim and
its adapter.

The DaCe toolchain's bindings are the argument-checking module both families use
(`stencilchain.steps.cpp.extension_module`); it calls

    int sc_run_<program>(<pointers, element strides>, <sizes>, <scalars>, char* err, size_t err_len)

(`ProgramSignature.declaration()`). The *shim* (`shim_source`, written by `DaCeBindings`)
defines that function: it checks each call's domain against the arrays exactly like the
GTFN program does (the same C++, from `stencilchain.steps.cpp.domain_checks`, so the same
DomainError messages), gathers the values into a struct whose members are named like the SDFG's
arguments (`f`, `f_s0`, `n_I`, `alpha`, ...), and passes it to `sc_dace::call`.

The *adapter* (`adapter_source`, written by `DaCeCompiler` after DaCe generated the code,
because only DaCe's code generator knows which arguments the compiled SDFG takes and in
which order) defines `sc_dace::call`. The module `dlopen`s the DaCe library next to it
(`dladdr` + a relative path) as it is loaded (a constructor function: so that a member of
a `compile_many` batch imported later, whose module is the same file loaded once, finds
the library even if the entry the batch's file was loaded from is gone by then; ADR
0063); on the first call the adapter looks up `__dace_init_<sdfg>`, `__program_<sdfg>`
and `__dace_exit_<sdfg>` (opening the library then if the load could not) and creates
DaCe's state handle; every call then passes the struct's members to `__program_<sdfg>`
in DaCe's order. Each parameter type is checked against the member at compile time
(`static_assert`), so a mismatch is a build error, never a silent conversion.

DaCe's `__dace_init_<sdfg>` takes the SDFG's free symbols. It uses them only to allocate
persistent or global transients and in user init code; without those (`init_reads_symbols`
False) the handle is created once per process, with the first call's values, as DaCe's own
`CompiledSDFG` does. With them, the adapter re-creates the handle whenever the values
change and serializes calls (the transients are shared state). The handle is finalized at
process exit (`std::atexit`, registered after the DaCe library and its runtimes have
initialized, so it runs before their own teardown).

External workspace: when the SDFG's transients have External lifetime (the translator's
`external_workspace`), `sc_run_<program>` takes the workspace (see `ProgramSignature`).
A null workspace asks for its size: DaCe's `__dace_get_external_memory_size_<storage>`
for the call's symbols. Otherwise the shim checks that the buffer is large enough (a
WorkspaceError, status 4, if not), and the adapter hands it to DaCe with
`__dace_set_external_memory_<storage>` right before `__program_<sdfg>`, both under the
adapter's lock: DaCe keeps the pointer in its state, which all calls share.

The two pieces are one translation unit: the compiler appends the adapter to the shim.
The fixed C++ of both is package data (shim.cpp, in sections); only what varies per
program is written here. Nothing here imports DaCe.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import string

from stencilchain.program import ir
from stencilchain.program.device import Device
from stencilchain.program.own_ranges import below_zero_offsets
from stencilchain.steps.cpp.domain_checks import domain_bounds, domain_checks, parameter_bound
from stencilchain.steps.cpp.package_text import package_text
from stencilchain.steps.cpp.signature import ProgramSignature, bound_var, size_var
from stencilchain.steps.dace.calling_convention import (
    bound_parameters,
    bound_symbol,
    field_bound_symbol,
    field_bounds,
    size_symbol,
    stride_symbol,
    temporary_layouts,
)

NAMESPACE = "sc_dace"
ARGS_TYPE = "args_t"
_PACKAGE = "stencilchain.steps.dace"
_SECTION = "//@ "  # the line that starts a section of shim.cpp

__all__ = [
    "ARGS_TYPE",
    "NAMESPACE",
    "CArgument",
    "ShimMember",
    "adapter_source",
    "shim_members",
    "shim_source",
]


@dataclasses.dataclass(frozen=True)
class ShimMember:
    """One member of the shim's argument struct: named like the SDFG's argument, of the
    C++ type the SDFG takes, set from `value` (a parameter of `sc_run_<program>`)."""

    name: str
    cpp_type: str
    value: str


def shim_members(program: ir.Program) -> tuple[ShimMember, ...]:
    """Every value an SDFG of `program` may take: field pointers, strides (every axis; the
    SDFG of a unit-stride layout takes fewer), sizes, scalars and the parameter bounds
    (`bound_symbol`, resolved like the domain checks resolve them). Names follow the
    translator's calling convention (`size_symbol`, `stride_symbol`)."""
    sig = ProgramSignature.of(program)
    members: list[ShimMember] = []
    below = below_zero_offsets(program)
    for f in sig.fields:
        cpp = f.type.dtype.cpp
        pointer = f.pointer if f.written else f"const_cast<{cpp}*>({f.pointer})"
        if f.name in below:  # to its first element, below index 0: the array's DaCe offset
            back = [f"{o} * {f.stride(a)}" for a, o in enumerate(below[f.name]) if o]
            pointer = f"({pointer} - ({' + '.join(back)}))"
        members.append(ShimMember(f.name, f"{cpp}*", pointer))
        members += [
            ShimMember(stride_symbol(f.name, a), "std::int64_t", f.stride(a))
            for a in range(len(f.type.dims))
        ]
    fields = {f.name: f for f in sig.fields}
    for name, like in temporary_layouts(program).items():
        dims = program.field_type(name).dims
        strides = ", ".join(fields[like].stride(a) for a in range(len(dims)))
        sizes = ", ".join(size_var(d) for d in dims)
        members += [
            ShimMember(
                stride_symbol(name, a),
                "std::int64_t",
                f"{NAMESPACE}::dense_stride({{{strides}}}, {{{sizes}}}, {a})",
            )
            for a in range(len(dims))
        ]
    members += [ShimMember(size_symbol(d), "std::int64_t", size_var(d)) for d in sig.dims]
    members += [ShimMember(s.name, s.dtype.cpp, s.variable) for s in sig.scalars]
    members += [
        ShimMember(bound_symbol(param, dim), "std::int64_t", parameter_bound(dim, param))
        for param, dim in bound_parameters(program)
    ]
    members += [
        ShimMember(field_bound_symbol(b, dim), "std::int64_t", size_var(dim) if b.from_end else "0")
        for b, dim in field_bounds(program)
    ]
    names = [m.name for m in members]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(
            f"program {program.name}(): the names {duplicates} denote two values of the DaCe "
            "calling convention (a parameter named like a size n_<dim> or a stride "
            "<field>_s<axis>); rename the parameter"
        )
    return tuple(members)


def shim_source(
    program: ir.Program, device: Device, openmp_threshold: int = 65536, workspace: bool = False
) -> str:
    """The shim: `sc_run_<program>` with the domain checks of both families, calling
    `sc_dace::call`.

    On the CPU, a call whose program calls all have domains of fewer than
    `openmp_threshold` points runs the SDFG's parallel loops on one thread: starting a
    thread team costs more than such a call (the SDFG's OpenMP regions have no size
    condition of their own; GTFN's do, on each call's domain). The arrays' sizes are not
    the measure: an ICON-like call over a few cells of a large mesh is small.

    Every call's domain is checked before the SDFG runs (it runs all calls at once), so a
    DomainError leaves every output untouched; the message is GTFN's, for the first call
    whose domain leaves the arrays.
    """
    sig = ProgramSignature.of(program, workspace)
    section = _Sections(program=program.name, namespace=NAMESPACE, args_type=ARGS_TYPE)
    members = shim_members(program)
    parts = [section("shim_head")]
    parts += [section("shim_member", cpp_type=m.cpp_type, name=m.name) for m in members]
    parts.append(section("shim_declarations", declaration=sig.declaration()))
    parts += [section("shim_set_member", name=m.name, value=m.value) for m in members]
    if workspace:
        parts.append(section("shim_workspace_query"))
    parts += ["    " + line for line in domain_checks(program)]
    ws = "sc_workspace" if workspace else "nullptr"
    if workspace:
        parts.append(section("shim_workspace_check"))
    if device is Device.CPU and sig.dims:
        parts.append(section("shim_small_call"))
        parts += _call_points(program, section)
        parts.append(section("shim_small_call_run", threshold=str(openmp_threshold), workspace=ws))
    parts += [section("shim_end", workspace=ws), ""]
    return "\n".join(parts)


def _call_points(program: ir.Program, section: _Sections) -> list[str]:
    """The points of each call's domain, the most of them gathered into `sc_points`
    (after the domain checks, so each extent lies within its arrays and the product
    cannot overflow)."""
    parts = []
    for index, call in enumerate(program.calls):
        extents = []
        for dd in call.domain.dims:
            start, stop = bound_var(dd.dim, "start"), bound_var(dd.dim, "stop")
            extents.append(f"({stop} > {start} ? {stop} - {start} : 0)")
        bounds = "\n".join(" " * 8 + line for line in domain_bounds(call))
        points = " * ".join(extents) or "1"  # a zero-dimensional domain: its one point
        parts.append(section("shim_call_points", index=str(index), bounds=bounds, points=points))
    return parts


@dataclasses.dataclass(frozen=True)
class CArgument:
    """One parameter of a DaCe-generated function: its C declaration and its name."""

    declaration: str  # e.g. "double * __restrict__ f"
    name: str  # e.g. "f"


def adapter_source(
    *,
    program: ir.Program,
    sdfg_name: str,
    library: str,
    program_args: tuple[CArgument, ...],
    init_args: tuple[CArgument, ...],
    init_reads_symbols: bool,
    gpu: bool,
    workspace_storage: str | None = None,
) -> str:
    """The definition of `sc_dace::call` for the SDFG `sdfg_name`.

    `library` is the DaCe library's path relative to the extension module's folder;
    `program_args` and `init_args` are the parameters of `__program_<sdfg>` (after the
    state handle) and `__dace_init_<sdfg>`, in DaCe's order. `workspace_storage` names
    the DaCe storage (e.g. "CPU_Heap") of the SDFG's external transients, None without
    them. ValueError if the SDFG takes an argument the shim does not provide.
    """
    members = {m.name: m for m in shim_members(program)}
    for arg in (*program_args, *init_args):
        if arg.name not in members:
            raise ValueError(
                f"the SDFG {sdfg_name} of program {program.name}() takes an argument "
                f"'{arg.name}' that is none of its fields, strides (<field>_s<axis>), sizes "
                f"(n_<dim>) or scalars: {sorted(members)}"
            )
    init_declarations = [a.declaration for a in init_args]
    symbols = [f"a.{x.name}" for x in init_args]
    init_values = "".join(f", {s}" for s in symbols)
    stale = "state == nullptr || sc_symbols_differ(a)" if init_reads_symbols else "state == nullptr"
    section = _Sections(
        sdfg=sdfg_name,
        program=program.name,
        namespace=NAMESPACE,
        args_type=ARGS_TYPE,
        init_params=", ".join(init_declarations),
        program_params=", ".join(["void*", *(a.declaration for a in program_args)]),
        program_want="".join(f", decltype({ARGS_TYPE}::{a.name})" for a in program_args),
        init_want=", ".join(f"decltype({ARGS_TYPE}::{a.name})" for a in init_args),
        memory_size_params=", ".join(["void*", *init_declarations]),
        set_memory_params=", ".join(["void*", "char*", *init_declarations]),
        library=json.dumps(library),  # a C string literal of ASCII text
        symbol_count=str(max(len(init_args), 1)),
        storage=workspace_storage or "",
        init_call=", ".join(symbols),
        init_values=init_values,
        stale=stale,
        program_call=", ".join(["state", *(f"a.{x.name}" for x in program_args)]),
        differs=" || ".join(f"sc_symbols[{k}] != {s}" for k, s in enumerate(symbols)) or "false",
    )
    parts = [section("adapter_head")]
    parts += [
        section("adapter_program_arg_check", position=str(k + 1), arg=a.name)
        for k, a in enumerate(program_args)
    ]
    parts += [
        section("adapter_init_arg_check", position=str(k), arg=a.name)
        for k, a in enumerate(init_args)
    ]
    parts.append(section("adapter_load"))
    if workspace_storage is not None:
        parts.append(section("adapter_load_workspace"))
    parts.append(section("adapter_load_end"))
    if _checks_temporaries(program, gpu):
        parts += _temporaries_fit(program, section)
    parts.append(section("adapter_initialize"))
    if init_reads_symbols and _checks_temporaries(program, gpu):
        parts.append(section("adapter_initialize_temporaries_fit"))
    parts.append(section("adapter_initialize_state"))
    parts += [
        section("adapter_record_symbol", position=str(k), symbol=s) for k, s in enumerate(symbols)
    ]
    parts.append(section("adapter_initialize_end"))
    if init_reads_symbols:
        parts.append(section("adapter_symbols_differ"))
    parts.append(section("adapter_end_of_locals"))
    if workspace_storage is None:
        parts.append(section("adapter_workspace_size_without"))
    else:
        parts += [
            section("adapter_workspace_size"),
            section("adapter_locked_state"),
            section("adapter_workspace_size_end"),
        ]
    parts.append(section("adapter_call"))
    if init_reads_symbols or workspace_storage is not None:
        parts += [section("adapter_call_locked"), section("adapter_locked_state")]
    else:
        parts.append(section("adapter_call_unlocked"))
    if workspace_storage is not None:
        parts.append(section("adapter_set_memory"))
    if not init_reads_symbols and _checks_temporaries(program, gpu):
        # transients allocated by the program itself: refused before any output is written
        parts.append(section("adapter_call_temporaries_fit"))
    parts.append(section("adapter_run"))
    if gpu:
        parts.append(section("adapter_gpu_error"))
    parts += [section("adapter_end"), ""]
    return "\n".join(parts)


class _Sections:
    """The sections of shim.cpp (package data): `section(name, **values)` is the text of
    section `name` (its lines joined, no final newline) with its `${...}` filled in from
    `values` and the program's values given at construction."""

    def __init__(self, **values: str) -> None:
        self.values = values

    def __call__(self, name: str, /, **values: str) -> str:
        return _cpp_sections()[name].substitute(self.values, **values)


@functools.cache
def _cpp_sections() -> dict[str, string.Template]:
    """shim.cpp cut at its lines `//@ <name>` (the text before the first is a comment)."""
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for line in package_text(_PACKAGE, "shim.cpp").splitlines():
        if line.startswith(_SECTION):
            current = sections.setdefault(line[len(_SECTION) :], [])
        else:
            current.append(line)
    return {name: string.Template("\n".join(lines)) for name, lines in sections.items()}


def _checks_temporaries(program: ir.Program, gpu: bool) -> bool:
    return bool(program.temporaries) and not gpu


def _temporaries_fit(program: ir.Program, section: _Sections) -> list[str]:
    """`sc_temporaries_fit(a, err, err_len)`: whether memory for each of the program's
    temporaries can be had (a trial allocation of its bytes), else false with GTFN's
    MemoryError message naming the first that cannot (only on the CPU with temporaries,
    `_checks_temporaries`). DaCe's own allocation (`new`) of a transient too large would
    end the process."""
    parts = [section("adapter_temporaries_fit")]
    for temporary in program.temporaries:
        ftype = program.field_type(temporary.name)
        parts.append(section("adapter_temporary_bytes", itemsize=str(ftype.dtype.numpy.itemsize)))
        parts += [section("adapter_temporary_times_size", size=size_symbol(d)) for d in ftype.dims]
        parts.append(section("adapter_temporary_trial", temporary=temporary.name))
    parts.append(section("adapter_temporaries_fit_end"))
    return parts
