"""DaCe translation: program IR -> SDFG, built with DaCe's Python API and serialized as text.

The SDFG of a program (see `DaCeTranslator`):

- one array per field parameter, named like the parameter, of shape `(n_<dim>, ...)` and
  strides `(<name>_s0, <name>_s1, ...)` in elements; every size and stride is an int64
  symbol (with `DataLayout.UNIT_STRIDE` the innermost stride is the constant 1 and has no
  symbol). One scalar argument per scalar parameter, of its dtype. A domain bound given by
  an integer scalar parameter is an int64 symbol per (parameter, dimension),
  `bound_symbol`, holding its value resolved along that dimension (negative: from the
  end), which the shim computes: DaCe takes map ranges and interstate conditions in
  symbols, not in scalar arguments, with auto-optimization on or off.
- one transient per temporary of the program (a field a call makes without `out=`),
  dense over the same size symbols, added widest dtype first (so that packed
  one after another in a workspace every one stays aligned). With `external_workspace`
  every transient array ends with External lifetime after optimization: the caller
  provides its memory (see `stencilchain.steps.dace.shim`). A temporary whose values no
  call needs is neither allocated nor written, and a call that writes only such
  temporaries has no map (DaCe's dead-dataflow elimination cannot remove the outputs of
  C++ tasklets itself); its domain is still checked, as on every backend. With
  `DataLayout.STRIDED` a temporary over the dimensions of a field parameter has its axes
  ordered like the first such parameter's strides (stride symbols the shim computes,
  `temporary_layouts`), as GTFN's are; else C order.
- per program call, a map over the call's domain (start `max` of the starts, stop `min` of
  the stops, `Bound.from_end` counting from `n_<dim>`) around one C++ tasklet that computes
  the inlined body: one input connector per distinct (field, offset) read, with a memlet
  such as `f[i_I + 1, i_J]`, one per scalar read, and one output connector per output.
- a neighbour read (unstructured meshes) gathers: a table entry at the current entity and
  a constant slot is a connector like any other (`c2e[i_Cell, 1]`); a field read at an
  index the tasklet computes from an entry is one connector per distinct memlet spanning
  the whole source dimension (`e[0:n_Edge, i_K]`, dynamic, volume the number of reads),
  which DaCe passes as a pointer to the subset's first element and the code indexes with
  the array's strides in elements (`e_s0`). Programs without tables have no such memlet.
- a `sc.concat_where` is an `if`/`else` in the tasklet's code; DaCe reads every memlet
  before the tasklet runs, so a read inside a branch has its index along the condition's
  dimension clamped into the array (`Min(Max(i + a, 0), n - 1)`): where the branch is
  selected the index is unchanged (its reads are checked like the halo, see below), and
  where it is not no memlet leaves the array.
- the call runs only where its domain is not empty (an interstate condition), so an empty
  domain does nothing on either device.
- with `DataLayout.STRIDED` and more than one dimension, the call is one map per possible
  innermost dimension, and a condition on the first output's strides picks the one whose
  innermost loop has the smallest stride: C-order and Fortran-order arrays both stream
  through memory. Only the loop order depends on it, never the result.
- a scan call is a map over its columns around a nested SDFG whose `LoopRegion` walks the
  levels (one column per GPU thread). On the CPU the map steps over blocks of columns
  along the innermost column dimension and each level is a sequential map over the
  block's columns, the state in arrays of one block on the stack: SCAN_BLOCK columns
  where the axis is not the dimension of smallest stride (unit stride across columns),
  SCAN_BLOCK_NARROW where it is (interleaved columns overlap their division chains).

Halo check: the SDFG does not check that a domain's reads stay inside the arrays (the
embedded executor raises DomainError there). The reads reach `ir.DimDomain.halo` below
the start and above the stop, and those inside a concat_where's branch its `windows`; the caller (the Python call path of the DaCe toolchain)
must do the check with `stencilchain.program.embedded.resolve_domain` on the sizes before
calling the SDFG. Inferred domains stay inside by construction; explicit ones can leave
the arrays (a start counted from the end on a small array, a stop beyond the size).

The tasklets are C++ rather than DaCe's Python tasklet language so that the meaning is
NumPy's exactly, and the same as GTFN's: their code comes from the one expression emitter
of both families (`stencilchain.steps.cpp.expressions`; float literals in shortest
decimal form, reads through the tasklet's connectors): float32 stays float32, integer
`+ - * neg abs` and `**` wrap around (computed in the unsigned type), minimum/maximum
propagate NaN, casts are C++ static_casts (NumPy's astype for every value it defines).

Calling convention of the compiled SDFG: the arrays, the scalars, and the int64 symbols
`n_<dim>` (the size of each dimension) and `<name>_s<axis>` (strides in elements, not
bytes); `symbol_names` lists the symbols without importing DaCe. The compiled function's
parameters are `sdfg.arglist()` of the deserialized SDFG: every program parameter, and
those of the symbols that some call uses (the size and strides of an array that no call
reads or writes are not parameters; DaCe's generic call ignores them if given).

`import dace` happens only inside methods: importing this module does not import DaCe.
"""

from __future__ import annotations

import copy
import dataclasses
import keyword
import math
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from stencilchain.program import ir
from stencilchain.program.connectivity import Connectivity
from stencilchain.program.device import Device
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.transforms import (
    fold_constants,
    inline_calls,
    substitute,
    unread_temporaries,
)
from stencilchain.steps.checks import require_type
from stencilchain.steps.cpp.expressions import (
    Absolute,
    ExpressionEmitter,
    MeshTables,
    Pos,
    Position,
    position,
)
from stencilchain.steps.cpp.literals import literal
from stencilchain.steps.cpp.scans import SCAN_BLOCK, scan_level
from stencilchain.steps.dace.extra import require_dace
from stencilchain.steps.dace.lock import DACE_LOCK
from stencilchain.steps.dace.sdfg_text import sdfg_from_source, sdfg_to_source
from stencilchain.steps.dace.tiling import TilePlan, fuse_temporaries, plan_tiles
from stencilchain.steps.settings import DataLayout
from stencilchain.steps.stages import ProgramSource, step_settings

if TYPE_CHECKING:
    import dace

__all__ = [
    "ACCEPTED_AUTO_OPTIMIZE_ARGS",
    "DERIVED_AUTO_OPTIMIZE_ARGS",
    "DaCeTranslator",
    "bound_parameters",
    "bound_symbol",
    "index_symbol",
    "sdfg_from_source",
    "size_symbol",
    "stride_symbol",
    "symbol_names",
]

# The keyword arguments of dace.transformation.auto.auto_optimize.auto_optimize (DaCe 2.0)
# that the translator sets itself, with the config setting that decides each.
DERIVED_AUTO_OPTIMIZE_ARGS: dict[str, str] = {
    "sdfg": "it is the translation of the program",
    "device": "it is derived from the config's device (STENCILCHAIN_DEVICE); change the device there",
    "use_gpu_storage": (
        "it is derived from the config's device (STENCILCHAIN_DEVICE): the arrays live on "
        "the GPU exactly when the device is gpu; change the device there"
    ),
    "symbols": (
        "the constant symbols are derived from the config's data_layout "
        "(STENCILCHAIN_DATA_LAYOUT: unit_stride makes the innermost strides 1); change the "
        "data layout there. Sizes and other strides are never specialized: the SDFG must "
        "run on every array the argument checks accept"
    ),
}
# The ones a user may pass, with the type of their value.
ACCEPTED_AUTO_OPTIMIZE_ARGS: dict[str, type] = {"validate": bool, "validate_all": bool}
_UNSUPPORTED_AUTO_OPTIMIZE_ARGS: dict[str, str] = {
    "find_fast_library_fn": (
        "a callable cannot be part of the translation cache key, and the translated SDFGs "
        "have no library nodes for it to choose implementations of"
    ),
}

