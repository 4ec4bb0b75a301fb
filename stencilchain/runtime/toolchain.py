"""A toolchain: a named composition of steps that turns programs into compiled programs.

`program.with_backend(toolchain)` returns a `BoundProgram`: its first call compiles (or
loads from the caches) through the toolchain's compiled-program pool; later calls go
straight to the compiled entry point, which checks its arguments in native code.

A toolchain configured with an external workspace (DaCe's `external_workspace`) keeps a
program's temporaries in memory that the caller provides: `workspace_size(*args)` says
how many bytes a call needs, `set_workspace(buffer)` hands a buffer to the bound program,
and every later call passes it to the compiled entry point as a last argument.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Iterable
from typing import Any

from stencilchain.errors import ArgumentError, WorkspaceError
from stencilchain.program import ir
from stencilchain.program.arguments import (
    ArgumentBinder,
    ArgumentChecker,
    FieldParam,
    TableChecks,
    bind_arguments,
)
from stencilchain.program.device import Device
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dynamic_offsets import check_offsets, offset_arguments
from stencilchain.program.field_values import FieldValue
from stencilchain.program.hashing import sha256_of
from stencilchain.program.own_ranges import RangeKey, RangeKeys, specialise_ranges
from stencilchain.program.program import Program
from stencilchain.program.table_reads import table_read_check
from stencilchain.runtime import tracing
from stencilchain.runtime.build_policy import BuildPolicy
from stencilchain.runtime.compile_log import log_load, log_stage
from stencilchain.runtime.compile_many import CompileReport, compile_many
from stencilchain.runtime.config import RuntimeConfig, output_settings
from stencilchain.runtime.metrics import MetricsRegistry, ProgramMetrics
from stencilchain.runtime.pools import CompiledProgramPools
from stencilchain.steps.stages import CompiledArtifact
from stencilchain.steps.workflow import CompileWorkflow, StageHook, StageReport


@dataclasses.dataclass(frozen=True)
class CompiledProgram:
    """A loaded program: `entry(*args)` runs it; `artifact` says where it lives.

    With `workspace`, the entry point takes a last argument: the workspace buffer, or None
    to return the number of bytes a call with the other arguments needs.
    """

    name: str
    artifact: CompiledArtifact
    entry: Callable[..., Any]
    checker: ArgumentChecker
    workspace: bool = False
    # the program compiled for arguments over other ranges (program/own_ranges.py)
    over_ranges: Callable[[RangeKey], CompiledProgram] | None = dataclasses.field(
        default=None, compare=False
    )

    def __call__(self, *args: Any) -> None:
        try:
            self.entry(*args)
        except TypeError as err:
            if not run_rejected(self, self.entry, args):
                explain_mismatch(self.checker, args, err)


def explain_mismatch(checker: ArgumentChecker, args: tuple[Any, ...], err: TypeError) -> None:
    """Raise the ArgumentError that the shared checker finds for `args`, or one with the
    native code's own message when only the native check (e.g. the layout) failed."""
    checker.check(args)
    raise ArgumentError(str(err)) from None


def run_rejected(
    compiled: CompiledProgram, entry: Callable[..., Any], args: tuple[Any, ...]
) -> bool:
    """Run a call that `entry` (`compiled`'s, perhaps wrapped) rejected because its fields
    are over other ranges than the program was compiled for (the program specialised for
    them runs it) or because it holds field values (their arrays run it); False when it is
    neither. Plain arrays of one size per dimension never come here."""
    checker = compiled.checker
    plain, key = checker.keys.of(args)
    if key is not None and key != checker.key and compiled.over_ranges is not None:
        if compiled.workspace:
            raise ArgumentError(
                f"{compiled.name}(): fields over their own ranges are not supported yet "
                "with a workspace the caller provides (external_workspace)"
            )
        compiled.over_ranges(key)(*plain)
        return True
    return run_unwrapped(checker, entry, args)


def run_unwrapped(
    checker: ArgumentChecker, entry: Callable[..., Any], args: tuple[Any, ...]
) -> bool:
    """Run a call that `entry` rejected because it holds field values (`sc.as_field`) once
    more with their arrays; False when it holds none. Plain arrays never come here: they
    pay nothing for field values."""
    plain = checker.unwrapped(args)
    if plain is None:
        return False
    try:
        entry(*plain)
    except TypeError as err:
        if isinstance(err, ArgumentError):
            raise
        explain_mismatch(checker, plain, err)
    return True


