"""DaCe compilation: DaCeExtensionSource -> CompiledArtifact.

One folder of the build cache per program, keyed by the entry point, the source
fingerprint (shim, bindings and SDFG) and the build context (DaCe's installation, the
build type, the compiler flags, the compilers' identities, the package version). DaCe's
own build-folder naming (its `cache` setting) is not used: its hash mode is not stable
across processes. The folder holds

    dace/                    DaCe's program folder: generated code, CMake build, library
    src/                     the shim with its adapter, and the GTFN bindings unit
    <module>.so              the Python extension (GTFN's bindings + shim + adapter)
    build.log                every command run and its output

Three compilers run side by side on two cores: the bindings unit (from the start, it
does not depend on DaCe), DaCe's CMake build of the SDFG (`native_build`), and the shim,
whose adapter is written from the exported functions DaCe generated (their exact C
parameters). Only DaCe's code generation and the reading of its configuration hold the
DaCe lock (DaCe is not thread-safe); the processes of two builds may run at once. The
module `dlopen`s the DaCe library beside it as it is loaded (see
`stencilchain.steps.dace.shim`). A complete folder is loaded without importing DaCe.

The bindings and the shim read their system headers precompiled (`build.precompiled`,
once per build context); the SDFG's library and the module link with gold where the
compiler has it (`build.linker`); DaCe's stub library is not built (see ADR 0009).

`compile_many` hands the compiler batches of CPU programs (`build_batch`): a `batch-<key>`
support folder holds each member's generated code and extension sources
(`<entry point>/dace`, `<entry point>/src`), ONE DaCe program folder (`dace/`) whose
single unit includes every member's code (`batch_unit`), built into one library, and
one extension library of every member's module, from one unit of all their bindings and
one of all their shims (`steps.cpp.shared_unit`); each member then gets its own entry
(links of the two libraries). The single and the batch builds share the extension's
commands and DaCe's settings, hence one module of more than a few hundred lines (ADR
0058, 0063).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path

from stencilchain.errors import StencilchainError
from stencilchain.program.device import Device
from stencilchain.steps.build import tools as build_tools
from stencilchain.steps.build.batch import batch_key, batch_members, publish_member
from stencilchain.steps.build.compiler_step import CompilerStep
from stencilchain.steps.build.linker import fast_linker_flags
from stencilchain.steps.build.plan import BuildPlan, plan_build
from stencilchain.steps.build.precompiled import prelude_options
from stencilchain.steps.build.runner import BuildRunner, JobQueue
from stencilchain.steps.build.validation import (
    check_compiler,
    check_flags,
    check_positive,
    check_program,
    check_word,
)
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.checks import require_type
from stencilchain.steps.cpp.shared_unit import Part, shared_unit
from stencilchain.steps.dace import batch_unit, native_build
from stencilchain.steps.dace.bindings import SHIM_LIBRARY_DEP, DaCeExtensionSource
from stencilchain.steps.dace.build_settings import dace_settings
from stencilchain.steps.dace.code_generation import (
    SERIAL_REGIONS_LINK_FLAGS,
    GeneratedProgram,
    GenerationError,
    generate_program,
)
from stencilchain.steps.dace.extra import require_dace
from stencilchain.steps.dace.family import DACE
from stencilchain.steps.dace.lock import DACE_LOCK
from stencilchain.steps.dace.shim import adapter_source
from stencilchain.steps.settings import BuildType
from stencilchain.steps.stages import CompiledArtifact, ExtensionSource

_log = logging.getLogger(__name__)

__all__ = ["DEFAULT_CPU_ARGS", "DaCeBuildPlan", "DaCeCompiler"]

# DaCe's default CPU flags without the ones that change results (-fno-signed-zeros,
# -freciprocal-math: the SDFG must compute what NumPy computes) and with -ffp-contract=off
# (`a * b + c` rounded twice, as NumPy does, also where the CPU has fused multiply-adds);
# -march=native is added by `native_cpu`, which puts the CPU's identity in the build key.
# -fwrapv as in GTFN. -fno-trapping-math changes no value
# (only whether a comparison may raise an FP exception flag) and lets GCC turn the `? :`
# of a `where` into a vector select instead of refusing the loop ("control flow in loop").
# -fno-predictive-commoning as in GTFN: GCC 12.2 at -O3 can drop the rounding of
# `(double)(float)x` in a loop that predictive commoning unrolled (ADR 0041).
# --param=vect-max-version-for-alias-checks=64: a map's loops run in the function GCC
# outlines for its OpenMP region, where the arrays' __restrict__ is lost, so a loop is
# vectorized only behind a run-time test per pair of written and read references; GCC's
# default gives up beyond 10 (hdiff recomputed reads its input at 14 offsets; ADR 0053).
DEFAULT_CPU_ARGS: tuple[str, ...] = (
    "-fwrapv",
    "-fno-math-errno",
    "-fno-trapping-math",
    "-ffp-contract=off",
    "-fno-predictive-commoning",
    "--param=vect-max-version-for-alias-checks=64",
    "-Wall",
    "-Wno-unused-parameter",
    "-Wno-unused-label",
    "-Wno-unused-variable",
    "-Wno-unused-but-set-variable",
)
_DACE_FOLDER = "dace"
# Flags of the extension's two units per build type: (shim and adapter, bindings). The
# bindings are glue: -O1 compiles faster for a call path a few nanoseconds slower (as GTFN).
_EXTENSION_FLAGS: dict[BuildType, tuple[tuple[str, ...], tuple[str, ...]]] = {
    BuildType.DEBUG: (("-O0", "-g"), ("-O0", "-g")),
    BuildType.RELEASE: (("-O2", "-DNDEBUG"), ("-O1", "-DNDEBUG")),
    BuildType.RELWITHDEBINFO: (("-O2", "-g", "-DNDEBUG"), ("-O1", "-g", "-DNDEBUG")),
    BuildType.MINSIZEREL: (("-Os", "-DNDEBUG"), ("-Os", "-DNDEBUG")),
}


@dataclasses.dataclass(frozen=True)
class DaCeCompiler(CompilerStep):
    """DaCeExtensionSource -> CompiledArtifact: the SDFG built by DaCe, the extension by `cxx`.

    `cpu_args` are DaCe's `compiler.cpu.args` (replacing DaCe's default, see
    DEFAULT_CPU_ARGS); `cuda_args` and `cuda_architectures` its `compiler.cuda.args` and
    `cuda_arch` (GPU only; None lets DaCe detect). `cxx` compiles both the SDFG and the
    extension; `build_jobs` bounds DaCe's parallel build (None: DaCe's default).
    `precompiled_headers` precompiles the system headers of the extension's units once
    per build context (the objects are the same without; see build.precompiled).
    `native_cpu` compiles the SDFG for the building host's CPU (-march=native); the build
    key then holds the CPU's identity (`host_cpu_identity`), as GTFN's does.
    """

    BUILT_FILES = ("module", "dace_library")

    device: Device
    build_type: BuildType
    cache: BuildCache
    cpu_args: tuple[str, ...] = DEFAULT_CPU_ARGS
    cuda_args: tuple[str, ...] = ("-lineinfo",)
    cuda_architectures: str | None = None
    cxx: str = "c++"
    build_jobs: int | None = None
    precompiled_headers: bool = True
    native_cpu: bool = True
    environment: build_tools.BuildEnvironment | None = dataclasses.field(
        default=None, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        require_dace("DaCeCompiler")
        check_compiler(self)
        check_flags(self, "cpu_args")
        check_flags(self, "cuda_args")
        check_word(self, "cuda_architectures", "DaCe's CUDA architectures such as '80'")
        check_program(self, "cxx", "C++ compiler")
        check_positive(self, "build_jobs")
        require_type(self, "precompiled_headers", bool)
        require_type(self, "native_cpu", bool)

    UNKEYED_SETTINGS = ("build_jobs",)

    def load_context(self) -> str:
        """See CompilerStep: the tools of `plan`, without importing DaCe."""
        tools = build_tools.find_tools(
            self.cxx, None, ("cmake", "ninja", "dace"), build_tools.search_path(self.environment)
        )
        return self.indexed_context(tools, native_cpu=self._native_cpu())

    def plan(self, source: ExtensionSource) -> DaCeBuildPlan:
        """Everything a build of `source` needs, with its cache key; builds nothing and
        does not import DaCe."""
        if not isinstance(source, DaCeExtensionSource):
            raise TypeError(
                "DaCeCompiler takes the DaCeExtensionSource of DaCeBindings, got "
                f"{type(source).__name__}"
            )
        shim, sdfg = source.program_source, source.sdfg_source
        entry = shim.entry_point
        for what, stage in (("shim", shim), ("SDFG", sdfg)):
            if stage.device is not self.device:
                raise ValueError(
                    f"DaCeCompiler for {self.device} cannot build {entry!r}: its {what} is "
                    f"for {stage.device}"
                )
        if shim.language != "cpp" or shim.library_deps != (SHIM_LIBRARY_DEP,):
            raise ValueError(f"the program source of {entry!r} is not a DaCeBindings shim")
        if sdfg.language != "sdfg":
            raise ValueError(f"the SDFG source of {entry!r} is in {sdfg.language!r}, not 'sdfg'")
        # DaCe's build runs the cmake and ninja of their Python packages (see native_build)
        tools = build_tools.find_tools(
            self.cxx, None, ("cmake", "ninja", "dace"), build_tools.search_path(self.environment)
        )
        gpu = self.device is Device.GPU
        context = {
            "format": "stencilchain-dace/1",
            "cpu_args": self.cpu_args,
            "cuda_args": self.cuda_args if gpu else None,
            "cuda_architectures": self.cuda_architectures if gpu else None,
            "extension_flags": _EXTENSION_FLAGS[self.build_type],
            "cpu": build_tools.host_cpu_identity() if self._native_cpu() else None,
        }
        return plan_build(self, source, tools, family=DACE.name, key_tag="dace", context=context)

    def _build(self, plan: DaCeBuildPlan, folder: Path) -> dict[str, str]:
        return _build_program(plan, folder)

    def build_batch(self, sources: Sequence[ExtensionSource], /) -> list[CompiledArtifact | None]:
        """Build the CPU programs of `sources` together: DaCe's code of them all as ONE
        unit of one library (batch_unit), each extension module from its own units; each
        program then put into its own build-cache entry. For each source, the artifact of
        its entry if this batch built it; left to the caller (None): a source whose plan
        fails, that is complete already, for the GPU, whose entry point another of the
        batch has, or whose code failed to generate or compile in the batch. See
        stencilchain.steps.build.batch and docs/adr/0058-dace-batch-units.md."""
        built: list[CompiledArtifact | None] = [None] * len(sources)
        if self.device is not Device.CPU:
            return built
        members = batch_members(sources, self.plan, self.cache)
        if len(members) < 2:
            return built
        plans = list(members.values())
        try:
            batch = self.cache.get_or_build(
                batch_key(plans), functools.partial(_build_batch, plans)
            )
        except StencilchainError as error:  # each program is then built alone
            _log.info("the batch build of %d programs failed: %s", len(plans), error)
            return built
        in_batch: dict[str, dict[str, str]] = json.loads(batch.metadata["members"])
        library = batch.metadata["dace_library"]
        for index, plan in members.items():
            member = in_batch.get(plan.entry_point)
            if member is None:
                continue
            folder = batch.folder / plan.entry_point
            module = member.pop("module")
            files = {
                "module": (batch.folder / member.pop("built_module"), module),
                "dace_library": (batch.folder / library, library),
            }
            texts = {
                "src/shim.cpp": (folder / "src" / "shim.cpp").read_text(),
                "src/bindings.cpp": plan.source.binding_source.source_code,
            }
            details = {
                **member,
                "batch": batch.folder.name,
                "batch_programs": str(len(in_batch)),
                "batch_shared_units": batch.metadata.get("shared_units", "no"),
                "codegen_seconds": batch.metadata["codegen_seconds"],
                "dace_compile_seconds": batch.metadata["dace_compile_seconds"],
            }
            try:
                artifact = publish_member(
                    plan, files, texts, batch.folder, details, built_files=self.BUILT_FILES
                )
            except (OSError, StencilchainError) as error:
                _log.info("%r, built in a batch, was not cached: %s", plan.entry_point, error)
                continue
            built[index] = artifact
        return built

    def _native_cpu(self) -> bool:
        return self.native_cpu and self.device is Device.CPU

    def _cpu_args(self) -> tuple[str, ...]:
        """DaCe's `compiler.cpu.args`: `cpu_args`, and -march=native with `native_cpu`."""
        return (*self.cpu_args, "-march=native") if self._native_cpu() else self.cpu_args

    def prepare(self) -> None:
        """The one-time set-up of this process's builds, done before builds run side by
        side: find the tools, import DaCe's code generator (under the DaCe lock)."""
        build_tools.find_tools(
            self.cxx, None, ("cmake", "ninja", "dace"), build_tools.search_path(self.environment)
        )
        build_tools.package_programs()
        build_tools.python_build_info()
        with DACE_LOCK:  # DaCe's first import reads its configuration; it costs seconds
            import dace.codegen.codegen
            import dace.codegen.command_db
            import dace.codegen.compiler  # noqa: F401

    def with_build_jobs(self, jobs: int) -> DaCeCompiler:
        """This compiler with DaCe's parallel build bounded by `jobs` (at most its own
        `build_jobs`): the number of jobs changes no output, nor the cache key."""
        own = self.build_jobs
        return dataclasses.replace(self, build_jobs=jobs if own is None else min(own, jobs))