_DACE_DTYPES = {
    "float32": "float32",
    "float64": "float64",
    "int32": "int32",
    "int64": "int64",
    "bool": "bool_",
}
# Words a parameter may not be called: C++ keywords and names the generated C++ uses.
_CPP_RESERVED_WORDS = """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
    char16_t char32_t class compl concept const consteval constexpr constinit const_cast
    continue co_await co_return co_yield decltype default delete do double dynamic_cast else
    enum explicit export extern false float for friend goto if inline int long mutable
    namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast requires return short signed sizeof static static_assert
    static_cast struct switch template this thread_local throw true try typedef typeid
    typename union unsigned using virtual void volatile wchar_t while xor xor_eq
    int32_t int64_t uint32_t uint64_t std dace main"""
_CPP_RESERVED = frozenset(_CPP_RESERVED_WORDS.split())

# GPU thread-block shapes per map dimensionality (the last map parameter is x).
_GPU_BLOCK_SIZE = {1: [256, 1, 1], 2: [64, 4, 1]}
# Columns a CPU scan walks together where the axis is the arrays' fastest dimension (C
# order; elsewhere SCAN_BLOCK): enough interleaved columns to overlap their divisions.
SCAN_BLOCK_NARROW = 64
_GPU_BLOCK_SIZE_3D = [32, 4, 2]
# The tile of a tiled call (`add_tiled_call`): points along the innermost dimension, and
# along each of the others.
TILE_INNER = 256
TILE_OUTER = 4
# ... the innermost tile halved down to this before the others are (`_tile_size`)
TILE_INNER_MIN = 64
# The largest tile buffer: DaCe's compiler.max_stack_array_size (at its default in every
# build, see build_settings), above which a "register" array is allocated on the heap.
STACK_BYTES = 65536


# --- names of the calling convention ------------------------------------------------------------


def size_symbol(dim: Dimension) -> str:
    """The int64 symbol holding the size of `dim` (shared by every field over it)."""
    return f"n_{dim.name}"


def stride_symbol(field: str, axis: int) -> str:
    """The int64 symbol holding the stride, in elements, of axis `axis` of `field`."""
    return f"{field}_s{axis}"


def index_symbol(dim: Dimension) -> str:
    """The map parameter iterating over `dim`."""
    return f"i_{dim.name}"


def bound_symbol(param: str, dim: Dimension) -> str:
    """The int64 symbol holding integer scalar parameter `param` resolved as a domain bound
    along `dim` (a negative value counted from the end; the shim computes it): DaCe takes
    map ranges and interstate conditions in symbols, and scalars are arguments."""
    return f"{param}_bound_{dim.name}"


def bound_parameters(program: ir.Program) -> list[tuple[str, Dimension]]:
    """The (parameter, dimension) pairs of the program's domain bounds given by
    parameters, in order of first appearance."""
    pairs: list[tuple[str, Dimension]] = []
    for call in program.calls:
        for dd in call.domain.dims:
            for b in (*dd.starts, *dd.stops):
                if b.param is not None and (b.param, dd.dim) not in pairs:
                    pairs.append((b.param, dd.dim))
    return pairs


def _field_params(program: ir.Program) -> list[tuple[str, ir.FieldType]]:
    return [(p.name, p.type) for p in program.params if isinstance(p.type, ir.FieldType)]


def _dims(program: ir.Program) -> list[Dimension]:
    dims: list[Dimension] = []
    for _, ftype in _field_params(program):
        dims += [d for d in ftype.dims if d not in dims]
    return dims


def _has_stride_symbol(ftype: ir.FieldType, axis: int, layout: DataLayout) -> bool:
    return not (layout is DataLayout.UNIT_STRIDE and axis == len(ftype.dims) - 1)


def temporary_layouts(program: ir.Program) -> dict[str, str]:
    """Each temporary over the dimensions of a field parameter -> the first such parameter:
    with `DataLayout.STRIDED`, the temporary is dense with its axes ordered like that
    parameter's strides (GTFN's rule), so that loops ordered by the parameters' strides
    also stream the temporaries (its strides are symbols, `stride_symbol`, that the shim
    computes); the others are dense in C order."""
    layouts = {}
    for temporary in program.temporaries:
        dims = program.field_type(temporary.name).dims
        like = next((name for name, t in _field_params(program) if t.dims == dims), None)
        if like is not None:
            layouts[temporary.name] = like
    return layouts


def symbol_names(program: ir.Program, data_layout: DataLayout) -> tuple[str, ...]:
    """The int64 symbols of the program's SDFG: sizes (per dimension, in order of first
    appearance), then strides (per field parameter, per axis; then per temporary laid out
    like a parameter, `temporary_layouts`), then the parameter bounds (`bound_symbol`)."""
    sizes = [size_symbol(d) for d in _dims(program)]
    strides = [
        stride_symbol(name, axis)
        for name, ftype in _field_params(program)
        for axis in range(len(ftype.dims))
        if _has_stride_symbol(ftype, axis, data_layout)
    ]
    if data_layout is DataLayout.STRIDED:
        strides += [
            stride_symbol(name, axis)
            for name in temporary_layouts(program)
            for axis in range(len(program.field_type(name).dims))
        ]
    bounds = [bound_symbol(param, dim) for param, dim in bound_parameters(program)]
    return (*sizes, *strides, *bounds)


def _check_names(program: ir.Program, data_layout: DataLayout) -> None:
    """Parameter names become C++ names and share a namespace with the generated symbols."""
    generated = {
        *symbol_names(program, data_layout),
        *(index_symbol(d) for d in _dims(program)),
    }
    for param in program.params:
        problem = None
        if param.name in generated:
            problem = "is also the name of a generated symbol"
        elif param.name in _CPP_RESERVED or keyword.iskeyword(param.name):
            problem = "is a reserved word of the generated C++"
        elif param.name.startswith("__"):
            problem = "starts with '__', which DaCe reserves"
        if problem is not None:
            raise ValueError(
                f"program {program.name}(): parameter '{param.name}' {problem}; the DaCe "
                f"translation uses parameter names as names in the SDFG and its C++ "
                f"(sizes are n_<dim>, strides <name>_s<axis>, indices i_<dim>); rename it"
            )


def _local_prefix(program: ir.Program, data_layout: DataLayout) -> str:
    """A prefix for the tasklets' connectors and temporaries that no parameter or symbol
    starts with: they are C++ variables in the scope where the arrays are visible."""
    taken = [
        *(p.name for p in (*program.params, *program.temporaries)),
        *symbol_names(program, data_layout),
        *(index_symbol(d) for d in _dims(program)),
    ]
    prefix, n = "sc_", 0
    while any(name.startswith(prefix) for name in taken):
        prefix, n = f"sc{n}_", n + 1
    return prefix