@dataclasses.dataclass(frozen=True, eq=False)
class Toolchain:
    """A named composition of translation, bindings and compilation (its `workflow`).

    `name` is unique among the toolchains of a process: metrics and compiled-program
    pools are keyed by it. `config` is the frozen config the steps were built from;
    `pools` and `metrics` are the container's (shared by the toolchains it builds);
    `policy` says what happens around a build (pruning the caches, rebuilding a damaged
    cached module).
    """

    name: str
    family: str
    config: RuntimeConfig
    workflow: CompileWorkflow
    # runtime state, not part of what defines the toolchain (compare=False)
    pools: CompiledProgramPools[CompiledProgram] = dataclasses.field(
        default_factory=CompiledProgramPools, compare=False
    )
    metrics: MetricsRegistry = dataclasses.field(default_factory=MetricsRegistry, compare=False)
    policy: BuildPolicy = dataclasses.field(default_factory=BuildPolicy, compare=False)

    @property
    def device(self) -> Device:
        return self.config.device

    @functools.cached_property
    def identity(self) -> str:
        """What keys this toolchain's compiled-program pool: its name, its config and its
        workflow's steps. Toolchains built twice from the same container share a pool; a
        toolchain with another step (an override) gets its own. Settings that change no
        output (`build_jobs`) are left out: toolchains differing only there share a pool."""
        return sha256_of(self.name, self.family, output_settings(self.config), repr(self.workflow))

    @property
    def pool(self) -> dict[str, CompiledProgram]:
        """The compiled programs of this toolchain, by program fingerprint.

        The fingerprint is the whole argument signature too: a program's dtypes and ndims
        are declared, the device and the accepted layouts are the toolchain's, and the
        generated code takes any strides."""
        return self.pools.pool(self.identity)

    def compile(
        self,
        program: Program | ir.Program,
        hook: StageHook | None = None,
        *,
        build_jobs: int | None = None,
    ) -> CompiledProgram:
        """The compiled program, from the pool, the caches, or a new build (by the
        workflow; `hook` sees its stages, when they run). `build_jobs` bounds the parallel
        jobs of a native build (None: the compilation step's own); it changes no output."""
        program_ir = program.ir if isinstance(program, Program) else program
        workflow = (
            self.workflow if build_jobs is None else self.workflow.with_build_jobs(build_jobs)
        )
        return self.compile_with(program_ir, hook, workflow)

    def compile_with(
        self, program: ir.Program, hook: StageHook | None, workflow: CompileWorkflow
    ) -> CompiledProgram:
        """`compile`, a new build going through `workflow`: this toolchain's own workflow
        or one that differs in nothing that changes the output (compile_many's jobs budget,
        or a compilation step handing over what a batch build just made)."""
        return self.pools.get_or_build(
            self.identity, program.fingerprint(), lambda: self._build(program, hook, workflow)
        )

    def compile_many(
        self,
        programs: Iterable[Program | ir.Program],
        *,
        jobs: int | None = None,
        progress: Callable[[CompileReport], None] | None = None,
        batch: bool = True,
    ) -> list[CompiledProgram]:
        """The compiled programs of `programs`, in their order, each compiled as `compile`
        does (from the pool, the caches, or a new build, and put in the pool), up to
        `jobs` at once (default: the config's `build_jobs`). A program given twice is
        compiled once. `progress` sees a `CompileReport` as each program is done. If any
        fails, every other one is still compiled, then BuildsFailedError names them.
        With `batch` (and more than one job), a toolchain that can builds the new programs
        in batches, one native build each, every program still in its own build-cache
        entry; `batch=False` builds each alone (docs/adr/0036-compile-many-batches.md)."""
        return compile_many(self, programs, jobs=jobs, progress=progress, batch=batch)

    def _build(
        self, program: ir.Program, hook: StageHook | None, workflow: CompileWorkflow
    ) -> CompiledProgram:
        times: dict[str, float] = {}
        recording = tracing.active()  # a trace that starts mid-build sees the next one
        began = time.perf_counter()

        def observe(report: StageReport) -> None:
            times[report.stage] = report.seconds
            log_stage(report, program.name, self.name, self.family, workflow)
            if recording is not None:
                tracing.record_stage(recording, report, program.name, self.name, self.family)
            if hook is not None:
                hook(report)

        artifact = workflow(program, observe)
        self.policy.after_build(artifact)
        start = time.perf_counter()
        try:
            entry = artifact.load()
        except (ImportError, OSError) as error:
            if not self.policy.discard_unloadable(artifact, error):
                raise
            artifact = workflow(program, observe)
            start = time.perf_counter()
            entry = artifact.load()
        loaded = time.perf_counter() - start
        log_load(program.name, self.name, self.family, artifact.module_path, loaded)
        if recording is not None:
            tracing.record_load(
                recording, program.name, self.name, artifact.module_path, start, loaded
            )
            recording.complete(
                program.name,
                "compile",
                began,
                time.perf_counter() - began,
                {"program": program.name, "toolchain": self.name, "family": self.family},
            )
        if self.config.metrics:
            entry_metrics = self.metrics.entry(self.name, program.name)
            entry_metrics.steps.update(times)
            entry_metrics.load_time = loaded
        checker = ArgumentChecker(program, self.config.device)
        tables = TableChecks(program)
        if tables and not _checks_tables(entry):  # the GPU entry leaves tables to Python
            native = entry

            def entry(*args: Any) -> Any:
                tables.check(args)
                return native(*args)

        offsets = offset_arguments(program)
        if offsets:  # nor the entries of the offset fields of sc.as_offset
            unchecked, ranges = entry, dict(program.ranges)  # a specialisation's ranges

            def entry(*args: Any) -> Any:
                check_offsets(program.name, offsets, args, ranges)
                return unchecked(*args)

        reads = table_read_check(program, self.config.device) if program.ranges else None
        if reads is not None:  # nor the table entries a specialisation's call reads
            unread = entry

            def entry(*args: Any) -> Any:
                reads(args)
                return unread(*args)

        return CompiledProgram(
            program.name,
            artifact,
            entry,
            checker,
            artifact.workspace,
            # a specialisation is called only with arguments over its own ranges
            None if program.ranges else self._over_ranges(program, checker.keys),
        )

    def _over_ranges(
        self, program: ir.Program, keys: RangeKeys
    ) -> Callable[[RangeKey], CompiledProgram]:
        """What compiles (once per key, on first use) `program` specialised for a call's
        fields over their own ranges (`keys`: the program's, its checker's)."""
        made: dict[RangeKey, CompiledProgram] = {}

        def over(key: RangeKey) -> CompiledProgram:
            compiled = made.get(key)
            if compiled is None:
                spec = specialise_ranges(program, keys.named(key))
                compiled = made[key] = self.compile(spec)
            return compiled

        return over

    def executor(self, program: Program) -> BoundProgram:
        """What `program.with_backend(self)` returns."""
        return BoundProgram(self, program)

    @property
    def external_workspace(self) -> bool:
        """Whether programs keep their temporaries in a workspace the caller provides."""
        return self.config.external_workspace

    def __repr__(self) -> str:
        return f"Toolchain(name={self.name!r}, family={self.family!r}, config={self.config!r})"


