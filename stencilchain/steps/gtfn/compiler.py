"""GTFN compilation: ExtensionSource -> CompiledArtifact, built with CMake and Ninja.

The program and its bindings are two translation units of one Python extension module,
built in a folder of the build cache keyed by the entry point, the source fingerprint
and the build context (build type, flags, compiler identity, tool and package versions).
A complete folder is loaded without running CMake. The CMake project (and what makes a
new build fast) is `stencilchain.steps.gtfn.cmake_project`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from stencilchain.errors import StencilchainError
from stencilchain.program.device import Device
from stencilchain.steps.build.batch import batch_key, batch_members, publish_member
from stencilchain.steps.build.compiler_step import CompilerStep
from stencilchain.steps.build.plan import BuildPlan, plan_build
from stencilchain.steps.build.tools import (
    BuildEnvironment,
    Tools,
    find_tools,
    host_cpu_identity,
    python_build_info,
    search_path,
)
from stencilchain.steps.build.validation import (
    check_compiler,
    check_flags,
    check_positive,
    check_program,
    check_word,
)
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.checks import require_type
from stencilchain.steps.cpp.extension_module import is_run_declaration
from stencilchain.steps.cpp.shared_unit import Part, shared_unit
from stencilchain.steps.cpp.signature import ProgramSignature
from stencilchain.steps.gtfn.cmake_project import (
    SHARED_TARGET,
    BatchMember,
    CMakeProject,
    SharedBindings,
    Unit,
    build_batch_project,
    build_project,
    precompiled_header,
    precompiled_prelude,
    toolchain_folder,
)
from stencilchain.steps.gtfn.family import GTFN
from stencilchain.steps.settings import BuildType
from stencilchain.steps.stages import CompiledArtifact, ExtensionSource

_log = logging.getLogger(__name__)

_EXTENSIONS = {"cpp": "cpp", "cuda": "cu"}
_KNOWN_LIBRARIES = ("pybind11",)
SHARED_BINDINGS_FILE = "sc_shared_bindings.cpp"


@dataclasses.dataclass(frozen=True)
class CMakeCompiler(CompilerStep):
    """ExtensionSource -> CompiledArtifact: a Python extension built with CMake + Ninja.

    `extra_flags` go to every C++ unit, `cuda_flags` to every CUDA unit; `openmp` links
    OpenMP on the CPU. `bindings_optimization` replaces the build type's optimization in
    the bindings unit (None keeps it; Debug builds keep it always). `cxx` and `nvcc` are
    the compilers (names looked up on PATH once per process, or paths); `jobs` bounds
    Ninja's parallel jobs (None: Ninja's default). `native_cpu` compiles the program unit
    for the building host's CPU (-march=native: AVX2 or AVX-512 loops where it has them);
    the build key then holds the host CPU's identity (`host_cpu_identity`), so a build
    cache shared by hosts with other CPUs keeps one build per CPU.
    """

    device: Device
    build_type: BuildType
    cache: BuildCache
    extra_flags: tuple[str, ...] = ()
    openmp: bool = True
    bindings_optimization: str | None = "-O1"
    precompiled_headers: bool = True
    cuda_architectures: str | None = None
    cuda_flags: tuple[str, ...] = ()
    cxx: str = "c++"
    nvcc: str = "nvcc"
    jobs: int | None = None
    native_cpu: bool = True
    environment: BuildEnvironment | None = dataclasses.field(
        default=None, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        check_compiler(self)
        check_flags(self, "extra_flags")
        require_type(self, "openmp", bool)
        check_word(self, "bindings_optimization", "a flag such as '-O1'")
        require_type(self, "precompiled_headers", bool)
        check_word(self, "cuda_architectures", "CMake's CUDA architectures such as '80'")
        check_flags(self, "cuda_flags")
        check_program(self, "cxx", "C++ compiler")
        check_program(self, "nvcc", "CUDA compiler")
        check_positive(self, "jobs")
        require_type(self, "native_cpu", bool)

    UNKEYED_SETTINGS = ("jobs",)

    def load_context(self) -> str:
        """See CompilerStep: every tool a build of this step may run (nvcc on the GPU)."""
        nvcc = self.nvcc if self.device is Device.GPU else None
        tools = find_tools(self.cxx, nvcc, ("cmake", "ninja"), search_path(self.environment))
        return self.indexed_context(tools, native_cpu=self._native_cpu())

    def plan(self, source: ExtensionSource) -> CMakeBuildPlan:
        """Everything a build of `source` needs, with its cache key; builds nothing."""
        if not isinstance(source, ExtensionSource):
            raise TypeError(f"CMakeCompiler takes an ExtensionSource, got {type(source).__name__}")
        program, binding = source.program_source, source.binding_source
        entry = program.entry_point
        if program.device is not self.device:
            raise ValueError(
                f"CMakeCompiler for {self.device} cannot build {entry!r}, generated for {program.device}"
            )
        allowed = ("cpp",) if self.device is Device.CPU else ("cpp", "cuda")
        for what, language in (("program", program.language), ("bindings", binding.language)):
            if language not in allowed:
                raise ValueError(
                    f"the {what} source of {entry!r} is in {language!r}; CMakeCompiler for "
                    f"{self.device} builds {' or '.join(map(repr, allowed))}"
                )
        for library in _libraries(source):
            if library not in _KNOWN_LIBRARIES:
                raise ValueError(
                    f"{entry!r} needs the library {library!r}, which CMakeCompiler does not "
                    f"provide (it knows {', '.join(_KNOWN_LIBRARIES)})"
                )
        nvcc = self.nvcc if _uses_cuda(source) else None
        tools = find_tools(self.cxx, nvcc, ("cmake", "ninja"), search_path(self.environment))
        context = {
            "format": "stencilchain-cmake/1",
            "extra_flags": self.extra_flags,
            "openmp": self._openmp(),
            "bindings_optimization": self._bindings_optimization(),
            "cuda_architectures": self.cuda_architectures,
            "cuda_flags": self.cuda_flags,
            "libraries": _libraries(source),
            "cpu": host_cpu_identity() if self._native_cpu() else None,
        }
        return plan_build(self, source, tools, family=GTFN.name, key_tag=None, context=context)

    def _build(self, plan: CMakeBuildPlan, folder: Path) -> dict[str, str]:
        return _build_extension(plan, folder)

    def build_batch(self, sources: Sequence[ExtensionSource], /) -> list[CompiledArtifact | None]:
        """Build `sources` as one CMake project (one configure, one Ninja run, one link of
        a library holding every module, their bindings one unit: docs/adr/0063), each
        program then put into its own build-cache
        entry; for each source, the artifact of its entry if this batch built it. Left to
        the caller (None): a source whose plan fails, that is complete already, that needs
        CUDA or a library, whose entry point another of the batch has, or that failed to
        compile (the batch then links the others). See stencilchain.steps.build.batch."""
        built: list[CompiledArtifact | None] = [None] * len(sources)
        members = batch_members(
            sources,
            self.plan,
            self.cache,
            alone=lambda source: (
                self.device is not Device.CPU or _uses_cuda(source) or bool(_libraries(source))
            ),
        )
        if len(members) < 2:
            return built
        plans = list(members.values())
        project = self._project(plans[0].tools, False, (), plans[0].context_digest)
        try:
            batch = self.cache.get_or_build(
                batch_key(plans), functools.partial(_build_batch, project, plans)
            )
        except StencilchainError as error:  # each program is then built alone
            _log.info("the batch build of %d programs failed: %s", len(plans), error)
            return built
        in_batch = set(json.loads(batch.metadata["members"]))
        library = batch.folder / batch.metadata["module"]
        preludes = json.loads(batch.metadata["preludes"])
        for index, plan in members.items():
            if plan.module_name not in in_batch:
                continue
            source = plan.source
            module = f"build/{plan.module_name}{python_build_info()['ext_suffix']}"
            texts = {
                f"src/{plan.entry_point}.cpp": source.program_source.source_code,
                f"src/{plan.entry_point}_bindings.cpp": source.binding_source.source_code,
            }
            details = {
                "batch": batch.folder.name,
                "batch_programs": str(len(in_batch)),
                "configure_seconds": batch.metadata["configure_seconds"],
                "compile_seconds": batch.metadata["compile_seconds"],
                "precompiled_header": "no",
                "precompiled_preludes": preludes.get(plan.module_name, ""),
            }
            try:
                artifact = publish_member(
                    plan, {"module": (library, module)}, texts, batch.folder, details
                )
            except (OSError, StencilchainError) as error:
                _log.info("%r, built in a batch, was not cached: %s", plan.entry_point, error)
                continue
            built[index] = artifact
        return built

    def prepare(self) -> None:
        """The one-time set-up of this process's builds, done before builds run side by
        side: find the tools, and make the toolchain folder every build starts from."""
        cuda = self.device is Device.GPU
        nvcc = self.nvcc if cuda else None
        tools = find_tools(self.cxx, nvcc, ("cmake", "ninja"), search_path(self.environment))
        python_build_info()
        toolchain_folder(self._project(tools, cuda, (), ""), self.cache)

    def with_build_jobs(self, jobs: int) -> CMakeCompiler:
        """This compiler with Ninja's parallel jobs bounded by `jobs` (at most its own
        `jobs`): the number of jobs changes no output, nor the cache key."""
        return dataclasses.replace(self, jobs=jobs if self.jobs is None else min(self.jobs, jobs))

    def _project(
        self, tools: Tools, cuda: bool, libraries: tuple[str, ...], context_digest: str
    ) -> CMakeProject:
        return CMakeProject(
            tools=tools,
            build_type=self.build_type,
            languages=("CXX", "CUDA") if cuda else ("CXX",),
            openmp=self._openmp(),
            libraries=libraries,
            extra_flags=self.extra_flags,
            cuda_flags=self.cuda_flags,
            bindings_optimization=self._bindings_optimization(),
            cuda_architectures=self.cuda_architectures,
            jobs=self.jobs,
            context_digest=context_digest,
            native_cpu=self._native_cpu(),
            environment=self.environment,
        )

    def _openmp(self) -> bool:
        return self.openmp and self.device is Device.CPU

    def _native_cpu(self) -> bool:
        return self.native_cpu and self.device is Device.CPU

    def _bindings_optimization(self) -> str | None:
        return None if self.build_type is BuildType.DEBUG else self.bindings_optimization


CMakeBuildPlan = BuildPlan[CMakeCompiler, ExtensionSource]


def _build_extension(plan: CMakeBuildPlan, folder: Path) -> dict[str, str]:
    """Build `plan`'s module in the empty `folder`; returns the marker's metadata."""
    compiler, source = plan.compiler, plan.source
    project = compiler._project(
        plan.tools, _uses_cuda(source), _libraries(source), plan.context_digest
    )
    uses_pch = (
        compiler.precompiled_headers
        and "pybind11" in project.libraries
        and source.binding_source.language == "cpp"
    )
    pch_dir = precompiled_header(project, compiler.cache) if uses_pch else None
    (folder / "src").mkdir()
    units = _write_units(plan, project, folder / "src", pch_dir)
    timings = build_project(
        project,
        compiler.cache,
        folder,
        module_name=plan.module_name,
        units=units,
        pch_dir=pch_dir,
        what=repr(plan.entry_point),
    )
    module = Path("build") / f"{plan.module_name}{python_build_info()['ext_suffix']}"
    return plan.marker(
        str(module),
        {
            "configure_seconds": f"{timings.configure:.3f}",
            "compile_seconds": f"{timings.compile:.3f}",
            "precompiled_header": "yes" if pch_dir is not None else "no",
            "precompiled_preludes": _prelude_roles(units),
        },
    )


def _build_batch(
    project: CMakeProject, plans: Sequence[CMakeBuildPlan], folder: Path
) -> dict[str, str]:
    """Build the modules of `plans` into one library in the empty `folder` (see
    `build_batch_project`); the batch marker's metadata: the library, the modules it holds
    (`members`, JSON), their precompiled preludes (`preludes`, JSON) and the batch's times.
    The objects are removed once linked."""
    src = folder / "src"
    src.mkdir()
    functions = Counter(_run_function(plan) for plan in plans)
    members = [
        BatchMember(
            plan.module_name,
            tuple(_write_units(plan, project, src, None)),
            # the symbol by which the shared bindings call the program; two members whose
            # programs have one name (one C++ function name) keep their own bindings
            _mangled_prefix(_run_function(plan)) if functions[_run_function(plan)] == 1 else None,
        )
        for plan in plans
    ]
    shared = _shared_bindings(project, plans, members, src)
    output = f"_sc_{folder.name.replace('-', '_')}"
    kept, in_shared, timings = build_batch_project(
        project,
        plans[0].compiler.cache,
        folder,
        members=members,
        output_name=output,
        what=f"a batch of {len(plans)} programs",
        shared=shared,
    )
    shutil.rmtree(folder / "build" / "CMakeFiles", ignore_errors=True)
    for pattern in ("sc_member_*", f"{SHARED_TARGET}.o*"):
        for stale in (folder / "build").glob(pattern):
            stale.unlink()
    share = len(kept) or 1
    return {
        "family": GTFN.name,
        "module": f"build/{output}{python_build_info()['ext_suffix']}",
        "members": json.dumps([members[i].module_name for i in kept]),
        "shared_bindings": json.dumps(
            [members[i].module_name for i in kept if in_shared and members[i].shared is not None]
        ),
        "preludes": json.dumps(
            {members[i].module_name: _prelude_roles(members[i].units) for i in kept}
        ),
        # each program's share of the batch's times
        "configure_seconds": f"{timings.configure / share:.3f}",
        "compile_seconds": f"{timings.compile / share:.3f}",
    }


def _write_units(
    plan: CMakeBuildPlan, project: CMakeProject, src: Path, pch_dir: Path | None
) -> list[Unit]:
    """Write `plan`'s two units into `src`; the units, with their precompiled preludes."""
    compiler, source = plan.compiler, plan.source
    program, binding = source.program_source, source.binding_source
    program_file = f"{plan.entry_point}.{_EXTENSIONS[program.language]}"
    bindings_file = f"{plan.entry_point}_bindings.{_EXTENSIONS[binding.language]}"
    (src / program_file).write_text(program.source_code)
    (src / bindings_file).write_text(binding.source_code)
    units = [
        Unit(program_file, program.language, bindings=False),
        Unit(bindings_file, binding.language, bindings=True),
    ]
    if compiler.precompiled_headers:  # each C++ unit's system headers, precompiled
        texts = (program.source_code, binding.source_code)
        units = [
            unit
            if unit.bindings and pch_dir is not None  # pybind11's own header is precompiled
            else dataclasses.replace(
                unit, prelude=precompiled_prelude(project, compiler.cache, unit, text)
            )
            for unit, text in zip(units, texts)
        ]
    return units