# --- the step ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DaCeTranslator:
    """Program IR -> ProgramSource holding the program's SDFG as canonical JSON ("sdfg").

    `device` has no default on purpose: a builder that forgets it fails.
    `auto_optimize` runs DaCe's auto-optimizer with `auto_optimize_args` (keyword arguments,
    as pairs) on top of what the translator derives from the config: the target device,
    GPU storage of the arrays, and the constant symbols of the data layout; passing one of
    those (or an argument the translator does not know) is a ValueError at construction.
    `disable_transforms` turns off stencilchain's IR transforms and DaCe's simplification:
    field-operator calls are still inlined (a tasklet computes one flat expression), but
    constants are not folded, common subexpressions are not shared, and the SDFG is not
    simplified (except by the auto-optimizer, which always simplifies).
    `data_layout` UNIT_STRIDE makes every innermost stride the constant 1.
    `external_workspace` gives every transient array (the program's temporaries and any
    the optimizer adds) External lifetime, so that the caller provides their memory; the
    ProgramSource then says `workspace=True` if any remain.
    """

    device: Device
    auto_optimize: bool = True
    auto_optimize_args: tuple[tuple[str, object], ...] = ()
    disable_transforms: bool = False
    data_layout: DataLayout = DataLayout.STRIDED
    external_workspace: bool = False

    def __post_init__(self) -> None:
        require_dace("DaCeTranslator")
        require_type(self, "device", Device)
        for name in ("auto_optimize", "disable_transforms", "external_workspace"):
            require_type(self, name, bool)
        require_type(self, "data_layout", DataLayout)
        args = self.auto_optimize_args
        if isinstance(args, Mapping):
            args = tuple(args.items())
        if not isinstance(args, tuple) or not all(
            isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], str) for a in args
        ):
            raise TypeError(
                "DaCeTranslator.auto_optimize_args must be a tuple of (name, value) pairs "
                f"(or a mapping of names to values), got {self.auto_optimize_args!r}"
            )
        seen: set[str] = set()
        for key, value in args:
            _check_auto_optimize_arg(key, value)
            if key in seen:
                raise ValueError(f"DaCeTranslator.auto_optimize_args: '{key}' is given twice")
            seen.add(key)
        # one spelling per setting: equal settings give equal steps and cache keys
        object.__setattr__(self, "auto_optimize_args", tuple(sorted(args)))

    def __call__(self, program: ir.Program, /) -> ProgramSource:
        with DACE_LOCK:  # DaCe's Python side is not thread-safe
            sdfg = self.build_sdfg(program)
            text = sdfg_to_source(sdfg)
            workspace = bool(_external_transients(sdfg))
        return ProgramSource(
            program=program,
            entry_point=program.name,
            source_code=text,
            language="sdfg",
            device=self.device,
            workspace=workspace,
            settings=step_settings(self),
        )

    def prepare(self) -> None:
        """The one-time set-up, done before translations run side by side: import DaCe
        and its auto-optimizer (their first import costs seconds)."""
        with DACE_LOCK:
            import dace

            if self.auto_optimize:
                import dace.transformation.auto.auto_optimize  # noqa: F401

    def derived_auto_optimize_args(self, program: ir.Program) -> dict[str, object]:
        """What the translator passes to auto_optimize besides the SDFG (the device as text)."""
        constants = {
            stride_symbol(name, len(ftype.dims) - 1): 1
            for name, ftype in _field_params(program)
            if self.data_layout is DataLayout.UNIT_STRIDE
        }
        return {
            "device": self.device.value,
            "use_gpu_storage": self.device is Device.GPU,
            "symbols": constants,
        }

    def build_sdfg(self, program: ir.Program) -> dace.SDFG:
        """The (validated, optionally optimized) SDFG of `program`.

        Built with DaCe's `compiler.lineinfo` set to "none" for the duration: otherwise DaCe
        records the file and line of every node's creator (absolute paths of this module and
        of DaCe's), which would make the text differ between checkouts and machines.
        """
        import dace

        _check_names(program, self.data_layout)
        with (
            dace.config.set_temporary("compiler", "lineinfo", value="none"),
            warnings.catch_warnings(),
        ):
            # a call whose domain is always empty is a valid program: it does nothing
            warnings.filterwarnings(
                "ignore", message=r".*turned into a no-ops", category=UserWarning
            )
            sdfg = _SDFGBuilder(self, program).build()
            self._optimize(sdfg, program)
            if self.external_workspace:
                _externalize_transients(sdfg, self.device)
            sdfg.validate()
        return sdfg

    def _optimize(self, sdfg: dace.SDFG, program: ir.Program) -> None:
        import dace

        gpu = self.device is Device.GPU
        if self.auto_optimize:
            from dace.transformation.auto.auto_optimize import auto_optimize

            derived = self.derived_auto_optimize_args(program)
            auto_optimize(
                sdfg,
                dace.DeviceType.GPU if gpu else dace.DeviceType.CPU,
                symbols=derived["symbols"],
                use_gpu_storage=gpu,
                **dict(self.auto_optimize_args),
            )
        elif gpu:
            from dace.transformation.auto.auto_optimize import apply_gpu_storage

            apply_gpu_storage(sdfg)
            sdfg.apply_gpu_transformations(simplify=not self.disable_transforms)
        elif not self.disable_transforms:
            sdfg.simplify()


def _externalize_transients(sdfg: dace.SDFG, device: Device) -> None:
    """Give every transient array of `sdfg` and its nested SDFGs External lifetime, in the
    device's memory (a transient of another storage, e.g. a GPU kernel's registers, stays)."""
    import dace

    heap = dace.StorageType.GPU_Global if device is Device.GPU else dace.StorageType.CPU_Heap
    movable = {heap} if device is Device.GPU else {heap, dace.StorageType.Default}
    for _, _, desc in sdfg.arrays_recursive():
        if (
            desc.transient
            and type(desc) is dace.data.Array
            and desc.storage in movable
            and desc.lifetime is not dace.AllocationLifetime.External
        ):
            desc.storage = heap
            desc.lifetime = dace.AllocationLifetime.External


def _external_transients(sdfg: dace.SDFG) -> list[str]:
    """The names of the transients whose memory the caller provides."""
    import dace

    return [
        name
        for _, name, desc in sdfg.arrays_recursive()
        if desc.transient and desc.lifetime is dace.AllocationLifetime.External
    ]


def _check_auto_optimize_arg(key: str, value: object) -> None:
    where = f"DaCeTranslator.auto_optimize_args: '{key}'"
    if key in DERIVED_AUTO_OPTIMIZE_ARGS:
        raise ValueError(
            f"{where} cannot be set: {DERIVED_AUTO_OPTIMIZE_ARGS[key]} "
            "(the translator derives it from the toolchain config, so that the SDFG agrees "
            "with the config the arguments are checked against)"
        )
    if key in _UNSUPPORTED_AUTO_OPTIMIZE_ARGS:
        raise ValueError(f"{where} is not supported: {_UNSUPPORTED_AUTO_OPTIMIZE_ARGS[key]}")
    expected = ACCEPTED_AUTO_OPTIMIZE_ARGS.get(key)
    if expected is None:
        raise ValueError(
            f"{where} is not an argument of DaCe's auto_optimize that can be set; accepted: "
            f"{', '.join(sorted(ACCEPTED_AUTO_OPTIMIZE_ARGS))}"
        )
    if not isinstance(value, expected):
        raise ValueError(f"{where} must be a {expected.__name__}, got {value!r}")


# --- the SDFG -------------------------------------------------------------------------------------