class BoundProgram(functools.partial[None]):
    """A program bound to a toolchain; compiled on its first call, then called directly.

    It is a `functools.partial` of its current call path (`func`) for partial's call, which
    is C: a call goes from the interpreter to the call path without a Python frame. The
    first call path compiles; then, for a compiled module that offers it, the path is the
    module's BoundEntry (see stencilchain/steps/cpp/module_entry.h), which checks the
    arguments in C (the entries of neighbour tables too, on the CPU), binds keyword
    arguments and explains a rejected call through the shared checker; a program with
    tables on the GPU, offset fields, a workspace or metrics takes a Python path.
    """

    __slots__ = ("_compiled", "_workspace", "program", "toolchain")

    _compiled: CompiledProgram | None
    _workspace: Any
    program: Program
    toolchain: Toolchain

    def __new__(cls, toolchain: Toolchain, program: Program) -> BoundProgram:
        self = super().__new__(cls, _not_bound)
        self.toolchain = toolchain
        self.program = program
        self._compiled = None
        self._workspace = None
        self._route(self._first_call)
        return self

    def _route(self, path: Callable[..., Any]) -> None:
        """Make `path` the call path (partial's state: function, no arguments, no keywords)."""
        _set_partial_state(self, (path, (), {}, None))

    def compile(self) -> CompiledProgram:
        """Compile now (e.g. to warm the cache) instead of on the first call."""
        if self._compiled is None:
            compiled = self.toolchain.compile(self.program)
            self._compiled = compiled
            self._route(self._call_path(compiled))
            tracing.register(self)
        return self._compiled

    def _reroute(self) -> None:
        """Take the call path for whether a trace is on now (tracing calls this)."""
        if self._compiled is not None:
            self._route(self._call_path(self._compiled))

    def workspace_size(self, /, *args: Any, **kwargs: Any) -> int:
        """The bytes of workspace a call with `args` needs (the arguments are checked as
        for a call). 0 unless the toolchain keeps the program's temporaries in a
        caller-provided workspace and the compiled program has some."""
        args = bind_arguments(self.program.ir, args, kwargs)
        checker = ArgumentChecker(self.program.ir, self.toolchain.device)
        plain = checker.unwrapped(args)
        if plain is not None:  # field values (sc.as_field): their arrays
            args = plain
        compiled = self.compile() if self.toolchain.external_workspace else None
        if compiled is None or not compiled.workspace:
            checker.check(args)
            return 0
        try:
            needed: int = compiled.entry(*args, None)
        except TypeError as err:
            self._explain(args, err)
        return needed

    def set_workspace(self, buffer: Any) -> None:
        """Use `buffer` for the program's temporaries in every later call: a writeable,
        contiguous 1-D uint8 array (numpy on the CPU, a GPU array such as cupy on the GPU)
        of at least `workspace_size(*args)` bytes, at an 8-byte boundary. The bound program
        keeps a reference to it; calls through one compiled program run one at a time
        while it takes a workspace (the compiled code holds the pointer)."""
        if not self.toolchain.external_workspace:
            raise WorkspaceError(
                f"{self.program.name}() on toolchain {self.toolchain.name!r}: the toolchain "
                "allocates the program's temporaries itself; set_workspace is for toolchains "
                "whose config has external_workspace on (a DaCe toolchain's setting)"
            )
        _check_workspace_buffer(self.program.name, buffer, self.toolchain.device)
        self._workspace = buffer
        if self._compiled is not None:
            self._route(self._call_path(self._compiled))

    def _call_path(self, compiled: CompiledProgram) -> Callable[..., Any]:
        """The call path, wrapped to record each call while a trace is on."""
        path = self._untraced_path(compiled)
        recording = tracing.active()
        if recording is None:
            return path
        return tracing.traced_call(path, recording, self.program.name, self.toolchain.name)

    def _untraced_path(self, compiled: CompiledProgram) -> Callable[..., Any]:
        entry = compiled.entry
        metrics = self.toolchain.config.metrics
        if not compiled.workspace and not metrics:
            bound = _bound_entry(compiled, self.program.ir)
            if bound is not None:
                return bound
        if compiled.workspace:
            workspace = self._workspace
            if workspace is None:
                entry = self._missing_workspace
            else:
                native = entry

                def entry(*args: Any) -> None:
                    native(*args, workspace)

        if metrics:
            entry = _timed(
                entry, self.toolchain.metrics.entry(self.toolchain.name, self.program.name)
            )
        return self._checked(entry)

    def _checked(self, entry: Callable[..., Any]) -> Callable[..., None]:
        """`entry` called with the arguments bound by name, a rejected call explained."""

        bind = ArgumentBinder(self.program.ir)

        def call(*args: Any, **kwargs: Any) -> None:
            if kwargs:  # by parameter name, as Python binds them
                args = bind(args, kwargs)
            try:
                entry(*args)
            except TypeError as err:
                self._explain(args, err, entry)

        return call

    def _missing_workspace(self, *args: Any) -> None:
        needed = self.workspace_size(*args)
        raise WorkspaceError(
            f"{self.program.name}() on toolchain {self.toolchain.name!r} keeps its temporaries "
            "in a workspace that the caller provides (external_workspace is on), and none was "
            f"set: call .set_workspace(numpy.empty({needed}, numpy.uint8)) first ({needed} "
            "bytes for these arguments; .workspace_size(*args) tells it for others)"
        )

    def _first_call(self, *args: Any, **kwargs: Any) -> None:
        if kwargs:  # by parameter name, as Python binds them
            args = bind_arguments(self.program.ir, args, kwargs)
        # check first, so that a bad call fails before paying for a compilation (fields
        # over their own ranges are checked by the specialisation that runs them)
        checker = ArgumentChecker(self.program.ir, self.toolchain.device)
        if checker.keys.of(args)[1] is None:
            checker.check(args)
        self.compile()
        self(*args)

    def _explain(
        self, args: tuple[Any, ...], err: TypeError, entry: Callable[..., Any] | None = None
    ) -> None:
        """Raise the ArgumentError of a rejected call, or (`entry` given) run it once more
        with the arrays of its field values, if it holds any."""
        if isinstance(err, ArgumentError):
            raise err
        checker = self.compile().checker
        if entry is None or not run_rejected(self.compile(), entry, args):
            explain_mismatch(checker, args, err)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.toolchain, self.program))

    def __repr__(self) -> str:
        return f"<BoundProgram {self.program.name} on toolchain {self.toolchain.name!r}>"