DaCeBuildPlan = BuildPlan[DaCeCompiler, DaCeExtensionSource]


def _build_program(plan: DaCeBuildPlan, folder: Path) -> dict[str, str]:
    """Build `plan` in the empty `folder`; the marker's metadata."""
    compiler, source, entry = plan.compiler, plan.source, plan.entry_point
    start = time.perf_counter()
    src = folder / "src"
    src.mkdir()
    shim_flags, bindings_flags = _EXTENSION_FLAGS[compiler.build_type]
    openmp = ("-fopenmp",) if compiler.device is Device.CPU else ()
    (src / "bindings.cpp").write_text(source.binding_source.source_code)
    cmake, ninja = build_tools.package_programs()
    env = build_tools.build_environment(
        compiler.environment, path_first=[os.path.dirname(cmake), os.path.dirname(ninja)]
    )
    with BuildRunner(folder, env) as runner:
        runner.start(
            _compile_command(plan, src / "bindings.cpp", bindings_flags),
            f"compiling the bindings of {entry!r}",
        )
        with DACE_LOCK, _settings(plan):
            try:
                generated = generate_program(source.sdfg_source, folder / _DACE_FOLDER)
            except GenerationError as error:  # DaCe's code is not what the shim can call
                raise runner.logged_error(str(error)) from error
            except Exception as error:
                summary = f"DaCe could not generate the code of the SDFG of {entry!r}"
                raise runner.logged_error(summary, _described(error)) from error
            codegen_done = time.perf_counter()
            native = _prepare(generated.program_folder, generated.sdfg_name, runner)
        library = os.path.relpath(native.library, folder)
        try:
            adapter = adapter_source(
                program=source.program_source.program,
                sdfg_name=generated.sdfg_name,
                library=library,
                program_args=generated.program_args,
                init_args=generated.init_args,
                init_reads_symbols=generated.init_reads_symbols,
                gpu=compiler.device is Device.GPU,
                workspace_storage=generated.workspace_storage,
            )
        except ValueError as error:  # the SDFG takes what the shim cannot give
            raise runner.logged_error(str(error)) from error
        (src / "shim.cpp").write_text(source.program_source.source_code + adapter)
        runner.start(
            _compile_command(plan, src / "shim.cpp", (*shim_flags, *openmp)),
            f"compiling the shim of {entry!r}",
        )
        native_build.build(native, runner, ninja)
        dace_done = time.perf_counter()
        runner.wait_all()
        module = f"{plan.module_name}{build_tools.python_build_info()['ext_suffix']}"
        objects = [str(src / "bindings.o"), str(src / "shim.o")]
        linker = fast_linker_flags(plan.tools.cxx, compiler.environment)
        link = [plan.tools.cxx, *linker, "-shared", "-pthread"]
        link += [*openmp, *objects]
        runner.run([*link, "-o", str(folder / module), "-ldl"], f"linking the module of {entry!r}")
    return plan.marker(
        module,
        {
            "sdfg_name": generated.sdfg_name,
            "dace_library": library,
            "init": "per-symbols" if generated.init_reads_symbols else "once",
            "workspace": generated.workspace_storage or "",
            "codegen_seconds": f"{codegen_done - start:.3f}",
            "dace_compile_seconds": f"{dace_done - codegen_done:.3f}",
            "total_seconds": f"{time.perf_counter() - start:.3f}",
        },
    )