class _SDFGBuilder:
    def __init__(self, step: DaCeTranslator, program: ir.Program) -> None:
        self.step = step
        self.program = program
        self.transforms = not step.disable_transforms
        self.params = {p.name: p.type for p in (*program.params, *program.temporaries)}
        self.fops = {f.name: f for f in program.field_operators}
        self.scans = {s.name: s for s in program.scan_operators}
        self.fields = {n for n, t in self.params.items() if isinstance(t, ir.FieldType)}
        self.prefix = _local_prefix(program, step.data_layout)
        self.unread = unread_temporaries(program)
        self.layouts = temporary_layouts(program)
        # compound stencils run tile by tile with their intermediates in buffers (tiling),
        # and temporaries are fused into their readers unless they live in a workspace
        self.tiled = step.auto_optimize and step.device is Device.CPU and self.transforms
        self.fused: dict[int, ir.Expr] = {}
        if self.tiled and not step.external_workspace:
            bodies = {k: self.body(c) for k, c in enumerate(program.calls) if c.callee in self.fops}
            fused = fuse_temporaries(program, bodies)
            if fused is not None:
                self.fused = fused
                self.unread = frozenset(t.name for t in program.temporaries)

    def build(self) -> dace.SDFG:
        import dace

        program = self.program
        layout = self.step.data_layout
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
                    if _has_stride_symbol(ftype, axis, layout)
                    else 1
                    for axis in range(len(ftype.dims))
                ]
                sdfg.add_array(param.name, shape, _dace_dtype(ftype.dtype), strides=strides)
            else:
                sdfg.add_scalar(param.name, _dace_dtype(param.type))
        widest_first = sorted(
            program.temporaries, key=lambda t: -program.field_type(t.name).dtype.numpy.itemsize
        )
        for temporary in widest_first:
            if temporary.name in self.unread:
                continue
            ttype = program.field_type(temporary.name)
            shape = [symbols[size_symbol(d)] for d in ttype.dims]
            laid_out = layout is DataLayout.STRIDED and temporary.name in self.layouts
            sdfg.add_transient(
                temporary.name,
                shape,
                _dace_dtype(ttype.dtype),
                strides=(
                    [symbols[stride_symbol(temporary.name, a)] for a in range(len(ttype.dims))]
                    if laid_out
                    else None
                ),
                total_size=math.prod(shape),
            )
        previous = None
        for index, call in enumerate(program.calls):
            if all(o in self.unread for o in call.outs):
                continue
            if call.callee in self.scans:
                block = self.add_scan_call(sdfg, index, call, symbols)
            else:
                block = self.add_call(sdfg, index, call, symbols)
            if previous is not None:
                sdfg.add_edge(previous, block, dace.InterstateEdge())
            previous = block
        if previous is None:  # every call writes only temporaries no call reads
            sdfg.add_state("nothing_to_do", is_start_block=True)
        return sdfg

    def body(self, call: ir.ProgramCall) -> ir.Expr:
        """The call's field operator as one expression of program parameters and literals."""
        fop = self.fops[call.callee]
        body = inline_calls(fop.body, self.fops)
        body = substitute(body, {p.name: arg for p, arg in zip(fop.params, call.args)})
        return fold_constants(body) if self.transforms else body

    def add_call(
        self,
        sdfg: dace.SDFG,
        index: int,
        call: ir.ProgramCall,
        symbols: Mapping[str, Any],
    ) -> Any:
        """A conditional block running the call's map where its domain is not empty."""
        import dace
        from dace.codegen.common import sym2cpp
        from dace.sdfg.state import ControlFlowRegion

        dims = [dd.dim for dd in call.domain.dims]
        ranges = {dd.dim: _range(dd, symbols) for dd in call.domain.dims}
        nonempty = _nonempty(call)
        tasklet = _Tasklet(
            self.transforms,
            self.program,
            self.params,
            dims,
            self.prefix,
            lambda name, axis: str(sym2cpp(sdfg.arrays[name].strides[axis])),
        )
        outs = tuple(None if o in self.unread else o for o in call.outs)
        body = self.fused[index] if index in self.fused else self.body(call)
        if self.tiled:
            tiled = self.add_tiled_call(sdfg, index, call, symbols, body, outs)
            if tiled is not None:
                return tiled
        code = tasklet.code(body, outs)
        block = _call_block(sdfg, f"call{index}_{call.callee}")
        for inner, condition in self.loop_orders(call, dims):
            order = [d for d in dims if d != inner] + [inner]
            label = f"call{index}_{call.callee}_inner_{inner.name}"
            region = ControlFlowRegion(label, sdfg=sdfg)
            state = region.add_state(label, is_start_block=True)
            _tasklet_node, map_entry, _map_exit = state.add_mapped_tasklet(
                name=f"call{index}_{call.callee}",
                map_ranges=[(index_symbol(d), ranges[d]) for d in order],
                inputs={c: tasklet.memlet(c) for c in tasklet.inputs},
                code=code,
                outputs={c: dace.Memlet(m) for c, m in tasklet.outputs.items()},
                language=dace.Language.CPP,
                external_edges=True,
            )
            if self.step.device is Device.GPU:
                map_entry.map.gpu_block_size = _GPU_BLOCK_SIZE.get(len(order), _GPU_BLOCK_SIZE_3D)
            block.add_branch(_where_nonempty(nonempty, condition), region)
        return block

    def add_tiled_call(
        self,
        sdfg: dace.SDFG,
        index: int,
        call: ir.ProgramCall,
        symbols: Mapping[str, Any],
        body: ir.Expr,
        outs: tuple[str | None, ...],
    ) -> Any:
        """The call as a conditional block of tiled maps (`stencilchain.steps.dace.tiling`),
        or None if its body has nothing worth materializing (then it is one pointwise map)."""
        dims = tuple(dd.dim for dd in call.domain.dims)
        label = f"call{index}_{call.callee}"
        orders = self.loop_orders(call, list(dims))
        plans = {
            inner: plan_tiles(body, dims, f"{self.prefix}c{index}{inner.name}_")
            for inner, _ in orders
        }
        plain = [p is None or any(s.type.dims != dims for s in p.stages) for p in plans.values()]
        if any(plain):
            return None
        from dace.sdfg.state import ControlFlowRegion

        ranges = {dd.dim: _range(dd, symbols) for dd in call.domain.dims}
        block = _call_block(sdfg, label)
        for inner, condition in orders:
            plan = plans[inner]
            assert plan is not None
            order = [d for d in dims if d != inner] + [inner]
            name = f"{label}_tiles_inner_{inner.name}"
            region = ControlFlowRegion(name, sdfg=sdfg)
            state = region.add_state(name, is_start_block=True)
            self.add_tiles(sdfg, state, name, plan, outs, dims, order, ranges)
            block.add_branch(_where_nonempty(_nonempty(call), condition), region)
        return block

    def add_tiles(
        self,
        sdfg: dace.SDFG,
        state: Any,
        label: str,
        plan: TilePlan,
        outs: tuple[str | None, ...],
        dims: tuple[Dimension, ...],
        order: list[Dimension],
        ranges: Mapping[Dimension, Any],
    ) -> None:
        """A parallel map over tiles of the domain (`order`, the last innermost) holding one
        sequential map per stage of `plan`: each stage writes its buffer (on the stack, of
        the tile's size plus the stage's halo, dense with the innermost dimension
        contiguous) on its box around the tile; the last map writes the outputs."""
        import dace
        from dace.codegen.common import sym2cpp
        from dace.sdfg.propagation import propagate_memlets_state

        sympy = dace.symbolic.sympy
        p = self.prefix
        call_dims = list(dims)
        size = _tile_size(plan, dims, order)
        tile = {d: dace.symbol(f"{p}tile_{d.name}", dace.int64) for d in order}
        first = {d: ranges[d].ranges[0][0] for d in order}
        last = {d: ranges[d].ranges[0][1] for d in order}
        outer_entry, outer_exit = state.add_map(
            label,
            [(str(tile[d]), dace.subsets.Range([(first[d], last[d], size[d])])) for d in order],
        )
        params = dict(self.params)
        origins: dict[str, dict[Dimension, str]] = {}
        for stage in plan.stages:
            lo = dict(zip(call_dims, stage.low))
            hi = dict(zip(call_dims, stage.high))
            shape = {d: size[d] + hi[d] - lo[d] for d in order}
            strides, stride = {}, 1
            for d in reversed(order):
                strides[d] = stride
                stride *= shape[d]
            sdfg.add_transient(
                stage.name,
                [shape[d] for d in call_dims],
                _dace_dtype(stage.type.dtype),
                strides=[strides[d] for d in call_dims],
                storage=dace.StorageType.Register,
                lifetime=dace.AllocationLifetime.Scope,
            )
            params[stage.name] = stage.type
            origins[stage.name] = {d: f"{tile[d]} + ({lo[d]})" for d in order}
        reads: dict[str, Any] = {}
        written: dict[str, Any] = {}
        writes: dict[str, Any] = {}
        steps: list[tuple[ir.Expr, tuple[str | None, ...], tuple[int, ...], tuple[int, ...]]]
        steps = [(s.expr, (s.name,), s.low, s.high) for s in plan.stages]
        zero = tuple(0 for _ in call_dims)
        steps.append((plan.result, outs, zero, zero))
        for k, (body, targets, lo_t, hi_t) in enumerate(steps):
            lo = dict(zip(call_dims, lo_t))
            hi = dict(zip(call_dims, hi_t))
            tasklet = _Tasklet(
                self.transforms,
                self.program,
                params,
                call_dims,
                p,
                lambda name, axis: str(sym2cpp(sdfg.arrays[name].strides[axis])),
                origins,
            )
            code = tasklet.code(body, targets)
            stage_ranges = [
                (
                    index_symbol(d),
                    dace.subsets.Range(
                        [
                            (
                                tile[d] + lo[d],
                                sympy.Min(tile[d] + size[d] - 1, last[d]) + hi[d],
                                1,
                            )
                        ]
                    ),
                )
                for d in order
            ]
            entry, exit_ = state.add_map(
                f"{label}_stage{k}", stage_ranges, schedule=dace.ScheduleType.Sequential
            )
            node = state.add_tasklet(
                f"{label}_stage{k}",
                dict.fromkeys(tasklet.inputs),
                dict.fromkeys(tasklet.outputs),
                code,
                language=dace.Language.CPP,
            )
            for connector in tasklet.inputs:
                memlet = tasklet.memlet(connector)
                data = memlet.data
                if data in written:
                    state.add_memlet_path(
                        written[data], entry, node, dst_conn=connector, memlet=memlet
                    )
                    continue
                if data not in reads:
                    reads[data] = state.add_read(data)
                state.add_memlet_path(
                    reads[data], outer_entry, entry, node, dst_conn=connector, memlet=memlet
                )
            for connector, text in tasklet.outputs.items():
                data = text.split("[")[0]
                if data in origins:
                    written[data] = state.add_access(data)
                    state.add_memlet_path(
                        node, exit_, written[data], src_conn=connector, memlet=dace.Memlet(text)
                    )
                    continue
                if data not in writes:
                    writes[data] = state.add_write(data)
                state.add_memlet_path(
                    node, exit_, outer_exit, writes[data], src_conn=connector,
                    memlet=dace.Memlet(text),
                )  # fmt: skip
            if not tasklet.inputs:
                state.add_nedge(outer_entry, entry, dace.Memlet())
        propagate_memlets_state(sdfg, state)

    def add_scan_call(
        self,
        sdfg: dace.SDFG,
        index: int,
        call: ir.ProgramCall,
        symbols: Mapping[str, Any],
    ) -> Any:
        """A conditional block running, where the call's domain is not empty, a map over
        the columns around a nested SDFG: a sequential loop region over the levels, the
        state in transient scalars, one tasklet per level (the shared emitter)."""
        from dace.sdfg.state import ControlFlowRegion

        scan = self.scans[call.callee]
        columns = [dd.dim for dd in call.domain.dims if dd.dim != scan.axis]
        axis_domain = next(dd for dd in call.domain.dims if dd.dim == scan.axis)
        axis_range = _range(axis_domain, symbols)
        (axis_start, axis_last, _step) = axis_range.ranges[0]
        nonempty = _nonempty(call)
        label = f"call{index}_{call.callee}"
        block = _call_block(sdfg, label)
        # as for field operators: one map per possible innermost column dimension, picked
        # by the strides of the first output parameter (neighbouring columns share cache
        # lines), or of its first input parameter when it writes only temporaries (C order)
        by = dataclasses.replace(
            call,
            outs=(
                *call.outs,
                *(a.name for a in call.args if isinstance(a, ir.Ref) and a.name in self.fields),
            ),
        )
        orders = self.loop_orders(by, columns) if columns else [(None, None)]
        for inner_dim, condition in orders:
            order = [d for d in columns if d != inner_dim] + ([inner_dim] if inner_dim else [])
            branch = f"{label}_inner_{inner_dim.name}" if inner_dim else label
            for along, width, test in self.scan_walks(by, scan, inner_dim, condition):
                name = f"{branch}_blocks{width}" if along else branch
                region = ControlFlowRegion(name, sdfg=sdfg)
                state = region.add_state(name, is_start_block=True)
                self.add_columns(
                    sdfg, state, name, scan, call, order, symbols, axis_start, axis_last,
                    along, width,
                )  # fmt: skip
                block.add_branch(_where_nonempty(nonempty, test), region)
        return block

    def scan_walks(
        self,
        call: ir.ProgramCall,
        scan: ir.ScanOperatorDef,
        inner: Dimension | None,
        condition: str | None,
    ) -> list[tuple[Dimension | None, int, str | None]]:
        """How the columns walk their levels where `condition` picks `inner` as the innermost
        column dimension: (None: each column on its own, on the GPU; else blocks of `width`
        columns along `inner`, the level loop outside the loop over a block's columns) and
        the branch's condition. On the CPU, blocks of SCAN_BLOCK columns where the axis's
        stride is not the smaller one (unit stride across columns), of SCAN_BLOCK_NARROW
        where it is (C order: interleaved columns overlap their division chains)."""
        if self.step.device is Device.GPU or inner is None:
            return [(None, 0, condition)]
        magnitude = self.stride_magnitude(call)
        if self.step.data_layout is DataLayout.UNIT_STRIDE or magnitude is None:
            # C order or unit stride along the last dimension, known here
            width = SCAN_BLOCK_NARROW if scan.dims[-1] == scan.axis else SCAN_BLOCK
            return [(inner, width, condition)]
        fastest = f"{magnitude(scan.axis)} < {magnitude(inner)}"
        also = f"({condition}) and " if condition else ""
        return [
            (inner, SCAN_BLOCK_NARROW, f"{also}({fastest})"),
            (inner, SCAN_BLOCK, f"{also}not ({fastest})"),
        ]

    def add_columns(
        self,
        sdfg: dace.SDFG,
        state: Any,
        label: str,
        scan: ir.ScanOperatorDef,
        call: ir.ProgramCall,
        order: list[Dimension],
        symbols: Mapping[str, Any],
        axis_start: Any,
        axis_last: Any,
        along: Dimension | None = None,
        width: int = 0,
    ) -> None:
        """The map over the columns (in `order`, the last innermost) around the nested
        SDFG of one column; with `along`, the map's last parameter steps over the first
        columns of blocks of `width` columns along it, and the nested SDFG walks a block."""
        import dace

        p = self.prefix
        inner = self.scan_sdfg(sdfg, label, scan, call, along, width)
        reads = sorted(
            {a.name for a in call.args if isinstance(a, ir.Ref) and a.name in self.fields}
        )
        writes = sorted({o for o in call.outs if o not in self.unread})
        # the nested SDFG's arrays are the program's (DaCe 2.0 wants them equivalent to
        # the arrays connected to it): its symbols are the program's, and the column indices
        mapping: dict[str, Any] = {
            f"{p}start": axis_start,
            f"{p}stop": axis_last + 1,
        }
        ranges = {dd.dim: _range(dd, symbols) for dd in call.domain.dims}
        map_ranges = [(index_symbol(d), ranges[d]) for d in order]
        if along is not None:
            (first, last, _step) = ranges[along].ranges[0]
            map_ranges = [(index_symbol(d), ranges[d]) for d in order if d != along]
            map_ranges.append((f"{p}first", dace.subsets.Range([(first, last, width)])))
            mapping[f"{p}first"] = dace.symbol(f"{p}first", dace.int64)
            mapping[f"{p}columns_stop"] = last + 1
        mapping.update({name: name for name in inner.symbols if name not in mapping})
        scalar_reads = sorted(
            {a.name for a in call.args if isinstance(a, ir.Ref) and a.name not in self.fields}
        )
        nested = state.add_nested_sdfg(
            inner,
            dict.fromkeys([*reads, *scalar_reads]),
            dict.fromkeys(writes),
            symbol_mapping=mapping,
        )
        if order:
            entry, exit_ = state.add_map(label, map_ranges)
            if self.step.device is Device.GPU:
                entry.map.gpu_block_size = _GPU_BLOCK_SIZE.get(len(order), _GPU_BLOCK_SIZE_3D)
        else:
            entry = exit_ = None
        for name in [*reads, *scalar_reads]:
            access = state.add_access(name)
            memlet = dace.Memlet.from_array(name, sdfg.arrays[name])
            if entry is None:
                state.add_edge(access, None, nested, name, memlet)
            else:
                state.add_memlet_path(access, entry, nested, dst_conn=name, memlet=memlet)
        for name in writes:
            access = state.add_access(name)
            subset = dace.Memlet.from_array(name, sdfg.arrays[name])
            if exit_ is None:
                state.add_edge(nested, name, access, None, subset)
            else:
                state.add_memlet_path(nested, exit_, access, src_conn=name, memlet=subset)
        if entry is not None and not reads and not scalar_reads:
            state.add_nedge(entry, nested, dace.Memlet())

    def scan_sdfg(
        self,
        outer: dace.SDFG,
        label: str,
        scan: ir.ScanOperatorDef,
        call: ir.ProgramCall,
        along: Dimension | None = None,
        width: int = 0,
    ) -> dace.SDFG:
        """One column of a scan: the state's transient scalars set to `init`, then a loop
        region over the levels whose state computes the new state and stores it. With
        `along`, a block of columns from `first` along it: the state in arrays of the block
        (on the stack), and each level a sequential map over the block's columns."""
        import dace
        from dace.sdfg.state import LoopRegion

        p = self.prefix
        inner = dace.SDFG(f"{label}_column")
        level = f"{p}level"
        extra = (f"{p}first", f"{p}columns_stop") if along is not None else ()
        for name in (f"{p}start", f"{p}stop", *extra):
            inner.add_symbol(name, dace.int64)
        arrays = {a.name for a in call.args if isinstance(a, ir.Ref) and a.name in self.fields}
        arrays |= {o for o in call.outs if o not in self.unread}
        for name in sorted(arrays):
            desc = copy.deepcopy(outer.arrays[name])
            desc.transient = False
            inner.add_datadesc(name, desc)
            for symbol in sorted(str(x) for x in desc.free_symbols):
                if symbol not in inner.symbols:
                    inner.add_symbol(symbol, dace.int64)
        for d in scan.dims:
            if d != scan.axis and d != along:
                inner.add_symbol(index_symbol(d), dace.int64)
        if along is None:
            block: dict[str, str] = {}
            element = "0"
        else:
            stop = f"min({p}first + {width}, {p}columns_stop)"
            block = {index_symbol(along): f"{p}first:{stop}"}
            element = f"{index_symbol(along)} - {p}first"

        def at_level(name: str) -> str:
            ftype = self.params[name]
            assert isinstance(ftype, ir.FieldType)
            indices = (level if d == scan.axis else index_symbol(d) for d in ftype.dims)
            return f"{name}[{', '.join(indices)}]"

        scalars = {a.name for a in call.args if isinstance(a, ir.Ref) and a.name not in self.fields}
        for name in sorted(scalars):
            inner.add_scalar(name, outer.arrays[name].dtype)
        for k, lit in enumerate(scan.init):
            if along is None:
                inner.add_scalar(f"{p}state{k}", _dace_dtype(lit.type), transient=True)
            else:
                inner.add_array(
                    f"{p}state{k}",
                    [width],
                    _dace_dtype(lit.type),
                    transient=True,
                    storage=dace.StorageType.Register,
                )
        init = inner.add_state(f"{label}_init", is_start_block=True)
        init_code = "\n".join(
            f"{p}o{k} = {cpp_literal(lit.value, lit.type)};" for k, lit in enumerate(scan.init)
        )
        _add_tasklet(
            init,
            f"{label}_init",
            {},
            {f"{p}o{k}": f"{p}state{k}[{element}]" for k in range(len(scan.init))},
            init_code,
            block,
        )
        if scan.forward:
            loop = LoopRegion(
                f"{label}_levels",
                f"{level} < {p}stop",
                level,
                f"{level} = {p}start",
                f"{level} = {level} + 1",
                sdfg=inner,
            )
        else:
            loop = LoopRegion(
                f"{label}_levels",
                f"{level} >= {p}start",
                level,
                f"{level} = {p}stop - 1",
                f"{level} = {level} - 1",
                sdfg=inner,
            )
        inner.add_node(loop)
        inner.add_edge(init, loop, dace.InterstateEdge())
        body = loop.add_state(f"{label}_level", is_start_block=True)
        inputs: dict[str, str] = {}

        def read_argument(param: ir.Param, arg: ir.Expr) -> str:
            assert isinstance(arg, ir.Ref)
            connector = f"{p}in_{arg.name}"
            inputs[connector] = at_level(arg.name) if arg.name in self.fields else f"{arg.name}[0]"
            return connector

        def read_state(k: int) -> str:
            inputs[f"{p}s{k}"] = f"{p}state{k}[{element}]"
            return f"{p}s{k}"

        statements, values = scan_level(
            scan,
            call,
            read_argument=read_argument,
            read_state=read_state,
            decimal_literals=True,
            prefix=f"{p}t",
        )
        outputs = {f"{p}n{k}": f"{p}state{k}[{element}]" for k in range(len(values))}
        for k, name in enumerate(call.outs):
            if name not in self.unread:
                outputs[f"{p}out{k}_{name}"] = at_level(name)
        code = list(statements)
        for k, value in enumerate(values):
            code.append(f"{p}n{k} = {value};")
            if call.outs[k] not in self.unread:
                code.append(f"{p}out{k}_{call.outs[k]} = {value};")
        if along is not None:
            # the same columns, but a range that names the level, so that DaCe's
            # MoveLoopIntoMap (auto-optimization) does not move the level loop back inside
            # the loop over the columns: `level - start >= 0` at every level
            stop = f"min({p}first + {width}, {p}columns_stop, {p}columns_stop + {level} - {p}start)"
            block = {index_symbol(along): f"{p}first:{stop}"}
        _add_tasklet(body, f"{label}_level", inputs, outputs, "\n".join(code), block)
        return inner

    def stride_magnitude(self, call: ir.ProgramCall) -> Callable[[Dimension], str] | None:
        """The |stride| (a symbolic expression) along a dimension of the call's first output
        parameter, or of the parameter a temporary output is laid out like
        (temporary_layouts): what decides the call's loop order; None when it writes none."""
        parameters = [o for o in call.outs if not self.program.is_temporary(o)]
        parameters += [self.layouts[o] for o in call.outs if o in self.layouts]
        if not parameters:
            return None
        out = parameters[0]
        out_type = self.params[out]
        assert isinstance(out_type, ir.FieldType)

        def magnitude(dim: Dimension) -> str:
            s = stride_symbol(out, out_type.dims.index(dim))
            return f"max({s}, -{s})"

        return magnitude

    def loop_orders(
        self, call: ir.ProgramCall, dims: list[Dimension]
    ) -> list[tuple[Dimension, str | None]]:
        """(innermost dimension, condition on strides) for each map of the call."""
        magnitude = self.stride_magnitude(call)
        if self.step.data_layout is DataLayout.UNIT_STRIDE or len(dims) == 1 or magnitude is None:
            return [(dims[-1], None)]  # C order, like the temporaries
        # the first dimension of smallest |stride| is innermost
        orders: list[tuple[Dimension, str | None]] = []
        for k, inner in enumerate(dims):
            tests = [
                f"{magnitude(inner)} {'<' if j < k else '<='} {magnitude(other)}"
                for j, other in enumerate(dims)
                if j != k
            ]
            orders.append((inner, " and ".join(tests)))
        return orders