# partial's __setstate__ replaces its function (the call path); typeshed does not declare it
_set_partial_state: Callable[[functools.partial[None], tuple[Any, ...]], None] = vars(
    functools.partial
)["__setstate__"]


def _not_bound(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("a BoundProgram is routed when it is made")  # pragma: no cover


def _checks_tables(entry: Callable[..., Any]) -> bool:
    """Whether a compiled module's entry point checks the entries of neighbour tables itself
    (the CPU modules: stencilchain/steps/cpp/module_cpu_tables.h)."""
    module = getattr(entry, "__self__", None)
    return bool(getattr(module, "_sc_native_table_checks", False))


def _bound_entry(compiled: CompiledProgram, program: ir.Program) -> Callable[..., Any] | None:
    """The BoundEntry of a compiled module's entry point (a built-in function whose
    `__self__` is its module, which offers `_sc_bind`), bound to the program's hooks; None
    for an entry point that is not one (e.g. wrapped by the check of neighbour tables)."""
    binder = getattr(getattr(compiled.entry, "__self__", None), "_sc_bind", None)
    if binder is None:
        return None
    bound: Callable[..., Any] = binder(
        ArgumentBinder(program),
        functools.partial(_explain, compiled),
        FieldValue,
        native_field_values(compiled.checker),
    )
    return bound


def native_field_values(
    checker: ArgumentChecker,
) -> tuple[tuple[tuple[Dimension, ...], tuple[int, ...]] | None, ...]:
    """Per parameter, the dims and starts of the field values (`sc.as_field`) that the
    BoundEntry runs as their arrays without a Python frame (None for a scalar): those over
    the parameter's own dimensions starting where the program runs them."""
    return tuple(
        (p.type.dims, checker.starts(p.name, len(p.type.dims)))
        if isinstance(p, FieldParam)
        else None
        for p in checker.params
    )


def _explain(
    compiled: CompiledProgram, args: tuple[Any, ...], message: str
) -> bool | Callable[..., Any]:
    """Raise the shared checker's ArgumentError for the arguments the native check
    rejected with `message`, or one with that message when only the native check fails.
    A call holding field values (`sc.as_field`) or fields over their own ranges is run
    instead, and the BoundEntry told that it ran (module_entry.h): by the entry that ran it
    when that entry runs every later call of the same shapes (`_entry_for_shapes`), else
    by True."""
    if run_rejected(compiled, compiled.entry, args):
        return _entry_for_shapes(compiled, args) or True
    compiled.checker.check(args)
    raise ArgumentError(message)


def _entry_for_shapes(
    compiled: CompiledProgram, args: tuple[Any, ...]
) -> Callable[..., Any] | None:
    """The entry of the specialisation that ran `args` (fields over their own ranges), when
    every field of its range key starts at 0: the shapes of the arrays alone then give
    the key, so the BoundEntry calls that entry for every later call of arrays of these
    shapes (module_entry.h). None for a call of other starts or of one size per
    dimension. A specialisation whose calls' table reads are checked in Python
    (program/table_reads.py: the entries may change between calls) has that check in its
    entry, which then runs on every call."""
    _, key = compiled.checker.keys.of(args)
    if key is None or compiled.over_ranges is None:
        return None
    if any(start for axes in key for start, _ in axes):
        return None
    return compiled.over_ranges(key).entry


def _check_workspace_buffer(program: str, buffer: Any, device: Device) -> None:
    """What the compiled entry point checks on every call, said when the buffer is set."""
    where = f"{program}(): set_workspace"
    if device is Device.GPU:
        if not hasattr(buffer, "__cuda_array_interface__"):
            raise WorkspaceError(
                f"{where} needs a GPU array (e.g. cupy.empty(nbytes, cupy.uint8)), got "
                f"{type(buffer).__name__}"
            )
        return
    import numpy as np

    if not isinstance(buffer, np.ndarray):
        raise WorkspaceError(
            f"{where} needs a numpy array (e.g. numpy.empty(nbytes, numpy.uint8)), got "
            f"{type(buffer).__name__}"
        )
    problems = [
        (
            buffer.dtype != np.uint8,
            f"dtype {buffer.dtype}, not uint8 (pass buffer.view(numpy.uint8))",
        ),
        (buffer.ndim != 1, f"{buffer.ndim} dimensions, not 1"),
        (not buffer.flags.c_contiguous, "is not contiguous"),
        (not buffer.flags.writeable, "is read-only"),
        (buffer.ctypes.data % 8 != 0, "does not start at an 8-byte boundary"),
    ]
    for bad, what in problems:
        if bad:
            raise WorkspaceError(f"{where}: the buffer {what}")


def _timed(entry: Callable[..., Any], record: ProgramMetrics) -> Callable[..., Any]:
    def call(*args: Any) -> None:
        start = time.perf_counter()
        entry(*args)
        record.call_time += time.perf_counter() - start
        record.call_count += 1

    return call