@dataclasses.dataclass(frozen=True)
class _Member:
    """A program of a batch whose code DaCe generated: its plan, code and unit files."""

    plan: DaCeBuildPlan
    generated: GeneratedProgram
    files: tuple[Path, ...]


def _build_batch(plans: Sequence[DaCeBuildPlan], folder: Path) -> dict[str, str]:
    """Build the programs of `plans` in the empty `folder`: each one's DaCe code generated
    into `<entry point>/dace`, all of it compiled as one unit into the library of
    `dace` (batch_unit); the bindings of all as one unit and the shims of all as another
    (`steps.cpp.shared_unit`, program k in `namespace sc_member_<k>`), linked into ONE
    extension library that exports each program's `PyInit_<module>` (`<batch>.so`, the
    module of every member's entry). If a shared unit fails to compile, each program's
    module is built from units of its own instead (in `<entry point>`), which names the
    one that fails. A program whose code cannot be generated or batched, or whose module
    fails to build, is left out (its own build reports it); the batch fails if DaCe's
    library does. The batch marker's metadata: the library, the members (entry point ->
    module and the details of its marker, JSON) and each member's share of the batch's
    times."""
    start = time.perf_counter()
    compiler = plans[0].compiler
    name = "sc_" + folder.name.replace("-", "_")
    jobs = compiler.build_jobs or os.cpu_count() or 1
    cmake, ninja = build_tools.package_programs()
    env = build_tools.build_environment(
        compiler.environment, path_first=[os.path.dirname(cmake), os.path.dirname(ninja)]
    )
    members: dict[str, _Member] = {}
    with BuildRunner(folder, env) as runner:
        queue = JobQueue(runner, jobs)  # the extension's compiles, tagged
        # the bindings of all, compiled beside the code generation (again if one is left out)
        bindings = _submit_shared(queue, plans, range(len(plans)), folder, "bindings")
        for plan in plans:
            entry = plan.entry_point
            with DACE_LOCK, _settings(plan):
                try:
                    generated = generate_program(
                        plan.source.sdfg_source, folder / entry / _DACE_FOLDER, serial_regions=False
                    )
                    files = tuple(batch_unit.cpu_files(generated.program_folder))
                except Exception as error:  # its own build reports it
                    runner.note(f"{entry!r} is left out of the batch: {_described(error)}")
                    continue
            if any(m.generated.sdfg_name == generated.sdfg_name for m in members.values()):
                runner.note(f"{entry!r} is left out: its SDFG's name is another program's")
                continue
            src = folder / entry / "src"
            src.mkdir()
            (src / "bindings.cpp").write_text(plan.source.binding_source.source_code)
            members[entry] = _Member(plan, generated, files)
            queue.poll()
        if not members:
            raise runner.logged_error(f"DaCe generated the code of no program of {folder}")
        batch_unit.write_program_folder(
            folder / _DACE_FOLDER, name, [m.files for m in members.values()], serial_regions=True
        )
        with DACE_LOCK, _settings(plans[0]):
            native = _prepare(folder / _DACE_FOLDER, name, runner)
        codegen_done = time.perf_counter()
        library = os.path.relpath(native.library, folder)
        for entry, member in list(members.items()):
            generated = member.generated
            try:
                adapter = adapter_source(
                    program=member.plan.source.program_source.program,
                    sdfg_name=generated.sdfg_name,
                    library=library,  # the same path in the program's own entry
                    program_args=generated.program_args,
                    init_args=generated.init_args,
                    init_reads_symbols=generated.init_reads_symbols,
                    gpu=False,
                    workspace_storage=generated.workspace_storage,
                )
            except ValueError as error:  # its own build reports it
                runner.note(f"{entry!r} is left out of the batch: {error}")
                del members[entry]
                continue
            shim = folder / entry / "src" / "shim.cpp"
            shim.write_text(member.plan.source.program_source.source_code + adapter)
        if not members:
            raise runner.logged_error(f"DaCe's code of no program of {folder} can be called")
        numbers = [k for k, plan in enumerate(plans) if plan.entry_point in members]
        if len(numbers) != len(plans):  # without the programs left out
            bindings = _submit_shared(queue, plans, numbers, folder, "bindings_of_some")
        shims = _submit_shared(queue, plans, numbers, folder, "shims")
        native_build.build(native, runner, ninja)
        dace_done = time.perf_counter()
        queue.drain()
        shared = not {bindings.name, shims.name} & queue.failed
        if not shared:  # which program's unit fails is known only from units of their own
            runner.note("building each program's module from units of its own")
            for entry, member in members.items():
                src = folder / entry / "src"
                shim_flags, bindings_flags = _EXTENSION_FLAGS[compiler.build_type]
                for unit, flags in (
                    ("bindings", bindings_flags),
                    ("shim", (*shim_flags, "-fopenmp")),
                ):
                    command = _compile_command(member.plan, src / f"{unit}.cpp", flags)
                    queue.submit(command, f"compiling the {unit} of {entry!r}", entry)
            queue.drain()
        linker = fast_linker_flags(plans[0].tools.cxx, compiler.environment)
        link = [plans[0].tools.cxx, *linker, "-shared", "-pthread", "-fopenmp"]
        suffix = build_tools.python_build_info()["ext_suffix"]
        shared_module = f"{name}{suffix}"
        if shared:
            objects = [str(unit.with_suffix(".o")) for unit in (bindings, shims)]
            command = [*link, *objects, "-o", str(folder / shared_module), "-ldl"]
            runner.run(command, f"linking the modules of {len(members)} programs")
        details: dict[str, dict[str, str]] = {}
        for entry, member in members.items():
            src = folder / entry / "src"
            module = f"{member.plan.module_name}{suffix}"
            if not shared:
                command = [*link, str(src / "bindings.o"), str(src / "shim.o")]
                command += ["-o", str(folder / entry / module), "-ldl"]
                if entry in queue.failed or not runner.run(
                    command, f"linking the module of {entry!r}", check=False
                ):
                    continue
            generated = member.generated
            details[entry] = {
                "module": module,
                "built_module": shared_module if shared else f"{entry}/{module}",
                "sdfg_name": generated.sdfg_name,
                "init": "per-symbols" if generated.init_reads_symbols else "once",
                "workspace": generated.workspace_storage or "",
            }
    share = len(details) or 1
    return {
        "family": DACE.name,
        "dace_library": library,
        "shared_units": "yes" if shared else "no",
        "members": json.dumps(details, sort_keys=True),
        # each program's share of the batch's times
        "codegen_seconds": f"{(codegen_done - start) / share:.3f}",
        "dace_compile_seconds": f"{(dace_done - codegen_done) / share:.3f}",
        "total_seconds": f"{(time.perf_counter() - start) / share:.3f}",
    }


