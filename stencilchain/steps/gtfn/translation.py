"""GTFN translation: program IR -> C++17 source (OpenMP loops) or CUDA kernels."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from stencilchain.program import ir
from stencilchain.program.device import Device
from stencilchain.program.dimensions import Dimension
from stencilchain.program.scan_lowering import refs_in
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
from stencilchain.steps.cpp.scans import SCAN_BLOCK, scan_block, scan_column
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
from stencilchain.steps.gtfn.tiling import (
    INNER_TILE,
    MAX_TILE,
    MIN_TILE,
    TILE_BUDGET_BYTES,
    Materialization,
    Stage,
    TilePlan,
    describe,
    element_bytes,
    plan_tiles,
    tile_sizes,
)
from stencilchain.steps.settings import DataLayout
from stencilchain.steps.stages import ProgramSource, step_settings

CUDA_BLOCK_SIZE = 256
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
    Calls over fewer than `openmp_threshold` points run serially. On the CPU, with
    transforms, `materialization` says whether an intermediate value read at several
    offsets is kept in per-tile buffers instead of being recomputed where it is read
    (`stencilchain.steps.gtfn.tiling`: AUTO lets its cost model decide per call).
    """

    device: Device
    enable_transforms: bool = True
    data_layout: DataLayout = DataLayout.STRIDED
    openmp_threshold: int = 65536
    materialization: Materialization = Materialization.AUTO

    def __post_init__(self) -> None:
        require_type(self, "device", Device)
        require_type(self, "enable_transforms", bool)
        require_type(self, "materialization", Materialization)
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
            f.type.connectivity.name: f
            for f in self.signature.fields
            if isinstance(f.type, ir.TableType)
        }
        self.mesh = MeshTables.of(program, table_reader(tables, self.stride)) if tables else None
        # CPU chains of scan calls run column by column, their temporaries in per-thread
        # buffers of a block of columns (`buffered`, the C++ of each element), not arrays
        self.chains = [] if self.gpu else scan_chains(self.program)
        self.buffered: dict[str, str] = {}
        # while a kernel function's body is emitted: its innermost dimension, along which
        # its `sc_unit` instance reads with stride 1 (`cpu_kernel`)
        self.unit_dim: Dimension | None = None
        self.kernels: list[str] = []  # the kernel functions the calls defined
        # per CPU call (by index): the intermediates kept in per-tile buffers (`tiling`)
        self.plans: dict[int, TilePlan] = {}
        if not self.gpu and step.enable_transforms:
            for index, call in enumerate(self.program.calls):
                if call.callee in self.scans:
                    continue
                plan = plan_tiles(
                    self.inlined_body(call),
                    tuple(dd.dim for dd in call.domain.dims),
                    step.materialization,
                )
                if plan is not None:
                    self.plans[index] = plan
        # while a tiled kernel's body is emitted: how each stage's buffer is read
        self.stage_reads: dict[str, Callable[[Pos], str]] = {}
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
        if self.unit_dim == field.type.dims[axis] and not isinstance(field.type, ir.TableType):
            return f"(sc_unit ? 1 : {field.stride(axis)})"
        return field.stride(axis)

    def inlined_body(self, call: ir.ProgramCall) -> ir.Expr:
        """The body of a (transformed) call with its arguments in place of the parameters."""
        fop = self.fops[call.callee]
        return substitute(fop.body, dict(zip((p.name for p in fop.params), call.args)))

    def read_field(self, name: str, pos: Pos) -> str:
        stage = self.stage_reads.get(name)
        if stage is not None:
            return stage(pos)
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
        """Points in parallel, the loop along the dimension of the first output's smallest
        stride innermost. Each loop order is a kernel function (`cpu_kernel`) that each
        thread calls on its share of the outermost dimension."""
        if call.callee in self.scans:
            return self.cpu_scan_call(index, call)
        dims = [dd.dim for dd in call.domain.dims]
        lines = self.domain_code(index)
        points = " * ".join(f"({bound_var(d, 'stop')} - {bound_var(d, 'start')})" for d in dims)
        lines.append(f"    const std::int64_t sc_points = {points};")
        first_out = self.fields[call.outs[0]]
        plan = self.plans.get(index)
        launch = self.kernel_launch if plan is None else self.tiled_launch
        if self.step.data_layout is DataLayout.UNIT_STRIDE or len(dims) == 1:
            lines += ["    " + s for s in launch(index, call, dims, len(dims) - 1)]
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
                lines += ["        " + s for s in launch(index, call, dims, k)]
            lines.append("    }")
        lines.append("}")
        return lines

    def kernel_launch(
        self, index: int, call: ir.ProgramCall, dims: list[Dimension], inner: int
    ) -> list[str]:
        """The parallel region that runs kernel `cpu_kernel(index, inner)`: each thread
        takes an equal share of the outermost loop's range, the unit-stride instance where
        every array the call reads or writes (but tables) has unit stride along
        `dims[inner]`."""
        name = self.cpu_kernel(index, call, dims, inner)
        order = loop_order(dims, inner)
        outer = order[0]
        args = ", ".join([*self.kernel_arguments(dims), "sc_lo", "sc_hi"])
        start, stop = bound_var(outer, "start"), bound_var(outer, "stop")
        share = [
            f"    const std::int64_t sc_range = {stop} - {start};",
            "    const std::int64_t sc_threads = sc_num_threads(), sc_me = sc_thread_num();",
            f"    const std::int64_t sc_lo = {start} + sc_range * sc_me / sc_threads;",
            f"    const std::int64_t sc_hi = {start} + sc_range * (sc_me + 1) / sc_threads;",
            "    if (sc_lo < sc_hi) {",
            f"        if (sc_unit) {name}<true>({args});",
            f"        else {name}<false>({args});",
            "    }",
        ]
        return [self.unit_test(call, dims[inner]), *self.team_or_caller("sc_share", share)]

    def team_or_caller(self, name: str, body: list[str]) -> list[str]:
        """`body` as a lambda `name` run by every thread of a team from `openmp_threshold`
        points on, else once on the calling thread without a team (a region whose `if`
        clause is false still starts a team of one, about 0.4 us). Outside a region
        `sc_num_threads()` is 1 and an orphaned `omp for` runs every iteration."""
        return [
            f"const auto {name} = [&]() {{",
            *body,
            "};",
            f"if (sc_points >= {self.step.openmp_threshold}) {{",
            "#pragma omp parallel",
            f"    {name}();",
            "} else {",
            f"    {name}();",
            "}",
        ]

    def unit_test(self, call: ir.ProgramCall, along: Dimension) -> str:
        """`sc_unit`: whether every array the call reads or writes (but tables) has unit
        stride along `along`."""
        strides = [
            self.stride(f, f.type.dims.index(along))
            for f in self.call_fields(call)
            if along in f.type.dims and not isinstance(f.type, ir.TableType)
        ]
        unit = [f"{s} == 1" for s in strides if s != "1"]
        return f"const bool sc_unit = {' && '.join(unit) or 'true'};"

    def call_fields(self, call: ir.ProgramCall) -> list[FieldArg]:
        """The fields a call reads or writes (temporaries and tables included)."""
        names = [r.name for r in refs_in(*call.args) if isinstance(r.type, ir.FieldType)]
        unique = dict.fromkeys([*names, *call.outs])
        return [self.fields[n] for n in unique if n in self.fields]

    def kernel_parameters(self, dims: list[Dimension]) -> list[str]:
        """The parameters of a kernel function: the program's arguments and the arrays of
        its temporaries, every pointer `__restrict__` (the bindings check that no output
        shares memory with another argument; temporaries are allocations of their own),
        then the call's bounds."""
        params: list[str] = []
        arrays = [t for t in self.temporaries if t.name not in self.buffered]
        for f in (*self.signature.fields, *arrays):
            const = "" if f.written else "const "
            params.append(f"{const}{f.type.dtype.cpp}* __restrict__ {f.pointer}")
            params += [f"const std::int64_t {f.stride(a)}" for a in range(len(f.type.dims))]
        params += [f"const std::int64_t {size_var(d)}" for d in self.signature.dims]
        params += [f"const {s.dtype.cpp} {s.variable}" for s in self.signature.scalars]
        params += [
            f"const std::int64_t {bound_var(d, side)}" for d in dims for side in ("start", "stop")
        ]
        return params

    def kernel_arguments(self, dims: list[Dimension]) -> list[str]:
        arrays = [t for t in self.temporaries if t.name not in self.buffered]
        names: list[str] = []
        for f in (*self.signature.fields, *arrays):
            names += _names_of(f)
        names += [size_var(d) for d in self.signature.dims]
        names += [s.variable for s in self.signature.scalars]
        names += [bound_var(d, side) for d in dims for side in ("start", "stop")]
        return names

    def cpu_kernel(
        self, index: int, call: ir.ProgramCall, dims: list[Dimension], inner: int
    ) -> str:
        """Define the kernel function of call `index` with `dims[inner]` innermost: the loop
        nest over the points of [sc_lo, sc_hi) along the outermost dimension. A template on
        `sc_unit`: its true instance reads the arrays (but tables) with stride 1 along the
        innermost dimension, so that the compiler sees unit-stride accesses and vectorizes;
        the pointers are `__restrict__` parameters, which the outlined body of an OpenMP
        region would not keep. Returns the function's name."""
        name = f"sc_call{index}_inner{inner}"
        order = loop_order(dims, inner)
        self.unit_dim = dims[inner]
        try:
            body = self.loop_body(call)
        finally:
            self.unit_dim = None
        params = ", ".join(
            [*self.kernel_parameters(dims), "const std::int64_t sc_lo", "const std::int64_t sc_hi"]
        )
        lines = [
            f"// call {index} ({self.original.calls[index].callee}), {dims[inner].name} innermost",
            "template <bool sc_unit>",
            f"static void {name}({params}) {{",
        ]
        outer = order[0]
        indent = "    "
        lines.append(
            f"{indent}for (std::int64_t {index_var(outer)} = sc_lo; {index_var(outer)} < sc_hi; "
            f"++{index_var(outer)}) {{"
        )
        for d in order[1:]:
            indent += "    "
            lines.append(indent + domain_loop(d))
        lines += [indent + "    " + s for s in body]
        for _ in order:
            lines.append(indent + "}")
            indent = indent[:-4]
        lines.append("}")
        self.kernels.append("\n".join(lines))
        return name

    def tiled_launch(
        self, index: int, call: ir.ProgramCall, dims: list[Dimension], inner: int
    ) -> list[str]:
        """Call `index` tile by tile (its plan: `self.plans[index]`), `dims[inner]`
        innermost: the tile sizes for the call's extents, each stage's buffers (one per
        thread, from the pool), then the tiles in parallel, each running the kernel
        `tiled_kernel` (its unit-stride instance where the arrays allow)."""
        plan = self.plans[index]
        name = self.tiled_kernel(index, call, dims, inner)
        order = loop_order(dims, inner)
        sizes = tile_sizes(plan, inner)
        haloed = [d for k, d in enumerate(dims) if k != inner and sizes[k] > 1]
        lines = [f"// {line}" for line in describe(plan, inner)]
        for d in dims:
            lines.append(
                f"const std::int64_t sc_range_{d.name} = {bound_var(d, 'stop')} - {bound_var(d, 'start')};"
            )
        lines.append(
            f"const std::int64_t sc_tile_{dims[inner].name} = "
            f"std::min<std::int64_t>({INNER_TILE}, sc_range_{dims[inner].name});"
        )
        if haloed:
            # square tiles along the dimensions with a halo, halved until the buffers fit
            def width(stage: Stage, k: int, tile: str) -> str:
                return f"(std::min<std::int64_t>({tile}, sc_range_{dims[k].name}) + {stage.high[k] - stage.low[k]})"

            per_stage = []
            for stage in plan.stages:
                factors = [
                    width(stage, k, "sc_side" if d in haloed else f"sc_tile_{d.name}")
                    for k, d in enumerate(dims)
                    if d in haloed or k == inner
                ]
                per_stage.append(" * ".join(factors))
            bytes_of = " + ".join(f"{p}" for p in per_stage)
            lines += [
                f"std::int64_t sc_side = {MAX_TILE};",
                f"while (sc_side > {MIN_TILE} && ({bytes_of}) * {element_bytes(plan)} > {TILE_BUDGET_BYTES}) sc_side /= 2;",
            ]
            lines += [
                f"const std::int64_t sc_tile_{d.name} = std::min<std::int64_t>(sc_side, sc_range_{d.name});"
                for d in haloed
            ]
        for d in dims:
            if d != dims[inner] and d not in haloed:
                lines.append(f"const std::int64_t sc_tile_{d.name} = 1;")
        for d in dims:
            lines.append(
                f"const std::int64_t sc_count_{d.name} = (sc_range_{d.name} + sc_tile_{d.name} - 1) / sc_tile_{d.name};"
            )
        for j, stage in enumerate(plan.stages):
            cpp = cpp_type(stage.expr.type)
            points = " * ".join(
                f"static_cast<std::size_t>(sc_tile_{d.name} + {stage.high[k] - stage.low[k]})"
                for k, d in enumerate(dims)
            )
            lines += [
                "// elements per thread of a buffer, whole cache lines",
                f"const std::size_t sc_n{j} = ({points} + 7) / 8 * 8;",
                f"sc_temporary sc_t_{stage.name};",
                f"if (!sc_allocate(sc_t_{stage.name}, sc_n{j} * static_cast<std::size_t>(sc_max_threads()) * sizeof({cpp}))) {{",
                f'    std::snprintf(err, err_len, "cannot allocate the tile buffers of call {index} '
                f'of {self.original.name}()");',
                "    return 5;",
                "}",
            ]
        lines.append(self.unit_test(call, dims[inner]))
        region: list[str] = []
        for j, stage in enumerate(plan.stages):
            cpp = cpp_type(stage.expr.type)
            region.append(
                f"    {cpp}* const sc_buf_{j} = static_cast<{cpp}*>(sc_t_{stage.name}.data) + "
                f"sc_n{j} * static_cast<std::size_t>(sc_thread_num());"
            )
        region.append(f"    #pragma omp for schedule(static) collapse({len(dims)})")
        indent = "    "
        for d in order:
            region.append(
                f"{indent}for (std::int64_t sc_ti_{d.name} = 0; sc_ti_{d.name} < sc_count_{d.name}; ++sc_ti_{d.name}) {{"
            )
            indent += "    "
        for d in dims:
            start, stop = bound_var(d, "start"), bound_var(d, "stop")
            region += [
                f"{indent}const std::int64_t sc_lo_{d.name} = {start} + sc_ti_{d.name} * sc_tile_{d.name};",
                f"{indent}const std::int64_t sc_hi_{d.name} = std::min<std::int64_t>(sc_lo_{d.name} + sc_tile_{d.name}, {stop});",
            ]
        args = ", ".join(
            [
                *self.kernel_arguments(dims),
                *(f"sc_buf_{j}" for j in range(len(plan.stages))),
                *(f"sc_tile_{d.name}" for d in dims),
                *(f"sc_{side}_{d.name}" for d in dims for side in ("lo", "hi")),
            ]
        )
        region += [
            f"{indent}if (sc_unit) {name}<true>({args});",
            f"{indent}else {name}<false>({args});",
        ]
        for _ in order:
            indent = indent[:-4]
            region.append(indent + "}")
        return lines + self.team_or_caller("sc_tiles", region)

    def tiled_kernel(
        self, index: int, call: ir.ProgramCall, dims: list[Dimension], inner: int
    ) -> str:
        """Define the kernel of one tile of call `index`: each stage of its plan over the
        tile widened by the stage's extent into its buffer (dense, `dims[inner]` fastest),
        then the result over the tile, reading the stages from their buffers. A template on
        `sc_unit`, like `cpu_kernel`. Returns the function's name."""
        plan = self.plans[index]
        name = f"sc_call{index}_tiles{inner}"
        order = loop_order(dims, inner)
        position = {d: k for k, d in enumerate(dims)}
        params = [
            *self.kernel_parameters(dims),
            *(
                f"{cpp_type(stage.expr.type)}* __restrict__ sc_buf_{j}"
                for j, stage in enumerate(plan.stages)
            ),
            *(f"const std::int64_t sc_tile_{d.name}" for d in dims),
            *(f"const std::int64_t sc_{side}_{d.name}" for d in dims for side in ("lo", "hi")),
        ]
        lines = [
            f"// call {index} ({self.original.calls[index].callee}) tile by tile, "
            f"{dims[inner].name} innermost",
            "template <bool sc_unit>",
            f"static void {name}({', '.join(params)}) {{",
        ]
        # each stage's buffer: origin (the widened tile's first point) and strides
        for j, stage in enumerate(plan.stages):
            for d in dims:
                k = position[d]
                lines.append(
                    f"    const std::int64_t sc_o{j}_{d.name} = sc_lo_{d.name} + ({stage.low[k]});"
                )
            stride = "1"
            for d in reversed(order[1:]):
                k = position[d]
                width = f"(sc_tile_{d.name} + {stage.high[k] - stage.low[k]})"
                stride = width if stride == "1" else f"{stride} * {width}"
                lines.append(
                    f"    const std::int64_t sc_bs{j}_{order[order.index(d) - 1].name} = {stride};"
                )

        def reader(j: int) -> Callable[[Pos], str]:
            def read(pos: Pos) -> str:
                terms = []
                for d in order:
                    term = f"({index_at(d, pos)} - sc_o{j}_{d.name})"
                    terms.append(term if d == order[-1] else f"{term} * sc_bs{j}_{d.name}")
                return f"sc_buf_{j}[{' + '.join(terms)}]"

            return read

        self.unit_dim = dims[inner]
        try:
            for j, stage in enumerate(plan.stages):
                statements, value = self.point_value(stage.expr)
                ranges = {
                    d: (
                        f"sc_lo_{d.name} + ({stage.low[position[d]]})",
                        f"sc_hi_{d.name} + ({stage.high[position[d]]})",
                    )
                    for d in dims
                }
                body = [*statements, f"{reader(j)({})} = {value};"]
                lines += [
                    "    {  // " + stage.name,
                    *("        " + s for s in self.tile_loops(order, ranges, body)),
                    "    }",
                ]
                self.stage_reads[stage.name] = reader(j)
            statements, value = self.point_value(plan.result)
            out = self.fields[call.outs[0]]
            body = [*statements, f"{out.pointer}[{self.offset(out, {})}] = {value};"]
            ranges = {d: (f"sc_lo_{d.name}", f"sc_hi_{d.name}") for d in dims}
            lines += [
                "    {  // the result",
                *("        " + s for s in self.tile_loops(order, ranges, body)),
                "    }",
            ]
        finally:
            self.unit_dim = None
            self.stage_reads = {}
        lines.append("}")
        self.kernels.append("\n".join(lines))
        return name

    def point_value(self, expr: ir.Expr) -> tuple[list[str], str]:
        """The statements and the C++ value of `expr` at the current point."""
        emitter = ExpressionEmitter(self.read_field, self.read_scalar, cse=True, mesh=self.mesh)
        value = emitter.emit(expr, {})
        return list(emitter.statements), value

    @staticmethod
    def tile_loops(
        order: list[Dimension], ranges: dict[Dimension, tuple[str, str]], body: list[str]
    ) -> list[str]:
        """Loops over `ranges` ([first, stop) per dimension) in `order`, around `body`."""
        lines = []
        indent = ""
        for d in order:
            v = index_var(d)
            first, stop = ranges[d]
            lines.append(f"{indent}for (std::int64_t {v} = {first}; {v} < {stop}; ++{v}) {{")
            indent += "    "
        lines += [indent + s for s in body]
        for _ in order:
            indent = indent[:-4]
            lines.append(indent + "}")
        return lines

    def _loop_nest(self, dims: list[Dimension], inner: int, body: list[str]) -> list[str]:
        """The loops over a call's domain, `dims[inner]` innermost, as a worksharing loop: on
        a thread team from `openmp_threshold` points on, else on the calling thread without
        one (a region whose `if` clause is false still starts a team of one, about 0.4 us;
        an orphaned `omp for` runs all its iterations on the calling thread). The loops are
        a lambda the compiler does not inline, so that it optimizes them once (inlined at
        both calls, they would double the unit's compile time)."""
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
        buffers = sum(len(plan.stages) for plan in self.plans.values())
        if self.temporaries or buffers:
            parts.append(temporary_helpers(self.gpu, len(self.temporaries) + buffers))
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
        parts += self.kernels
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


def loop_order(dims: list[Dimension], inner: int) -> list[Dimension]:
    """The loops of a call over `dims`, outermost first, `dims[inner]` innermost. The
    strides are known only at run time: with the first dimension innermost (Fortran
    order) the others run from the last, else in their order (C order), so that both
    layouts stream through memory."""
    rest = [d for k, d in enumerate(dims) if k != inner]
    return [*(reversed(rest) if inner == 0 else rest), dims[inner]]


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
