"""GTFN translation: program IR -> C++17 source (OpenMP loops) or CUDA kernels."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from stencilchain.program import ir
from stencilchain.program.device import Device
from stencilchain.program.dimensions import Dimension
from stencilchain.program.transforms import substitute, transform_program
from stencilchain.steps.checks import require_non_negative_int, require_type
from stencilchain.steps.cpp.domain_checks import domain_checks, open_domain
from stencilchain.steps.cpp.expressions import (
    TUPLE_NAMESPACE,
    ExpressionEmitter,
    MeshTables,
    Pos,
    cpp_type,
    index_at,
)
from stencilchain.steps.cpp.package_text import package_text
from stencilchain.steps.cpp.scan_chains import chained_temporaries, scan_chains
from stencilchain.steps.cpp.scans import scan_block, scan_column
from stencilchain.steps.cpp.signature import (
    FieldArg,
    ProgramSignature,
    bound_var,
    domain_loop,
    index_var,
    size_var,
)
from stencilchain.steps.gtfn.functions import FieldOperatorFunctions, table_reader
from stencilchain.steps.gtfn.temporaries import allocations, temporary_helpers
from stencilchain.steps.settings import DataLayout
from stencilchain.steps.stages import ProgramSource, step_settings

CUDA_BLOCK_SIZE = 256
# Columns a CPU scan walks together when the axis is not the arrays' fastest dimension.
SCAN_BLOCK = 256
# Columns a chain of CPU scans (`scan_chains`) walks together: where the axis is the
# arrays' fastest dimension (C order), enough columns for independent divisions to overlap;
# else a wide block along the fastest dimension (long unit-stride runs per level). The
# buffers between the calls take width x levels elements per thread (cache-resident).
CHAIN_BLOCK_NARROW = 64
CHAIN_BLOCK_WIDE = 256
_PACKAGE = "stencilchain.steps.gtfn"  # of the fixed C++: prelude*.h


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
        require_type(self, "device", Device)
        require_type(self, "enable_transforms", bool)
        require_type(self, "data_layout", DataLayout)
        require_non_negative_int(self, "openmp_threshold")

    def __call__(self, program: ir.Program, /) -> ProgramSource:
        return ProgramSource(
            program=program,
            entry_point=program.name,
            source_code=_Translator(self, program).source(),
            language="cuda" if self.device is Device.GPU else "cpp",
            device=self.device,
            settings=step_settings(self),
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
        self.scans = {s.name: s for s in self.program.scan_operators}
        self.functions = None if step.enable_transforms else FieldOperatorFunctions(program)
        self.gpu = step.device is Device.GPU
        tables = {
            f.type.connectivity.name: f for f in self.signature.fields if isinstance(f.type, ir.TableType)
        }
        self.mesh = MeshTables.of(program, table_reader(tables, self.stride)) if tables else None
        # CPU chains of scan calls run column by column, their temporaries in per-thread
        # buffers of a block of columns (`buffered`, the C++ of each element), not arrays
        self.chains = [] if self.gpu else scan_chains(self.program)
        self.buffered: dict[str, str] = {}
        for chain in self.chains:
            axis = self.scans[self.program.calls[chain[0]].callee].axis
            level = f"({index_var(axis)} - {bound_var(axis, 'start')})"
            for name in chained_temporaries(self.program, [chain]):
                # at the current level and column of the block: sc_width columns per level
                self.buffered[name] = f"sc_buf_{name}[{level} * sc_width + sc_b]"

    # --- memory access -----------------------------------------------------------------

    def stride(self, field: FieldArg, axis: int) -> str:
        last = axis == len(field.type.dims) - 1
        if self.step.data_layout is DataLayout.UNIT_STRIDE and last:
            return "1"
        return field.stride(axis)

    def read_field(self, name: str, pos: Pos) -> str:
        if name in self.buffered:
            return self.buffered[name]
        field = self.fields[name]
        return f"{field.pointer}[{self.offset(field, pos)}]"

    def read_scalar(self, name: str) -> str:
        return self.scalars[name]

    def offset(self, field: FieldArg, pos: Pos) -> str:
        terms = []
        for axis, dim in enumerate(field.type.dims):
            index = index_at(dim, pos)
            stride = self.stride(field, axis)
            terms.append(index if stride == "1" else f"{index} * {stride}")
        return " + ".join(terms)

    # --- program calls -----------------------------------------------------------------

    def loop_body(self, call: ir.ProgramCall) -> list[str]:
        """The statements of one point of the call: compute, then store each output."""
        fop = self.fops[call.callee]
        emitter = ExpressionEmitter(
            self.read_field,
            self.read_scalar,
            cse=self.step.enable_transforms,
            call_field_operator=None if self.functions is None else self.functions.emit_call,
            mesh=self.mesh,
        )
        if self.functions is None:
            body = substitute(fop.body, dict(zip((p.name for p in fop.params), call.args)))
        else:
            body = ir.Call(fop.name, call.args, fop.return_type)
        if isinstance(body, ir.MakeTuple):  # each element straight to its output
            values = [_computed(emitter, e) for e in body.elems]
        elif isinstance(fop.return_type, ir.TupleType):
            result = emitter.emit(body, {})
            values = [f"{TUPLE_NAMESPACE}::get<{k}>({result})" for k in range(len(call.outs))]
        else:
            values = [emitter.emit(body, {})]
        lines = list(emitter.statements)
        for name, value in zip(call.outs, values):
            field = self.fields[name]
            lines.append(f"{field.pointer}[{self.offset(field, {})}] = {value};")
        return lines

    def scan_readers(
        self, call: ir.ProgramCall
    ) -> tuple[Callable[[ir.Param, ir.Expr], str], Callable[[int, str], str]]:
        """How a scan call reads its arguments and stores its results at the current point."""

        def read_argument(param: ir.Param, arg: ir.Expr) -> str:
            assert isinstance(arg, ir.Ref)
            if isinstance(arg.type, ir.FieldType):
                return self.read_field(arg.name, {})
            return self.read_scalar(arg.name)

        def store(k: int, value: str) -> str:
            name = call.outs[k]
            if name in self.buffered:
                return f"{self.buffered[name]} = {value};"
            field = self.fields[name]
            return f"{field.pointer}[{self.offset(field, {})}] = {value};"

        return read_argument, store

    def scan_body(self, call: ir.ProgramCall) -> list[str]:
        """The statements of one column of a scan call: its level loop, state in registers."""
        scan = self.scans[call.callee]
        read_argument, store = self.scan_readers(call)
        return scan_column(
            scan,
            call,
            level=index_var(scan.axis),
            start=bound_var(scan.axis, "start"),
            stop=bound_var(scan.axis, "stop"),
            read_argument=read_argument,
            store=store,
        )

    def scan_blocks(self, call: ir.ProgramCall, columns: list[Dimension], inner: int) -> list[str]:
        """Blocks of SCAN_BLOCK neighbouring columns along `columns[inner]` in parallel
        (OpenMP over the outer column dimensions and the blocks), each block walking
        the levels with the loop over its columns innermost."""
        scan = self.scans[call.callee]
        read_argument, store = self.scan_readers(call)
        along = columns[inner]
        outer = [d for k, d in enumerate(columns) if k != inner]
        v = index_var(along)
        start, stop = bound_var(along, "start"), bound_var(along, "stop")
        lines = [
            "#pragma omp parallel for schedule(static) "
            f"if (sc_points >= {self.step.openmp_threshold}) collapse({len(outer) + 1})"
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
        block = scan_block(
            scan,
            call,
            level=index_var(scan.axis),
            start=bound_var(scan.axis, "start"),
            stop=bound_var(scan.axis, "stop"),
            column=v,
            first="sc_first",
            last="sc_last",
            width=SCAN_BLOCK,
            read_argument=read_argument,
            store=store,
        )
        lines += [indent + s for s in block]
        for _ in range(len(outer) + 1):
            indent = indent[:-4]
            lines.append(indent + "}")
        return lines

    def parallel_dims(self, call: ir.ProgramCall) -> list[Dimension]:
        """The dimensions a call's points run in parallel over: all of its domain's, but a
        scan's axis, which each column walks sequentially."""
        scan = self.scans.get(call.callee)
        return [dd.dim for dd in call.domain.dims if scan is None or dd.dim != scan.axis]

    def cpu_scan_call(self, index: int, call: ir.ProgramCall) -> list[str]:
        """Columns in parallel. Where the first output's smallest stride is along the axis
        (C order over (..., K)), each column walks its levels in registers; else blocks of
        neighbouring columns along the dimension of smallest stride walk the levels
        together, the loop over the block's columns innermost (unit stride, vectorizable)."""
        scan = self.scans[call.callee]
        columns = self.parallel_dims(call)
        body = self.scan_body(call)
        lines = self.domain_code(index)
        if not columns:
            lines += ["    " + s for s in body]
            lines.append("}")
            return lines
        points = " * ".join(f"({bound_var(d, 'stop')} - {bound_var(d, 'start')})" for d in columns)
        lines.append(f"    const std::int64_t sc_points = {points};")
        per_column = self._loop_nest(columns, len(columns) - 1, body)
        if self.step.data_layout is DataLayout.UNIT_STRIDE and scan.dims[-1] == scan.axis:
            lines += ["    " + s for s in per_column]
            lines.append("}")
            return lines
        out = self.fields[call.outs[0]]
        dims = list(out.type.dims)

        def stride(d: Dimension) -> str:
            return f"std::abs({self.stride(out, dims.index(d))})"

        lines.append("    int sc_inner = -1;  // the column dimension of smallest stride")
        lines.append(f"    std::int64_t sc_best = {stride(scan.axis)};")
        for k, d in enumerate(columns):
            lines.append(
                f"    if ({stride(d)} < sc_best) {{ sc_inner = {k}; sc_best = {stride(d)}; }}"
            )
        lines.append("    if (sc_inner < 0) {")
        lines += ["        " + s for s in per_column]
        for k in range(len(columns)):
            lines.append(f"    }} else if (sc_inner == {k}) {{")
            lines += ["        " + s for s in self.scan_blocks(call, columns, k)]
        lines.append("    }")
        lines.append("}")
        return lines

    def cpu_scan_chain(self, chain: tuple[int, ...]) -> list[str]:
        """The calls of a chain (`scan_chains`) column by column: blocks of neighbouring
        columns along the column dimension of smallest stride in parallel, each block
        walking the levels once per call with the loop over its columns innermost, the
        temporaries between the calls in per-thread buffers of one block (from the pool)."""
        calls = [self.program.calls[i] for i in chain]
        axis = self.scans[calls[0].callee].axis
        columns = self.parallel_dims(calls[0])
        lines = self.domain_code(chain[0])
        points = " * ".join(f"({bound_var(d, 'stop')} - {bound_var(d, 'start')})" for d in columns)
        lines.append(f"    const std::int64_t sc_points = {points};")
        # loops follow the strides of the last call's first output
        out = self.fields[calls[-1].outs[0]]
        dims = list(out.type.dims)

        def stride(d: Dimension) -> str:
            return f"std::abs({self.stride(out, dims.index(d))})"

        lines.append("    int sc_inner = 0;  // the column dimension of smallest stride")
        lines.append(f"    std::int64_t sc_best = {stride(columns[0])};")
        for k, d in enumerate(columns[1:], 1):
            lines.append(
                f"    if ({stride(d)} < sc_best) {{ sc_inner = {k}; sc_best = {stride(d)}; }}"
            )
        lines += [
            f"    const std::int64_t sc_width = {stride(axis)} < sc_best ? "
            f"{CHAIN_BLOCK_NARROW} : {CHAIN_BLOCK_WIDE};",
            f"    const std::int64_t sc_levels = {bound_var(axis, 'stop')} - {bound_var(axis, 'start')};",
            "    // elements per thread of a buffer, whole cache lines",
            "    const std::size_t sc_per_thread = static_cast<std::size_t>(sc_width * sc_levels + 15) / 16 * 16;",
        ]
        buffered = chained_temporaries(self.program, [chain])
        for name in buffered:
            cpp = self.fields[name].type.dtype.cpp
            lines += [
                f"    sc_temporary sc_t_{name};",
                f"    if (!sc_allocate(sc_t_{name}, sc_per_thread * static_cast<std::size_t>"
                f"(sc_max_threads()) * sizeof({cpp}))) {{",
                f'        std::snprintf(err, err_len, "cannot allocate the buffers of temporary '
                f'{name} of {self.original.name}()");',
                "        return 5;",
                "    }",
            ]
        for k in range(len(columns)):
            keyword = "if" if k == 0 else "} else if"
            lines.append(f"    {keyword} (sc_inner == {k}) {{")
            lines += ["        " + s for s in self.chain_blocks(calls, columns, k, buffered)]
        lines.append("    }")
        lines.append("}")
        return lines

    def chain_blocks(
        self, calls: list[ir.ProgramCall], columns: list[Dimension], inner: int, buffered: list[str]
    ) -> list[str]:
        """The parallel loop over the blocks of a chain along `columns[inner]`."""
        along = columns[inner]
        outer = [d for k, d in enumerate(columns) if k != inner]
        start, stop = bound_var(along, "start"), bound_var(along, "stop")
        lines = [f"#pragma omp parallel if (sc_points >= {self.step.openmp_threshold})", "{"]
        for name in buffered:
            cpp = self.fields[name].type.dtype.cpp
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
        for call in calls:
            scan = self.scans[call.callee]
            read_argument, store = self.scan_readers(call)
            block = scan_block(
                scan,
                call,
                level=index_var(scan.axis),
                start=bound_var(scan.axis, "start"),
                stop=bound_var(scan.axis, "stop"),
                column=index_var(along),
                first="sc_first",
                last="sc_last",
                width=max(CHAIN_BLOCK_NARROW, CHAIN_BLOCK_WIDE),
                read_argument=read_argument,
                store=store,
            )
            lines += [f"{indent}{{  // {call.callee}", *(indent + "    " + s for s in block)]
            lines.append(indent + "}")
        for _ in range(len(outer) + 1):
            indent = indent[:-4]
            lines.append(indent + "}")
        lines.append("}")
        return lines

    def domain_code(self, index: int) -> list[str]:
        """The bounds of call `index` and its halo check; opens the block of a non-empty
        domain, which the caller closes."""
        # the callee's name as the user wrote it
        return open_domain(self.original.name, self.original.calls[index])

    def cpu_call(self, index: int, call: ir.ProgramCall) -> list[str]:
        if call.callee in self.scans:
            return self.cpu_scan_call(index, call)
        dims = [dd.dim for dd in call.domain.dims]
        body = self.loop_body(call)
        lines = self.domain_code(index)
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
        """The loops over a call's domain, `dims[inner]` innermost, as a worksharing loop: on
        a thread team from `openmp_threshold` points on, else on the calling thread without
        one (a region whose `if` clause is false still starts a team of one, about 0.4 us;
        an orphaned `omp for` runs all its iterations on the calling thread). The loops are
        a lambda the compiler does not inline, so that it optimizes them once (inlined at
        both calls, they would double the unit's compile time)."""
        order = [d for k, d in enumerate(dims) if k != inner] + [dims[inner]]
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
            f"if (sc_points >= {self.step.openmp_threshold}) {{",
            "#pragma omp parallel",
            "    sc_loops();",
            "} else {",
            "    sc_loops();",
            "}",
        ]

    def gpu_kernel(self, index: int, call: ir.ProgramCall) -> str:
        """One thread per point of the call (per column of a scan, which walks its levels)."""
        dims = [dd.dim for dd in call.domain.dims]
        threads = self.parallel_dims(call)
        params = self.signature.declaration()
        params = params[params.index("(") + 1 : params.rindex(", char* err")]
        for t in self.temporaries:
            params += f", {t.type.dtype.cpp}* {t.pointer}"
            params += "".join(f", std::int64_t {t.stride(a)}" for a in range(len(t.type.dims)))
        bounds = ", ".join(
            f"std::int64_t {bound_var(d, 'start')}, std::int64_t {bound_var(d, 'stop')}"
            for d in dims
        )
        lines = [f"__global__ void sc_kernel_{index}({params}, {bounds}) {{"]
        extents = " * ".join(
            [f"({bound_var(d, 'stop')} - {bound_var(d, 'start')})" for d in threads] or ["1"]
        )
        lines += [
            f"    const std::int64_t sc_total = {extents};",
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
        body = self.scan_body(call) if call.callee in self.scans else self.loop_body(call)
        lines += ["        " + s for s in body]
        lines += ["    }", "}"]
        return "\n".join(lines)

    def gpu_call(self, index: int, call: ir.ProgramCall) -> list[str]:
        dims = [dd.dim for dd in call.domain.dims]
        lines = self.domain_code(index)
        points = " * ".join(
            [
                f"({bound_var(d, 'stop')} - {bound_var(d, 'start')})"
                for d in self.parallel_dims(call)
            ]
            or ["1"]
        )
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
            package_text(_PACKAGE, "prelude.h"),
            package_text(_PACKAGE, "prelude_gpu.h" if self.gpu else "prelude_cpu.h"),
        ]
        if self.gpu:
            parts.insert(1, "#include <cuda_runtime.h>")
        if self.functions is not None:
            parts.append(
                "namespace {\n" + "\n".join(self.functions.definitions()) + "}  // namespace\n"
            )
        body = domain_checks(self.original)
        if self.temporaries:
            parts.append(temporary_helpers(self.gpu, len(self.temporaries)))
            arrays = tuple(t for t in self.temporaries if t.name not in self.buffered)
            body += allocations(arrays, self.signature, self.step.data_layout, self.original.name)
        chains = {chain[0]: chain for chain in self.chains}
        chained = {index for chain in self.chains for index in chain[1:]}
        for index, call in enumerate(self.program.calls):
            if self.gpu:
                parts.append(self.gpu_kernel(index, call))
            if index in chained:
                continue
            if index in chains:
                calls = [self.original.calls[k] for k in chains[index]]
                body.append(
                    f"// calls {index}-{chains[index][-1]}, column by column: "
                    + "; ".join(f"{c.callee} -> {', '.join(c.outs)}" for c in calls)
                )
                body += ["{", *("    " + s for s in self.cpu_scan_chain(chains[index])), "}"]
                continue
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


def _computed(emitter: ExpressionEmitter, expr: ir.Expr) -> str:
    """The C++ of `expr`, a read bound to a name: every element of a tuple is computed
    before any is stored, because an output may also be an input."""
    value = emitter.emit(expr, {})
    if isinstance(expr, (ir.Ref, ir.Shift, ir.Broadcast)):
        return emitter.bind(cpp_type(expr.type), value)
    return value


def _names_of(field: FieldArg) -> list[str]:
    return [field.pointer, *(field.stride(a) for a in range(len(field.type.dims)))]


__all__ = ["GTFNTranslationStep"]
