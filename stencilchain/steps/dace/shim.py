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
which order) defines `sc_dace::call`: on the first call it finds the DaCe library next to
the extension module (`dladdr` + a relative path), `dlopen`s it, looks up
`__dace_init_<sdfg>`, `__program_<sdfg>` and `__dace_exit_<sdfg>`, and creates DaCe's
state handle; every call then passes the struct's members to `__program_<sdfg>` in DaCe's
order. Each parameter type is checked against the member at compile time
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
Nothing here imports DaCe.
"""

from __future__ import annotations

import dataclasses
import json

from stencilchain.program import ir
from stencilchain.program.device import Device
from stencilchain.steps.cpp.domain_checks import domain_checks, parameter_bound
from stencilchain.steps.cpp.signature import ProgramSignature, size_var
from stencilchain.steps.dace.calling_convention import (
    bound_parameters,
    bound_symbol,
    size_symbol,
    stride_symbol,
    temporary_layouts,
)

NAMESPACE = "sc_dace"
ARGS_TYPE = "args_t"

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
    for f in sig.fields:
        cpp = f.type.dtype.cpp
        pointer = f.pointer if f.written else f"const_cast<{cpp}*>({f.pointer})"
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

    On the CPU, a call on arrays of fewer than `openmp_threshold` points runs the SDFG's
    parallel loops on one thread: starting a thread team costs more than such a call
    (the SDFG's OpenMP regions have no size condition of their own; GTFN's do).

    Every call's domain is checked before the SDFG runs (it runs all calls at once), so a
    DomainError leaves every output untouched; the message is GTFN's, for the first call
    whose domain leaves the arrays.
    """
    sig = ProgramSignature.of(program, workspace)
    members = shim_members(program)
    lines = [
        f"// generated by stencilchain: DaCe shim of program {program.name}",
        "#include <algorithm>",
        "#include <cstddef>",
        "#include <cstdint>",
        "#include <cstdio>",
        "#include <initializer_list>",
        "#ifdef _OPENMP",
        "#include <omp.h>",
        "#endif",
        "",
        f"namespace {NAMESPACE} {{",
        "// The stride of axis `axis` of a dense array of sizes `size` whose axes are ordered",
        "// like the strides `like`: the smallest |stride| fastest, on ties the later axis",
        "// (C order); GTFN's sc_dense_like.",
        "inline std::int64_t dense_stride(std::initializer_list<std::int64_t> like,",
        "                                 std::initializer_list<std::int64_t> size, int axis) {",
        "    const std::int64_t* l = like.begin();",
        "    const std::int64_t* s = size.begin();",
        "    const std::int64_t mine = l[axis] < 0 ? -l[axis] : l[axis];",
        "    std::int64_t stride = 1;",
        "    for (int k = 0; k < static_cast<int>(like.size()); ++k) {",
        "        const std::int64_t other = l[k] < 0 ? -l[k] : l[k];",
        "        if (other < mine || (other == mine && k > axis)) stride *= s[k] > 0 ? s[k] : 1;",
        "    }",
        "    return stride;",
        "}",
        "// The values the program's SDFG may take, named like the SDFG's arguments.",
        f"struct {ARGS_TYPE} {{",
        *(f"    {m.cpp_type} {m.name};" for m in members),
        "};",
        "// Runs the SDFG (defined by the adapter that DaCeCompiler appends to this unit), its",
        "// external transients in `workspace` (null without them).",
        f"int call(const {ARGS_TYPE}& a, char* workspace, char* err, std::size_t err_len);",
        "// The bytes of workspace a call with these symbols needs.",
        f"int workspace_size(const {ARGS_TYPE}& a, std::size_t* needed, char* err, std::size_t err_len);",
        f"}}  // namespace {NAMESPACE}",
        "",
        f"{sig.declaration()} {{",
        f"    {NAMESPACE}::{ARGS_TYPE} sc_a;",
        *(f"    sc_a.{m.name} = {m.value};" for m in members),
    ]
    if workspace:
        lines += [
            "    if (sc_workspace == nullptr) {  // a query: the size this call needs",
            f"        return {NAMESPACE}::workspace_size(sc_a, sc_workspace_needed, err, err_len);",
            "    }",
        ]
    lines += ["    " + line for line in domain_checks(program)]
    ws = "nullptr"
    if workspace:
        ws = "sc_workspace"
        lines += [
            "    std::size_t sc_needed = 0;",
            f"    const int sc_query = {NAMESPACE}::workspace_size(sc_a, &sc_needed, err, err_len);",
            "    if (sc_query != 0) return sc_query;",
            "    if (sc_workspace_nbytes < sc_needed) {",
            f'        std::snprintf(err, err_len, "{program.name}(): the workspace has %zu bytes, but '
            'this call needs %zu (workspace_size(*args) tells how many)", sc_workspace_nbytes, '
            "sc_needed);",
            "        return 4;",
            "    }",
        ]
    if device is Device.CPU and sig.dims:
        points = " * ".join(size_var(d) for d in sig.dims)
        lines += [
            "#ifdef _OPENMP",
            f"    if ({points} < {openmp_threshold}) {{  // too small for a thread team",
            "        const int sc_threads = omp_get_max_threads();",
            "        omp_set_num_threads(1);",
            f"        const int sc_status = {NAMESPACE}::call(sc_a, {ws}, err, err_len);",
            "        omp_set_num_threads(sc_threads);",
            "        return sc_status;",
            "    }",
            "#endif",
        ]
    lines += [f"    return {NAMESPACE}::call(sc_a, {ws}, err, err_len);", "}", ""]
    return "\n".join(lines)


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
    q = json.dumps  # a C string literal of ASCII text
    name = program.name
    program_params = ", ".join(["void*", *(a.declaration for a in program_args)])
    init_params = ", ".join(a.declaration for a in init_args)
    checks = [
        f"static_assert(std::is_same<sc_param_t<program_t, {k + 1}>, "
        f"decltype({ARGS_TYPE}::{a.name})>::value,\n"
        f'              "DaCe argument {a.name} of {sdfg_name} differs in type from what '
        f'stencilchain passes");'
        for k, a in enumerate(program_args)
    ] + [
        f"static_assert(std::is_same<sc_param_t<init_t, {k}>, "
        f"decltype({ARGS_TYPE}::{a.name})>::value,\n"
        f'              "DaCe init argument {a.name} of {sdfg_name} differs in type");'
        for k, a in enumerate(init_args)
    ]
    init_call = ", ".join(f"a.{x.name}" for x in init_args)
    program_call = ", ".join(["state", *(f"a.{x.name}" for x in program_args)])
    symbols = [f"a.{x.name}" for x in init_args]
    lines = [
        "",
        f"// appended by DaCeCompiler: runs the DaCe SDFG {sdfg_name} of program {name}",
        "#include <dlfcn.h>",
        "#include <pthread.h>",
        "#include <atomic>",
        "#include <climits>",
        "#include <cstdlib>",
        "#include <cstring>",
        "#include <new>",
        "#include <tuple>",
        "#include <type_traits>",
        "",
        f"namespace {NAMESPACE} {{",
        "namespace {",
        f"using init_t = void* (*)({init_params});",
        f"using program_t = void (*)({program_params});",
        "using exit_t = int (*)(void*);",
        "using last_error_t = int (*)(void*);",
        f"using memory_size_t = std::size_t (*)({', '.join(['void*', *(x.declaration for x in init_args)])});",
        f"using set_memory_t = void (*)({', '.join(['void*', 'char*', *(x.declaration for x in init_args)])});",
        "",
        "template <class F> struct sc_params;",
        "template <class R, class... A> struct sc_params<R (*)(A...)> {",
        "    template <std::size_t K> using at = std::tuple_element_t<K, std::tuple<A...>>;",
        "};",
        "template <class F, std::size_t K> using sc_param_t = typename sc_params<F>::template at<K>;",
        *checks,
        "",
        f"const char* const sc_library = {q(library)};",
        f'const char* const sc_where = "program {name}() (DaCe SDFG {sdfg_name})";',
        "init_t sc_init = nullptr;",
        "program_t sc_program = nullptr;",
        "exit_t sc_exit = nullptr;",
        "last_error_t sc_last_error = nullptr;",
        "memory_size_t sc_memory_size = nullptr;",
        "set_memory_t sc_set_memory = nullptr;",
        "pthread_mutex_t sc_mutex = PTHREAD_MUTEX_INITIALIZER;",
        "struct sc_lock {  // <mutex> would double the unit's compile time",
        "    sc_lock() { pthread_mutex_lock(&sc_mutex); }",
        "    ~sc_lock() { pthread_mutex_unlock(&sc_mutex); }",
        "};",
        "std::atomic<void*> sc_state{nullptr};",
        f"std::int64_t sc_symbols[{max(len(init_args), 1)}] = {{}};",
        "",
        "void sc_finalize() {",
        "    void* state = sc_state.exchange(nullptr);",
        "    if (state != nullptr) sc_exit(state);",
        "}",
        "",
        "// dlopen the DaCe library beside this module; false with a message in `err` if it fails",
        "bool sc_load(char* err, std::size_t err_len) {",
        "    if (sc_program != nullptr) return true;",
        "    Dl_info info;",
        "    if (dladdr(reinterpret_cast<void*>(&sc_finalize), &info) == 0 || info.dli_fname == nullptr) {",
        '        std::snprintf(err, err_len, "%s: cannot locate its extension module", sc_where);',
        "        return false;",
        "    }",
        "    char path[PATH_MAX + 256];",
        "    const char* slash = std::strrchr(info.dli_fname, '/');",
        "    const int folder = slash == nullptr ? 1 : static_cast<int>(slash - info.dli_fname);",
        '    std::snprintf(path, sizeof(path), "%.*s/%s", folder, slash == nullptr ? "." : info.dli_fname, sc_library);',
        "    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);",
        "    if (handle == nullptr) {",
        "        const char* why = dlerror();",
        '        std::snprintf(err, err_len, "%s: cannot load %s: %s (the build folder is damaged: '
        'remove it and the program is rebuilt)", sc_where, path, why ? why : "");',
        "        return false;",
        "    }",
        f'    sc_init = reinterpret_cast<init_t>(dlsym(handle, "__dace_init_{sdfg_name}"));',
        f'    sc_exit = reinterpret_cast<exit_t>(dlsym(handle, "__dace_exit_{sdfg_name}"));',
        '    sc_last_error = reinterpret_cast<last_error_t>(dlsym(handle, "__dace_gpu_last_error"));',
        f'    program_t program = reinterpret_cast<program_t>(dlsym(handle, "__program_{sdfg_name}"));',
        "    if (sc_init == nullptr || sc_exit == nullptr || program == nullptr) {",
        '        std::snprintf(err, err_len, "%s: %s lacks the functions of the SDFG", sc_where, path);',
        "        return false;",
        "    }",
        *(
            [
                "    sc_memory_size = reinterpret_cast<memory_size_t>(dlsym(handle, "
                f'"__dace_get_external_memory_size_{workspace_storage}"));',
                "    sc_set_memory = reinterpret_cast<set_memory_t>(dlsym(handle, "
                f'"__dace_set_external_memory_{workspace_storage}"));',
                "    if (sc_memory_size == nullptr || sc_set_memory == nullptr) {",
                '        std::snprintf(err, err_len, "%s: %s lacks the external-memory functions of the SDFG", sc_where, path);',
                "        return false;",
                "    }",
            ]
            if workspace_storage is not None
            else []
        ),
        "    sc_program = program;",
        "    return true;",
        "}",
        "",
        *_temporaries_fit(program, gpu),
        "// (re)create DaCe's state handle for the symbol values of `a`; call under sc_mutex;",
        "// null with a status (3, or 5: memory) and a message in `err` if it fails",
        f"void* sc_initialize(const {ARGS_TYPE}& a, char* err, std::size_t err_len, int* status) {{",
        "    *status = 3;",
        "    if (!sc_load(err, err_len)) return nullptr;",
        "    static bool registered = false;",
        "    void* old = sc_state.exchange(nullptr);",
        "    if (old != nullptr) sc_exit(old);",
        *(
            [
                "    if (!sc_temporaries_fit(a, err, err_len)) {",
                "        *status = 5;",
                "        return nullptr;",
                "    }",
            ]
            if init_reads_symbols and _checks_temporaries(program, gpu)
            else []
        ),
        "    void* state = nullptr;",
        "    try {  // DaCe allocates persistent transients with new",
        f"        state = sc_init({init_call});",
        "    } catch (const std::bad_alloc&) {",
        '        std::snprintf(err, err_len, "cannot allocate the temporaries of %s", sc_where);',
        "        *status = 5;",
        "        return nullptr;",
        "    }",
        "    if (state == nullptr) {",
        '        std::snprintf(err, err_len, "%s: DaCe failed to initialize it", sc_where);',
        "        return nullptr;",
        "    }",
    ]
    lines += [f"    sc_symbols[{k}] = {s};" for k, s in enumerate(symbols)]
    lines += [
        "    sc_state.store(state, std::memory_order_release);",
        "    if (!registered) {",
        "        registered = true;",
        "        std::atexit(&sc_finalize);",
        "    }",
        "    return state;",
        "}",
        "",
    ]
    if init_reads_symbols:
        differs = " || ".join(f"sc_symbols[{k}] != {s}" for k, s in enumerate(symbols)) or "false"
        lines += [
            f"bool sc_symbols_differ(const {ARGS_TYPE}& a) {{",
            f"    return {differs};",
            "}",
        ]
    stale = "state == nullptr || sc_symbols_differ(a)" if init_reads_symbols else "state == nullptr"
    # with the lock held: the state for the symbols of `a`
    locked_state = [
        "    void* state = sc_state.load(std::memory_order_relaxed);",
        f"    if ({stale}) {{",
        "        int status;",
        "        state = sc_initialize(a, err, err_len, &status);",
        "        if (state == nullptr) return status;",
        "    }",
    ]
    init_values = "".join(f", a.{x.name}" for x in init_args)
    lines.append("}  // namespace")
    lines.append("")
    if workspace_storage is None:
        lines += [
            f"int workspace_size(const {ARGS_TYPE}&, std::size_t* needed, char*, std::size_t) {{",
            "    *needed = 0;  // no external transients",
            "    return 0;",
            "}",
        ]
    else:
        lines += [
            f"int workspace_size(const {ARGS_TYPE}& a, std::size_t* needed, char* err, std::size_t err_len) {{",
            "    sc_lock lock;",
            *locked_state,
            f"    *needed = sc_memory_size(state{init_values});",
            "    return 0;",
            "}",
        ]
    lines += [
        "",
        f"int call(const {ARGS_TYPE}& a, char* workspace, char* err, std::size_t err_len) {{",
    ]
    if init_reads_symbols or workspace_storage is not None:
        lines += [
            "    // DaCe's state holds persistent transients or the workspace pointer, which",
            "    // depend on the call: one call at a time",
            "    sc_lock lock;",
            *locked_state,
        ]
    else:
        lines += [
            "    (void)workspace;",
            "    void* state = sc_state.load(std::memory_order_acquire);",
            "    if (state == nullptr) {",
            "        sc_lock lock;",
            "        state = sc_state.load(std::memory_order_acquire);",
            "        int status = 3;",
            "        if (state == nullptr) state = sc_initialize(a, err, err_len, &status);",
            "        if (state == nullptr) return status;",
            "    }",
        ]
    if workspace_storage is not None:
        lines.append(f"    sc_set_memory(state, workspace{init_values});")
    if not init_reads_symbols and _checks_temporaries(program, gpu):
        # transients allocated by the program itself: refused before any output is written
        lines.append("    if (!sc_temporaries_fit(a, err, err_len)) return 5;")
    lines += [
        "    try {",
        f"        sc_program({program_call});",
        "    } catch (const std::bad_alloc&) {",
        '        std::snprintf(err, err_len, "cannot allocate the temporaries of %s", sc_where);',
        "        return 5;",
        "    }",
    ]
    if gpu:
        lines += [
            "    if (sc_last_error != nullptr) {",
            "        const int code = sc_last_error(state);",
            "        if (code != 0) {",
            '            std::snprintf(err, err_len, "%s failed on the GPU (error %d)", sc_where, code);',
            "            return 2;",
            "        }",
            "    }",
        ]
    lines += ["    return 0;", "}", f"}}  // namespace {NAMESPACE}", ""]
    return "\n".join(lines)


