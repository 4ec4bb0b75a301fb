"""GTFN translation: program IR -> C++17 source (OpenMP loops) or CUDA kernels."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from stencilchain.program import ir
from stencilchain.program.device import Device
from stencilchain.program.dimensions import Dimension
from stencilchain.program.transforms import transform_program
from stencilchain.steps.gtfn.cpp_expressions import (
    ExpressionEmitter,
    cpp_type,
    literal,
    prelude,
)
from stencilchain.steps.gtfn.signature import (
    FieldArg,
    ProgramSignature,
    bound_var,
    index_var,
    size_var,
)
from stencilchain.steps.settings import DataLayout
from stencilchain.steps.stages import ProgramSource

CUDA_BLOCK_SIZE = 256


@dataclasses.dataclass(frozen=True)
class GTFNTranslationStep:
    """Program IR -> ProgramSource holding C++ (CPU) or CUDA (GPU) code.

    `device` has no default on purpose: a builder that forgets it fails.
    `enable_transforms` inlines field-operator calls, folds constants and shares common
    subexpressions; without it each field operator becomes a C++ function template.
    Calls over fewer than `openmp_threshold` points run serially.
    """

    device: Device
    enable_transforms: bool = True
    data_layout: DataLayout = DataLayout.STRIDED
    openmp_threshold: int = 65536

    def __post_init__(self) -> None:
        if not isinstance(self.device, Device):
            raise TypeError(f"GTFNTranslationStep.device must be a Device, got {self.device!r}")
        if not isinstance(self.data_layout, DataLayout):
            raise TypeError(f"data_layout must be a DataLayout, got {self.data_layout!r}")

    def __call__(self, program: ir.Program, /) -> ProgramSource:
        return ProgramSource(
            program=program,
            entry_point=program.name,
            source_code=_Translator(self, program).source(),
            language="cuda" if self.device is Device.GPU else "cpp",
            device=self.device,
        )


class _Translator:
    def __init__(self, step: GTFNTranslationStep, program: ir.Program) -> None:
        self.step = step
        self.original = program
        self.program = transform_program(program) if step.enable_transforms else program
        self.signature = ProgramSignature.of(program)
        self.temporaries = tuple(
            FieldArg(t.name, program.field_type(t.name), True) for t in program.temporaries
        )
        self.fields = {f.name: f for f in (*self.signature.fields, *self.temporaries)}
        self.scalars = {s.name: s.variable for s in self.signature.scalars}
        self.fops = {f.name: f for f in self.program.field_operators}
        self.gpu = step.device is Device.GPU

    # --- memory access -----------------------------------------------------------------

    def stride(self, field: FieldArg, axis: int) -> str:
        last = axis == len(field.type.dims) - 1
        if self.step.data_layout is DataLayout.UNIT_STRIDE and last:
            return "1"
        return field.stride(axis)

    def read_field(self, name: str, pos: Mapping[Dimension, int]) -> str:
        field = self.fields[name]
        return f"{field.pointer}[{self.offset(field, pos)}]"

    def offset(self, field: FieldArg, pos: Mapping[Dimension, int]) -> str:
        terms = []
        for axis, dim in enumerate(field.type.dims):
            amount = pos.get(dim, 0)
            index = index_var(dim) if amount == 0 else f"({index_var(dim)} + {amount})"
            stride = self.stride(field, axis)
            terms.append(index if stride == "1" else f"{index} * {stride}")
        return " + ".join(terms)

    # --- field operators as functions (transforms off) ---------------------------------

    def function_name(self, fop: str) -> str:
        return f"sc_fop_{fop}"

    def emit_call(
        self, call: ir.Call, pos: Mapping[Dimension, int], emitter: ExpressionEmitter
    ) -> str:
        callee = self.fops[call.callee]
        dims = _dims_of(callee.return_type)
        args = []
        for param, arg in zip(callee.params, call.args):
            if isinstance(param.type, ir.FieldType):
                sub = ExpressionEmitter(
                    emitter.read_field,
                    emitter.scalars,
                    self.emit_call,
                    emitter.cse,
                    prefix=f"{emitter.fresh()}_",
                )
                value = sub.emit(arg, {})
                body = " ".join([*sub.statements, f"return {value};"])
                params = ", ".join(f"std::int64_t {index_var(d)}" for d in dims)
                args.append(f"[&]({params}) {{ {body} }}")
            else:
                args.append(emitter.emit(arg, pos))
        for dim in dims:
            amount = pos.get(dim, 0)
            args.append(index_var(dim) if amount == 0 else f"{index_var(dim)} + {amount}")
        return f"{self.function_name(callee.name)}({', '.join(args)})"

    def function_definitions(self) -> list[str]:
        out = []
        for fop in _callees_first(self.program):
            dims = _dims_of(fop.return_type)
            fields = [p for p in fop.params if isinstance(p.type, ir.FieldType)]
            template = ", ".join(f"class A_{p.name}" for p in fields)
            params = []
            scalars: dict[str, str] = {}
            for p in fop.params:
                if isinstance(p.type, ir.FieldType):
                    params.append(f"const A_{p.name}& a_{p.name}")
                else:
                    params.append(f"{cpp_type(p.type)} s_{p.name}")
                    scalars[p.name] = f"s_{p.name}"
            params += [f"std::int64_t {index_var(d)}" for d in dims]

            def read(
                name: str, pos: Mapping[Dimension, int], dims: tuple[Dimension, ...] = dims
            ) -> str:
                indices = ", ".join(
                    index_var(d) if pos.get(d, 0) == 0 else f"{index_var(d)} + {pos[d]}"
                    for d in dims
                )
                return f"a_{name}({indices})"

            emitter = ExpressionEmitter(read, scalars, self.emit_call, cse=False)
            result = emitter.emit(fop.body, {})
            header = f"template <{template}>\n" if template else ""
            body = "\n".join(f"    {s}" for s in [*emitter.statements, f"return {result};"])
            out.append(
                f"{header}SC_HD inline {cpp_type(fop.return_type)} "
                f"{self.function_name(fop.name)}({', '.join(params)}) {{\n{body}\n}}\n"
            )
        return out

    # --- program calls -----------------------------------------------------------------

    def loop_body(self, call: ir.ProgramCall) -> list[str]:
        fop = self.fops[call.callee]
        bindings = dict(zip((p.name for p in fop.params), call.args))
        emitter = ExpressionEmitter(
            self.read_field,
            self.scalars,
            None if self.step.enable_transforms else self.emit_call,
            cse=self.step.enable_transforms,
        )
        if self.step.enable_transforms:
            from stencilchain.program.transforms import substitute

            result = emitter.emit(substitute(fop.body, bindings), {})
        else:
            result = emitter.emit(ir.Call(fop.name, call.args, fop.return_type), {})
        lines = list(emitter.statements)
        values = (
            [f"sc_tuple_ns::get<{k}>({result})" for k in range(len(call.outs))]
            if isinstance(fop.return_type, ir.TupleType)
            else [result]
        )
        for name, value in zip(call.outs, values):
            field = self.fields[name]
            lines.append(f"{field.pointer}[{self.offset(field, {})}] = {value};")
        return lines

    def domain_code(self, index: int, call: ir.ProgramCall) -> list[str]:
        callee = self.original.calls[index].callee
        lines = []
        for dd in call.domain.dims:
            d = dd.dim.name
            for side, bounds, pick in (("start", dd.starts, "max"), ("stop", dd.stops, "min")):
                values = [
                    f"{size_var(dd.dim)} + ({b.value})" if b.from_end else f"{b.value}"
                    for b in bounds
                ]
                value = (
                    values[0]
                    if len(values) == 1
                    else f"std::{pick}<std::int64_t>({{{', '.join(values)}}})"
                )
                lines.append(f"const std::int64_t {bound_var(dd.dim, side)} = {value};")
        nonempty = " && ".join(
            f"{bound_var(dd.dim, 'stop')} > {bound_var(dd.dim, 'start')}" for dd in call.domain.dims
        )
        lines.append(f"if ({nonempty}) {{")
        for dd in call.domain.dims:
            d, (lo, hi), n = dd.dim.name, dd.halo, size_var(dd.dim)
            start, stop = bound_var(dd.dim, "start"), bound_var(dd.dim, "stop")
            lines += [
                f"    if ({start} - {lo} < 0 || {stop} + {hi} > {n}) {{",
                f'        std::snprintf(err, err_len, "call of {callee} in {self.original.name}(): '
                f"domain {d}: [%lld, %lld) with reads from {d}-{lo} to {d}+{hi} leaves the "
                f'array of size %lld along {d}", (long long){start}, (long long){stop}, '
                f"(long long){n});",
                "        return 1;",
                "    }",
            ]
        return lines

    def domain_checks(self) -> list[str]:
        """Every call's domain check, before any call runs, so that a DomainError leaves
        the outputs as they were (each call's own block recomputes its bounds)."""
        lines = []
        for index, call in enumerate(self.program.calls):
            lines.append(f"{{  // domain of call {index}")
            lines += ["    " + line for line in self.domain_code(index, call)]
            lines += ["    }", "}"]
        return lines

    def cpu_call(self, index: int, call: ir.ProgramCall) -> list[str]:
        dims = [dd.dim for dd in call.domain.dims]
        body = self.loop_body(call)
        lines = self.domain_code(index, call)
        points = " * ".join(f"({bound_var(d, 'stop')} - {bound_var(d, 'start')})" for d in dims)
        lines.append(f"    const std::int64_t sc_points = {points};")
        first_out = self.fields[call.outs[0]]
        if self.step.data_layout is DataLayout.UNIT_STRIDE or len(dims) == 1:
            lines += ["    " + s for s in self._loop_nest(dims, len(dims) - 1, body)]
        else:
            strides = [
                f"std::abs({self.stride(first_out, first_out.type.dims.index(d))})" for d in dims
            ]
            lines.append("    int sc_inner = 0;")
            lines.append(f"    std::int64_t sc_best = {strides[0]};")
            for k in range(1, len(dims)):
                lines.append(
                    f"    if ({strides[k]} < sc_best) {{ sc_inner = {k}; sc_best = {strides[k]}; }}"
                )
            for k in range(len(dims)):
                keyword = "if" if k == 0 else "} else if"
                lines.append(f"    {keyword} (sc_inner == {k}) {{")
                lines += ["        " + s for s in self._loop_nest(dims, k, body)]
            lines.append("    }")
        lines.append("}")
        return lines

    def _loop_nest(self, dims: list[Dimension], inner: int, body: list[str]) -> list[str]:
        order = [d for k, d in enumerate(dims) if k != inner] + [dims[inner]]
        lines = [
            "#pragma omp parallel for schedule(static) "
            f"if (sc_points >= {self.step.openmp_threshold})"
        ]
        indent = ""
        for d in order:
            v = index_var(d)
            lines.append(
                f"{indent}for (std::int64_t {v} = {bound_var(d, 'start')}; {v} < {bound_var(d, 'stop')}; ++{v}) {{"
            )
            indent += "    "
        lines += [indent + s for s in body]
        for _ in order:
            indent = indent[:-4]
            lines.append(indent + "}")
        return lines

    def gpu_kernel(self, index: int, call: ir.ProgramCall) -> str:
        dims = [dd.dim for dd in call.domain.dims]
        params = self.signature.declaration()
        params = params[params.index("(") + 1 : params.rindex(", char* err")]
        for t in self.temporaries:
            params += f", {t.type.dtype.cpp}* {t.pointer}"
            params += "".join(f", std::int64_t {t.stride(a)}" for a in range(len(t.type.dims)))
        bounds = ", ".join(f"std::int64_t {bound_var(d, 'start')}, std::int64_t {bound_var(d, 'stop')}" for d in dims)
        lines = [f"__global__ void sc_kernel_{index}({params}, {bounds}) {{"]
        extents = " * ".join(f"({bound_var(d, 'stop')} - {bound_var(d, 'start')})" for d in dims)
        lines += [
            f"    const std::int64_t sc_total = {extents};",
            "    for (std::int64_t sc_idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;",
            "         sc_idx < sc_total; sc_idx += static_cast<std::int64_t>(blockDim.x) * gridDim.x) {",
            "        std::int64_t sc_rest = sc_idx;",
        ]
        for d in reversed(dims):
            extent = f"({bound_var(d, 'stop')} - {bound_var(d, 'start')})"
            lines.append(
                f"        const std::int64_t {index_var(d)} = {bound_var(d, 'start')} + sc_rest % {extent};"
            )
            lines.append(f"        sc_rest /= {extent};")
        lines += ["        " + s for s in self.loop_body(call)]
        lines += ["    }", "}"]
        return "\n".join(lines)

    def gpu_call(self, index: int, call: ir.ProgramCall) -> list[str]:
        dims = [dd.dim for dd in call.domain.dims]
        lines = self.domain_code(index, call)
        points = " * ".join(f"({bound_var(d, 'stop')} - {bound_var(d, 'start')})" for d in dims)
        args = ", ".join(
            self.signature.argument_names()
            + [n for t in self.temporaries for n in _names_of(t)]
            + [bound_var(d, s) for d in dims for s in ("start", "stop")]
        )
        lines += [
            f"    const std::int64_t sc_points = {points};",
            f"    const std::int64_t sc_blocks = std::min<std::int64_t>((sc_points + {CUDA_BLOCK_SIZE - 1}) / {CUDA_BLOCK_SIZE}, 65535);",
            f"    sc_kernel_{index}<<<static_cast<unsigned>(sc_blocks), {CUDA_BLOCK_SIZE}>>>({args});",
            "    const cudaError_t sc_status = cudaGetLastError();",
            "    if (sc_status != cudaSuccess) {",
            f'        std::snprintf(err, err_len, "launch of {call.callee} in {self.original.name}() failed: %s", cudaGetErrorString(sc_status));',
            "        return 2;",
            "    }",
            "}",
        ]
        return lines

    def source(self) -> str:
        parts = [
            f"// generated by stencilchain for program {self.original.name}",
            prelude(self.gpu),
        ]
        if self.gpu:
            parts.insert(1, "#include <cuda_runtime.h>")
        if not self.step.enable_transforms:
            parts.append(
                "namespace {\n" + "\n".join(self.function_definitions()) + "}  // namespace\n"
            )
        body = self.domain_checks()
        if self.temporaries:
            parts.append(temporary_helpers(self.gpu, len(self.temporaries)))
            body += self.allocations()
        for index, call in enumerate(self.program.calls):
            if self.gpu:
                parts.append(self.gpu_kernel(index, call))
            body.append(
                f"// call {index}: {self.original.calls[index].callee} -> {', '.join(call.outs)}"
            )
            body.append("{")
            body += [
                "    " + s
                for s in (self.gpu_call(index, call) if self.gpu else self.cpu_call(index, call))
            ]
            body.append("}")
        unused = [f"(void){size_var(d)};" for d in self.signature.dims]
        unused += [f"(void){s.variable};" for s in self.signature.scalars]
        parts.append(
            f"{self.signature.declaration()} {{\n    "
            + " ".join(unused)
            + "\n"
            + "\n".join("    " + line for line in body)
            + "\n    return 0;\n}\n"
        )
        return "\n".join(parts)


    def allocations(self) -> list[str]:
        """The program's temporaries, allocated after the domain checks and freed on every
        return: dense, with their axes ordered like the strides of the first field
        parameter over the same dimensions (C order without one, or with a unit-stride
        layout), so that loops chosen by the output's strides also stream the inputs."""
        lines = ["// temporaries"]
        for t in self.temporaries:
            dims, cpp, name = t.type.dims, t.type.dtype.cpp, t.name
            n = len(dims)
            sizes = ", ".join(size_var(d) for d in dims)
            like = next(
                (f for f in self.signature.fields if f.type.dims == dims),
                None,
            )
            if like is None or self.step.data_layout is DataLayout.UNIT_STRIDE:
                reference = ", ".join(["0"] * n)  # all ties: C order
            else:
                reference = ", ".join(f"{like.stride(a)}" for a in range(n))
            points = " * ".join(f"static_cast<std::size_t>({size_var(d)})" for d in dims)
            lines += [
                f"sc_temporary sc_t_{name};",
                f"std::int64_t sc_s_{name}[{n}];",
                "{",
                f"    const std::int64_t sc_like[{n}] = {{{reference}}};",
                f"    const std::int64_t sc_size[{n}] = {{{sizes}}};",
                f"    sc_dense_like({n}, sc_like, sc_size, sc_s_{name});",
                "}",
                f"const std::size_t sc_bytes_{name} = {points} * sizeof({cpp});",
                f"if (!sc_allocate(sc_t_{name}, sc_bytes_{name})) {{",
                f'    std::snprintf(err, err_len, "cannot allocate %zu bytes for temporary {name} '
                f'of {self.original.name}()", sc_bytes_{name});',
                "    return 5;",
                "}",
                f"{cpp}* const {t.pointer} = static_cast<{cpp}*>(sc_t_{name}.data);",
            ]
            lines += [f"const std::int64_t {t.stride(a)} = sc_s_{name}[{a}];" for a in range(n)]
        return lines


_TEMPORARY_HELPERS = r"""
namespace {
// A program-local temporary: taken when the call starts, given back on every return path.
struct sc_temporary {
    void* data = nullptr;
    std::size_t bytes = 0;
    sc_temporary() = default;
    sc_temporary(const sc_temporary&) = delete;
    sc_temporary& operator=(const sc_temporary&) = delete;
    ~sc_temporary() { if (data != nullptr) sc_give(data, bytes); }
};

inline bool sc_allocate(sc_temporary& t, std::size_t bytes) {
    t.data = sc_take(bytes == 0 ? 1 : bytes, &t.bytes);
    return t.data != nullptr;
}

// Dense strides (in elements) for `n` axes of sizes `size`, the axis of smallest |like|
// stride fastest; on ties the later axis is faster (C order).
inline void sc_dense_like(int n, const std::int64_t* like, const std::int64_t* size, std::int64_t* out) {
    int order[8];
    for (int k = 0; k < n; ++k) order[k] = n - 1 - k;
    for (int k = 1; k < n; ++k) {  // stable insertion sort by |like|
        const int axis = order[k];
        int j = k;
        while (j > 0 && std::llabs(like[order[j - 1]]) > std::llabs(like[axis])) {
            order[j] = order[j - 1];
            --j;
        }
        order[j] = axis;
    }
    std::int64_t stride = 1;
    for (int k = 0; k < n; ++k) {
        out[order[k]] = stride;
        stride *= size[order[k]] > 0 ? size[order[k]] : 1;
    }
}
}  // namespace
"""

# CPU: the blocks of finished calls are kept (up to two per temporary, enough for two
# concurrent calls) and reused by the next call that fits: freeing a large block returns
# it to the kernel, and the next call would pay for zeroing every page again (2.5x the
# time of a 4096x4096 lap(lap(f)) at the first measurement, benchmarks/temporaries.py).
_CPU_POOL = r"""
#include <cstdlib>
#include <pthread.h>
#include <sys/mman.h>
namespace {
constexpr std::size_t SC_HUGE = std::size_t(1) << 21;  // 2 MiB
struct sc_block {
    void* data;
    std::size_t bytes;
};
sc_block sc_pool[SC_POOL_CAPACITY];
int sc_pool_count = 0;
pthread_mutex_t sc_pool_mutex = PTHREAD_MUTEX_INITIALIZER;

// The smallest kept block of at least `bytes`, else a new one; its size in `*got`.
void* sc_take(std::size_t bytes, std::size_t* got) {
    void* data = nullptr;
    pthread_mutex_lock(&sc_pool_mutex);
    int best = -1;
    for (int k = 0; k < sc_pool_count; ++k) {
        if (sc_pool[k].bytes >= bytes && (best < 0 || sc_pool[k].bytes < sc_pool[best].bytes)) best = k;
    }
    if (best >= 0) {
        data = sc_pool[best].data;
        *got = sc_pool[best].bytes;
        sc_pool[best] = sc_pool[--sc_pool_count];
    }
    pthread_mutex_unlock(&sc_pool_mutex);
    if (data == nullptr) {
        *got = bytes;
        if (bytes < SC_HUGE) return std::malloc(bytes);
        // like NumPy's large arrays: transparent huge pages, fewer TLB misses
        *got = (bytes + SC_HUGE - 1) / SC_HUGE * SC_HUGE;
        if (posix_memalign(&data, SC_HUGE, *got) != 0) return nullptr;
#ifdef MADV_HUGEPAGE
        madvise(data, *got, MADV_HUGEPAGE);
#endif
    }
    return data;
}

// Keep the block; when the pool is full, keep the larger of it and the smallest kept one
// (a larger block serves every smaller request).
void sc_give(void* data, std::size_t bytes) {
    pthread_mutex_lock(&sc_pool_mutex);
    if (sc_pool_count < SC_POOL_CAPACITY) {
        sc_pool[sc_pool_count++] = sc_block{data, bytes};
        data = nullptr;
    } else {
        int smallest = 0;
        for (int k = 1; k < sc_pool_count; ++k) {
            if (sc_pool[k].bytes < sc_pool[smallest].bytes) smallest = k;
        }
        if (sc_pool[smallest].bytes < bytes) {
            const sc_block evicted = sc_pool[smallest];
            sc_pool[smallest] = sc_block{data, bytes};
            data = evicted.data;
        }
    }
    pthread_mutex_unlock(&sc_pool_mutex);
    if (data != nullptr) std::free(data);
}
}  // namespace
"""

# GPU: stream-ordered allocations on the default stream, where the kernels run (the CUDA
# driver's memory pool serves them).
_GPU_POOL = r"""
namespace {
void* sc_take(std::size_t bytes, std::size_t* got) {
    void* data = nullptr;
    if (cudaMallocAsync(&data, bytes, 0) != cudaSuccess) return nullptr;
    *got = bytes;
    return data;
}

void sc_give(void* data, std::size_t) { cudaFreeAsync(data, 0); }
}  // namespace
"""


def temporary_helpers(gpu: bool, count: int) -> str:
    """The allocation helpers of a program with `count` temporaries."""
    if gpu:
        return _GPU_POOL + _TEMPORARY_HELPERS
    return f"#define SC_POOL_CAPACITY {2 * count}" + _CPU_POOL + _TEMPORARY_HELPERS


def _names_of(field: FieldArg) -> list[str]:
    return [field.pointer, *(field.stride(a) for a in range(len(field.type.dims)))]


def _dims_of(t: ir.FieldType | ir.TupleType) -> tuple[Dimension, ...]:
    return t.dims if isinstance(t, ir.FieldType) else t.elems[0].dims


def _callees_first(program: ir.Program) -> list[ir.FieldOperatorDef]:
    """Field operators ordered so that each comes after the ones it calls."""
    fops = {f.name: f for f in program.field_operators}
    done: list[ir.FieldOperatorDef] = []
    seen: set[str] = set()

    def calls_in(expr: ir.Expr) -> list[str]:
        names = [expr.callee] if isinstance(expr, ir.Call) else []
        for child in ir.children(expr):
            names += calls_in(child)
        return names

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for callee in calls_in(fops[name].body):
            visit(callee)
        done.append(fops[name])

    for fop in program.field_operators:
        visit(fop.name)
    return done


__all__ = ["GTFNTranslationStep", "literal"]