def _tile_size(
    plan: TilePlan, dims: tuple[Dimension, ...], order: list[Dimension]
) -> dict[Dimension, int]:
    """The tile along each dimension: TILE_INNER along the innermost, TILE_OUTER along the
    others, halved until every buffer fits in STACK_BYTES: the innermost down to
    TILE_INNER_MIN, then the others (a thin tile recomputes more of its halo), then the
    innermost again."""
    inner, outer = TILE_INNER, TILE_OUTER

    def fits() -> bool:
        for stage in plan.stages:
            points = stage.type.dtype.numpy.itemsize
            for d, lo, hi in zip(dims, stage.low, stage.high):
                points *= (inner if d == order[-1] else outer) + hi - lo
            if points > STACK_BYTES:
                return False
        return True

    while not fits() and (outer > 1 or inner > 1):
        if inner > TILE_INNER_MIN or outer == 1:
            inner //= 2
        else:
            outer //= 2
    return {d: inner if d == order[-1] else outer for d in order}


def _add_tasklet(
    state: Any,
    name: str,
    inputs: Mapping[str, str],
    outputs: Mapping[str, str],
    code: str,
    block: Mapping[str, str],
) -> None:
    """A C++ tasklet reading and writing the memlets of its connectors, in a sequential map
    over `block` (parameter: range) if it is not empty."""
    import dace

    if block:
        state.add_mapped_tasklet(
            name,
            dict(block),
            {c: dace.Memlet(m) for c, m in inputs.items()},
            code,
            {c: dace.Memlet(m) for c, m in outputs.items()},
            schedule=dace.ScheduleType.Sequential,
            language=dace.Language.CPP,
            external_edges=True,
        )
        return
    tasklet = state.add_tasklet(
        name, dict.fromkeys(inputs), dict.fromkeys(outputs), code, language=dace.Language.CPP
    )
    reads: dict[str, Any] = {}
    for connector, memlet in inputs.items():
        data = memlet.split("[")[0]
        node = reads.get(data)
        if node is None:
            node = reads[data] = state.add_read(data)
        state.add_edge(node, None, tasklet, connector, dace.Memlet(memlet))
    for connector, memlet in outputs.items():
        data = memlet.split("[")[0]
        state.add_edge(tasklet, connector, state.add_write(data), None, dace.Memlet(memlet))