def _checks_temporaries(program: ir.Program, gpu: bool) -> bool:
    return bool(program.temporaries) and not gpu


def _temporaries_fit(program: ir.Program, gpu: bool) -> list[str]:
    """`sc_temporaries_fit(a, err, err_len)`: whether memory for each of the program's
    temporaries can be had (a trial allocation of its bytes), else false with GTFN's
    MemoryError message naming the first that cannot; empty on the GPU or without
    temporaries. DaCe's own allocation (`new`) of a transient too large would end the
    process."""
    if not _checks_temporaries(program, gpu):
        return []
    lines = [
        f"bool sc_temporaries_fit(const {ARGS_TYPE}& a, char* err, std::size_t err_len) {{",
        "    std::size_t bytes;",
        "    bool over;",
        "    void* trial;",
    ]
    for temporary in program.temporaries:
        ftype = program.field_type(temporary.name)
        lines += [f"    bytes = {ftype.dtype.numpy.itemsize};", "    over = false;"]
        lines += [
            f"    over = over || __builtin_mul_overflow(bytes, static_cast<std::size_t>("
            f"a.{size_symbol(d)} > 0 ? a.{size_symbol(d)} : 0), &bytes);"
            for d in ftype.dims
        ]
        lines += [
            "    trial = over ? nullptr : std::malloc(bytes > 0 ? bytes : 1);",
            "    if (trial == nullptr) {",
            f'        std::snprintf(err, err_len, "cannot allocate %zu bytes for temporary '
            f'{temporary.name} of {program.name}()", over ? SIZE_MAX : bytes);',
            "        return false;",
            "    }",
            "    std::free(trial);",
        ]
    lines += ["    return true;", "}", ""]
    return lines
