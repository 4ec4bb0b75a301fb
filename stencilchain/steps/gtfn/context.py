"""What every construct of a GTFN translation shares: the program and its names
(`TranslationContext`), and how the code at one point reads and writes memory
(`PointAccess`: strides, offsets, field and scalar reads, expression emitters)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from stencilchain.program import ir
from stencilchain.program.call_bodies import call_body
from stencilchain.program.device import Device
from stencilchain.program.dimensions import Dimension
from stencilchain.program.transforms import transform_program
from stencilchain.steps.cpp.domain_checks import open_domain
from stencilchain.steps.cpp.expressions import ExpressionEmitter, MeshTables, Pos, index_at
from stencilchain.steps.cpp.scan_chains import chain_scan, chained_temporaries, scan_chains
from stencilchain.steps.cpp.signature import FieldArg, ProgramSignature, bound_var, index_var
from stencilchain.steps.gtfn.functions import FieldOperatorFunctions, table_reader
from stencilchain.steps.gtfn.tiling import Jam, Materialization, TilePlan, plan_jam, plan_tiles
from stencilchain.steps.settings import DataLayout


@dataclasses.dataclass
class TranslationContext:
    """One program under translation: the settings of the step that the constructs read,
    the program as written (`original`, for names in messages) and as translated
    (`program`), its C++ names, the CPU scan chains and tile plans, and `kernels`, the
    functions the calls defined so far."""

    enable_transforms: bool
    data_layout: DataLayout
    openmp_threshold: int
    original: ir.Program
    program: ir.Program
    signature: ProgramSignature
    temporaries: tuple[FieldArg, ...]
    fields: dict[str, FieldArg]
    scalars: dict[str, str]
    fops: dict[str, ir.FieldOperatorDef]
    scans: dict[str, ir.ScanOperatorDef]
    functions: FieldOperatorFunctions | None
    gpu: bool
    mesh: MeshTables | None = None
    # CPU chains of scan calls run column by column, their temporaries in per-thread
    # buffers of a block of columns (`buffered`, the C++ of each element), not arrays
    chains: list[tuple[int, ...]] = dataclasses.field(default_factory=list)
    buffered: dict[str, str] = dataclasses.field(default_factory=dict)
    # per CPU call (by index): the intermediates kept in per-tile buffers (`tiling`)
    plans: dict[int, TilePlan] = dataclasses.field(default_factory=dict)
    # per CPU call without a plan and innermost dimension (by position): its jammed loop
    jams: dict[tuple[int, int], Jam] = dataclasses.field(default_factory=dict)
    kernels: list[str] = dataclasses.field(default_factory=list)

    @staticmethod
    def of(
        program: ir.Program,
        *,
        device: Device,
        enable_transforms: bool,
        data_layout: DataLayout,
        openmp_threshold: int,
        materialization: Materialization,
    ) -> TranslationContext:
        translated = transform_program(program) if enable_transforms else program
        signature = ProgramSignature.of(program)
        temporaries = tuple(
            FieldArg(t.name, program.field_type(t.name), True) for t in program.temporaries
        )
        gpu = device is Device.GPU
        ctx = TranslationContext(
            enable_transforms=enable_transforms,
            data_layout=data_layout,
            openmp_threshold=openmp_threshold,
            original=program,
            program=translated,
            signature=signature,
            temporaries=temporaries,
            fields={f.name: f for f in (*signature.fields, *temporaries)},
            scalars={s.name: s.variable for s in signature.scalars},
            fops={f.name: f for f in translated.field_operators},
            scans={s.name: s for s in translated.scan_operators},
            functions=None if enable_transforms else FieldOperatorFunctions(program),
            gpu=gpu,
        )
        tables = {
            f.type.connectivity.name: f
            for f in signature.fields
            if isinstance(f.type, ir.TableType)
        }
        if tables:
            ctx.mesh = MeshTables.of(program, table_reader(tables, ctx.access().stride))
        ctx.chains = [] if gpu else scan_chains(translated, field_operators=enable_transforms)
        if not gpu and enable_transforms:
            for index, call in enumerate(translated.calls):
                if call.callee in ctx.scans:
                    continue
                fop = ctx.fops[call.callee]
                dims = tuple(dd.dim for dd in call.domain.dims)
                body = call_body(fop, call.args)
                plan = plan_tiles(body, dims, materialization)
                if plan is not None:
                    ctx.plans[index] = plan
                    continue
                for inner in range(len(dims)):
                    jam = plan_jam(body, dims, inner, materialization, len(call.outs))
                    if jam is not None:
                        ctx.jams[index, inner] = jam
        for chain in ctx.chains:
            axis = chain_scan(translated, chain).axis
            level = f"({index_var(axis)} - {bound_var(axis, 'start')})"
            for name in chained_temporaries(translated, [chain]):
                # at the current level and column of the block: sc_width columns per level
                ctx.buffered[name] = f"sc_buf_{name}[{level} * sc_width + sc_b]"
        return ctx

    def access(
        self,
        unit_dim: Dimension | None = None,
        stages: Mapping[str, Callable[[Pos], str]] | None = None,
    ) -> PointAccess:
        """Memory access at one point; in a kernel function with `unit_dim` innermost (its
        `sc_unit` instance reads along it with stride 1) and tile `stages` in buffers."""
        return PointAccess(self, unit_dim, dict(stages or {}))

    def domain_code(self, index: int) -> list[str]:
        """The bounds of call `index` and its halo check; opens the block of a non-empty
        domain, which the caller closes."""
        # the callee's name as the user wrote it
        return open_domain(self.original.name, self.original.calls[index])

    def parallel_dims(self, call: ir.ProgramCall) -> list[Dimension]:
        """The dimensions a call's points run in parallel over: all of its domain's, but a
        scan's axis, which each column walks sequentially."""
        scan = self.scans.get(call.callee)
        return [dd.dim for dd in call.domain.dims if scan is None or dd.dim != scan.axis]