def _dace_dtype(dtype: ScalarType) -> Any:
    import dace

    return getattr(dace, _DACE_DTYPES[dtype.name])


def _bound_text(dim: Dimension, bound: ir.Bound) -> str:
    """A bound as the text of an interstate condition."""
    if bound.param is not None:
        base = bound_symbol(bound.param, dim)
        return base if bound.value == 0 else f"{base} + ({bound.value})"
    if not bound.from_end:
        return str(bound.value)
    if bound.value == 0:
        return size_symbol(dim)
    sign = "+" if bound.value > 0 else "-"
    return f"{size_symbol(dim)} {sign} {abs(bound.value)}"


def _nonempty(call: ir.ProgramCall) -> str:
    """The interstate condition under which the call's domain is not empty."""
    return " and ".join(
        f"({_bound_text(dd.dim, lo)}) < ({_bound_text(dd.dim, hi)})"
        for dd in call.domain.dims
        for lo in dd.starts
        for hi in dd.stops
    )


def _where_nonempty(nonempty: str, condition: str | None) -> str:
    """A branch's condition: the domain is not empty and, if given, `condition` holds."""
    return nonempty if condition is None else f"({nonempty}) and ({condition})"


def _call_block(sdfg: dace.SDFG, label: str) -> Any:
    """The conditional block of one call, added to `sdfg` (its start if it is the first)."""
    from dace.sdfg.state import ConditionalBlock

    block = ConditionalBlock(label, sdfg=sdfg, parent=sdfg)
    sdfg.add_node(block, is_start_block=sdfg.number_of_nodes() == 0)
    return block