def _shared_bindings(
    project: CMakeProject,
    plans: Sequence[CMakeBuildPlan],
    members: Sequence[BatchMember],
    src: Path,
) -> SharedBindings | None:
    """The one bindings unit of the `members` that can share it (`shared`), written into
    `src` (None if fewer than two can): each member's bindings in a namespace of their
    own, its module's name defined for it, the declaration of its program's function
    left at file scope, where the program unit defines it."""
    parts = [
        Part(plan.source.binding_source.source_code, {"STENCILCHAIN_MODULE_NAME": plan.module_name})
        for plan, member in zip(plans, members)
        if member.shared is not None
    ]
    if len(parts) < 2:
        return None
    text = shared_unit(parts, file_scope=is_run_declaration, title="programs' bindings")
    (src / SHARED_BINDINGS_FILE).write_text(text)
    unit = Unit(SHARED_BINDINGS_FILE, "cpp", bindings=True)
    compiler = plans[0].compiler
    if compiler.precompiled_headers:
        unit = dataclasses.replace(
            unit, prelude=precompiled_prelude(project, compiler.cache, unit, text)
        )
    return SharedBindings(unit)


def _run_function(plan: CMakeBuildPlan) -> str:
    """The name of the function of `plan`'s program unit that its bindings call."""
    return ProgramSignature.of(plan.source.program_source.program).function


def _mangled_prefix(function: str) -> str:
    """The start of the C++ (Itanium ABI) name of the file-scope function `function`, its
    parameters' types following: no other function's name starts so."""
    return f"_Z{len(function)}{function}"


def _prelude_roles(units: Sequence[Unit]) -> str:
    """The marker's `precompiled_preludes`: the roles of the units that have one."""
    return ",".join("bindings" if u.bindings else "program" for u in units if u.prelude is not None)


def _libraries(source: ExtensionSource) -> tuple[str, ...]:
    deps = {*source.program_source.library_deps, *source.binding_source.library_deps}
    return tuple(sorted(deps))


def _uses_cuda(source: ExtensionSource) -> bool:
    return "cuda" in (source.program_source.language, source.binding_source.language)