@dataclasses.dataclass(frozen=True)
class PointAccess:
    """How the code at the current point reads and writes the arrays and scalars."""

    ctx: TranslationContext
    # in a kernel function: its innermost dimension, along which its `sc_unit` instance
    # reads with stride 1
    unit_dim: Dimension | None = None
    # in a tiled kernel: how each stage's buffer is read
    stages: Mapping[str, Callable[[Pos], str]] = dataclasses.field(default_factory=dict)

    def stride(self, field: FieldArg, axis: int) -> str:
        last = axis == len(field.type.dims) - 1
        if self.ctx.data_layout is DataLayout.UNIT_STRIDE and last:
            return "1"
        if self.unit_dim == field.type.dims[axis] and not isinstance(field.type, ir.TableType):
            return f"(sc_unit ? 1 : {field.stride(axis)})"
        return field.stride(axis)

    def offset(self, field: FieldArg, pos: Pos) -> str:
        terms = []
        for axis, dim in enumerate(field.type.dims):
            index = index_at(dim, pos)
            stride = self.stride(field, axis)
            terms.append(index if stride == "1" else f"{index} * {stride}")
        return " + ".join(terms) or "0"  # a zero-dimensional field: its one element

    def read_field(self, name: str, pos: Pos) -> str:
        stage = self.stages.get(name)
        if stage is not None:
            return stage(pos)
        if name in self.ctx.buffered:
            return self.ctx.buffered[name]
        field = self.ctx.fields[name]
        return f"{field.pointer}[{self.offset(field, pos)}]"

    def read_scalar(self, name: str) -> str:
        return self.ctx.scalars[name]

    def store(self, name: str, value: str, pos: Pos | None = None) -> str:
        """The statement that stores `value` into array `name` at the current point, or at
        offset `pos` from it (into its buffer, for a temporary of a chain)."""
        if name in self.ctx.buffered:
            return f"{self.ctx.buffered[name]} = {value};"
        field = self.ctx.fields[name]
        return f"{field.pointer}[{self.offset(field, pos or {})}] = {value};"

    def emitter(self, *, cse: bool, with_functions: bool = False) -> ExpressionEmitter:
        """An expression emitter reading through this access (and calling the field
        operators' functions, without transforms, where `with_functions`)."""
        functions = self.ctx.functions if with_functions else None
        return ExpressionEmitter(
            self.read_field,
            self.read_scalar,
            cse=cse,
            call_field_operator=None if functions is None else functions.emit_call,
            mesh=self.ctx.mesh,
        )


def extents(dims: Sequence[Dimension]) -> list[str]:
    """The C++ of the number of points of a call's domain along each of `dims`."""
    return [f"({bound_var(d, 'stop')} - {bound_var(d, 'start')})" for d in dims]


def names_of(field: FieldArg) -> list[str]:
    """The C++ names a field is passed by: its pointer, then its strides."""
    return [field.pointer, *(field.stride(a) for a in range(len(field.type.dims)))]