def _submit_shared(
    queue: JobQueue,
    plans: Sequence[DaCeBuildPlan],
    numbers: Sequence[int],
    folder: Path,
    what: str,
) -> Path:
    """Write the shared unit `shared_<what>.cpp` of the bindings (or, for "shims", the
    shims, from `<entry>/src/shim.cpp`) of the programs `numbers` (indices into `plans`,
    program k in `sc_member_<k>`) and submit its compile, at the flags of that unit of a
    program of its own, tagged by the unit's file name; that file."""
    chosen = [plans[k] for k in numbers]
    bindings = what != "shims"
    parts = [
        Part(
            plan.source.binding_source.source_code
            if bindings
            else (folder / plan.entry_point / "src" / "shim.cpp").read_text(),
            {"STENCILCHAIN_MODULE_NAME": plan.module_name} if bindings else {},
        )
        for plan in chosen
    ]
    title = "programs' bindings" if bindings else "programs' DaCe shims"
    unit = folder / f"shared_{what}.cpp"
    unit.write_text(shared_unit(parts, title=title, numbers=numbers))
    shim_flags, bindings_flags = _EXTENSION_FLAGS[plans[0].compiler.build_type]
    flags = bindings_flags if bindings else (*shim_flags, "-fopenmp")
    command = _compile_command(plans[0], unit, flags, own_module=False)
    queue.submit(command, f"compiling the {title} of {len(chosen)} programs", unit.name)
    return unit