def _range(dd: ir.DimDomain, symbols: Mapping[str, Any]) -> Any:
    """The map range of one dimension of a domain: [max(starts), min(stops))."""
    import dace

    sympy = dace.symbolic.sympy

    def value(bound: ir.Bound) -> Any:
        if bound.param is not None:
            return symbols[bound_symbol(bound.param, dd.dim)] + bound.value
        return symbols[size_symbol(dd.dim)] + bound.value if bound.from_end else bound.value

    starts = [value(b) for b in dd.starts]
    stops = [value(b) for b in dd.stops]
    start = starts[0] if len(starts) == 1 else sympy.Max(*starts)
    stop = stops[0] if len(stops) == 1 else sympy.Min(*stops)
    return dace.subsets.Range([(start, stop - 1, 1)])


# --- the tasklet code ------------------------------------------------------------------------------


class _Tasklet:
    """The C++ code of one call's tasklet (the one expression emitter of
    `stencilchain.steps.cpp.expressions`), with its connectors and memlets.

    `inputs` and `outputs` map connector names to memlet text; field reads are keyed by
    (field, offset), so each distinct access is one connector. A read at an index that the
    tasklet computes (a neighbour's, from a table) is a gather: its connector's memlet
    spans the whole array along that dimension, the connector is a pointer to the subset's
    first element, and the code indexes it with the array's strides (`strides(name, axis)`,
    C++ text); `gathers` counts the reads through each such connector (its volume).
    Tables are read like fields (`MeshTables`), so an entry at the current cell and a
    constant slot is a plain connector.
    """

    def __init__(
        self,
        cse: bool,
        program: ir.Program,
        params: Mapping[str, ir.FieldType | ScalarType],
        dims: list[Dimension],
        prefix: str,
        strides: Callable[[str, int], str],
        origins: Mapping[str, Mapping[Dimension, str]] | None = None,
    ) -> None:
        self.prefix = prefix
        self.origins = origins or {}
        self.params = params
        self.dims = dims
        self.strides = strides
        self.inputs: dict[str, str] = {}
        self.outputs: dict[str, str] = {}
        self.gathers: dict[str, int] = {}
        self._reads: dict[tuple[str, Position, tuple[Dimension, ...]], str] = {}
        self._gathered: dict[str, str] = {}  # memlet -> connector
        self._tables = {
            t.connectivity.name: name for name, t in params.items() if isinstance(t, ir.TableType)
        }
        self.emitter = ExpressionEmitter(
            self.read,
            lambda name: self.read(name, {}),
            cse=cse,
            decimal_literals=True,
            tuples=False,
            prefix=f"{prefix}t",
            mesh=MeshTables.of(program, self.read_table) if self._tables else None,
        )

    def code(self, body: ir.Expr, outs: tuple[str | None, ...]) -> str:
        """The tasklet computing `body` and writing each element to its output (None: to
        none, the value is not needed)."""
        values = [self.emitter.emit(e, {}) for e in _tuple_elements(body)]
        if len(values) != len(outs):
            raise ValueError(f"{len(values)} results for {len(outs)} outputs {outs}")
        statements = list(self.emitter.statements)
        for k, (name, value) in enumerate(zip(outs, values)):
            if name is None:
                continue
            connector = f"{self.prefix}out{k}_{name}"
            self.outputs[connector] = f"{name}[{self.subset(name, ())}]"
            statements.append(f"{connector} = {value};")
        return "\n".join(statements)

    def subset(self, name: str, pos: Position, clamped: tuple[Dimension, ...] = ()) -> str:
        """The memlet subset of `name` at `pos`; along the `clamped` dimensions the index is
        kept inside the array (see `read`)."""
        ftype = self.params[name]
        assert isinstance(ftype, ir.FieldType)
        amounts = dict(pos)
        indices = []
        for dim in ftype.dims:
            amount = amounts.get(dim, 0)
            if isinstance(amount, Absolute):  # a constant slot, or all of a gathered dimension
                indices.append(amount.index if _constant(amount) else f"0:{size_symbol(dim)}")
                continue
            if dim not in self.dims:
                raise ValueError(f"field '{name}' is read along {dim.name}, not in the domain")
            sign = "+" if amount > 0 else "-"
            index = (
                index_symbol(dim) if amount == 0 else f"{index_symbol(dim)} {sign} {abs(amount)}"
            )
            if dim in clamped and amount != 0:
                index = f"Min(Max({index}, 0), {size_symbol(dim)} - 1)"
            origin = self.origins.get(name, {}).get(dim)
            if origin is not None:  # a tile buffer, indexed from its first point
                index = f"{index} - ({origin})"
            indices.append(index)
        return ", ".join(indices)

    def read(self, name: str, pos: Pos) -> str:
        """The connector holding `name` at `pos` (a field) or `name` (a scalar)."""
        ptype = self.params[name]
        # a field over fewer dimensions than the domain (broadcast) is one access whatever
        # the offsets along the others
        own = {d: a for d, a in pos.items() if isinstance(ptype, ir.FieldType) and d in ptype.dims}
        # a memlet is read before the tasklet runs, also where its concat_where branch is not
        # selected: along the branch's dimension its index is clamped into the array, which
        # changes nothing where the branch is selected (its reads are checked to be inside)
        clamped = tuple(d for d in self.emitter.guarded if own.get(d, 0) != 0)
        if any(isinstance(a, Absolute) and not _constant(a) for a in own.values()):
            return self.gather(name, own, clamped)
        key = (name, position(own) if isinstance(ptype, ir.FieldType) else (), clamped)
        connector = self._reads.get(key)
        if connector is None:
            connector = f"{self.prefix}in{len(self._reads)}_{name}"
            self._reads[key] = connector
            if isinstance(ptype, ir.FieldType):
                self.inputs[connector] = f"{name}[{self.subset(name, key[1], clamped)}]"
            else:
                self.inputs[connector] = f"{name}[0]"
        return connector

    def gather(self, name: str, pos: Pos, clamped: tuple[Dimension, ...]) -> str:
        """`name` at `pos`, where some indices are computed in the tasklet (a neighbour's):
        one connector per memlet, a pointer to the subset's first element (index 0 along
        each gathered dimension), indexed with the array's strides in elements."""
        memlet = f"{name}[{self.subset(name, position(pos), clamped)}]"
        connector = self._gathered.get(memlet)
        if connector is None:
            connector = f"{self.prefix}gather{len(self._gathered)}_{name}"
            self._gathered[memlet] = connector
            self.inputs[connector] = memlet
            self.gathers[connector] = 0
        self.gathers[connector] += 1
        ftype = self.params[name]
        assert isinstance(ftype, ir.FieldType)
        terms = []
        for axis, dim in enumerate(ftype.dims):
            amount = pos.get(dim, 0)
            if isinstance(amount, Absolute) and not _constant(amount):
                stride = self.strides(name, axis)
                terms.append(
                    f"({amount.index})" if stride == "1" else f"({amount.index}) * {stride}"
                )
        return f"{connector}[{' + '.join(terms)}]"

    def memlet(self, connector: str) -> dace.Memlet:
        """A new memlet of an input connector: a gather reads as many elements as the code
        indexes it (`dynamic`: one inside a branch may not run)."""
        import dace

        text = self.inputs[connector]
        if connector in self.gathers:
            return dace.Memlet(text, volume=self.gathers[connector], dynamic=True)
        return dace.Memlet(text)

    def read_table(self, conn: Connectivity, at: Pos) -> str:
        """The entry of `conn`'s table at `at`, read like a field (`MeshTables`)."""
        return self.read(self._tables[conn.name], at)


def _constant(amount: Absolute) -> bool:
    """An absolute index known when translating (a neighbour slot of an unrolled
    reduction): a point of the memlet rather than a gather."""
    return amount.index.isdigit()


def _tuple_elements(body: ir.Expr) -> tuple[ir.Expr, ...]:
    return body.elems if isinstance(body, ir.MakeTuple) else (body,)


def cpp_literal(value: bool | int | float, dtype: ScalarType) -> str:
    """An exact C++ literal of `value` as `dtype` (decimal: shortest round-trip form)."""
    return literal(value, dtype, decimal=True)