def _settings(plan: DaCeBuildPlan) -> contextlib.AbstractContextManager[None]:
    """DaCe's configuration of `plan`'s build (see build_settings)."""
    compiler = plan.compiler
    return dace_settings(
        device=compiler.device,
        build_type=compiler.build_type,
        cxx=plan.tools.cxx,
        cpu_args=compiler._cpu_args(),
        cuda_args=compiler.cuda_args,
        cuda_architectures=compiler.cuda_architectures,
        build_jobs=compiler.build_jobs,
        # DaCe links a GPU library with nvcc, which takes no -fuse-ld; a CPU library's
        # one-thread OpenMP regions are plain calls (steps/dace/serial_regions.cpp)
        linker_args=(
            (*fast_linker_flags(plan.tools.cxx, compiler.environment), *SERIAL_REGIONS_LINK_FLAGS)
            if compiler.device is Device.CPU
            else ()
        ),
    )


def _prepare(program_folder: Path, sdfg_name: str, runner: BuildRunner) -> native_build.NativeBuild:
    """DaCe's build of the generated code, planned (CompilationError if DaCe cannot)."""
    try:
        return native_build.prepare(program_folder, sdfg_name)
    except Exception as error:  # DaCe's configuration of its targets failed
        summary = f"DaCe could not set up the build of the SDFG {sdfg_name!r}"
        raise runner.logged_error(summary, _described(error)) from error


def _described(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"


def _compile_command(
    plan: DaCeBuildPlan, unit: Path, flags: Sequence[str], *, own_module: bool = True
) -> list[str]:
    """The command compiling the extension's `unit` (written already) with `flags`, its
    system headers precompiled (see stencilchain.steps.build.precompiled), for `plan`'s
    module (`own_module`; False: the unit defines the names of its modules itself)."""
    include = build_tools.python_build_info()["python_include"]
    compiler = plan.compiler
    options = [
        plan.tools.cxx,
        "-std=c++17",
        "-fPIC",
        "-fvisibility=hidden",
        "-fwrapv",
        "-pthread",
        *flags,
        "-isystem",
        include,
    ]
    prelude = (
        prelude_options(
            compiler.cache,
            options,
            unit.read_text(),
            tools_identity=plan.tools.identity,
            family=DACE.name,
            environment=compiler.environment,
        )
        if compiler.precompiled_headers
        else []
    )
    return [
        *options,
        *([f"-DSTENCILCHAIN_MODULE_NAME={plan.module_name}"] if own_module else []),
        *prelude,
        "-c",
        str(unit),
        "-o",
        str(unit.with_suffix(".o")),
    ]
