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

Under the build cache's lock: DaCe generates the SDFG's code, the adapter is written from
the exported functions DaCe generated (their exact C parameters), and three compilers run
side by side on two cores: the bindings unit (from the start, it does not depend on DaCe),
DaCe's CMake build of the SDFG, and the shim. The module `dlopen`s the DaCe library beside
it on its first call (see `stencilchain.steps.dace.shim`).

DaCe's configuration is set for the build only, in the building thread (DaCe's
configuration is thread-local), every `compiler.*` setting to its default and then the
ones this step decides; each is restored exactly afterwards, so a host application that
also uses DaCe sees no change. A complete folder is loaded without importing DaCe, running
its code generator or CMake.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from stencilchain._version import package_version
from stencilchain.errors import CompilationError
from stencilchain.program.device import Device
from stencilchain.program.hashing import sha256_of
from stencilchain.steps.build_tools import (
    build_environment,
    build_programs,
    compiler_message,
    executable_identity,
    package_identity,
    python_build_info,
    which,
)
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.dace.bindings import SHIM_LIBRARY_DEP, DaCeExtensionSource
from stencilchain.steps.dace.shim import CArgument, adapter_source
from stencilchain.steps.settings import BuildType
from stencilchain.steps.stages import CompiledArtifact, ExtensionSource

if TYPE_CHECKING:
    import dace

__all__ = ["DEFAULT_CPU_ARGS", "DaCeBuildPlan", "DaCeCompiler"]

# DaCe's default CPU flags without the ones that change results (-fno-signed-zeros,
# -freciprocal-math: the SDFG must compute what NumPy computes) and without -march=native
# (a build folder on a shared file system may be used by hosts with other CPUs, and the
# key does not identify the CPU). -fwrapv as in GTFN.
DEFAULT_CPU_ARGS: tuple[str, ...] = (
    "-fwrapv",
    "-fno-math-errno",
    "-Wall",
    "-Wno-unused-parameter",
    "-Wno-unused-label",
    "-Wno-unused-variable",
    "-Wno-unused-but-set-variable",
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")
_LOG_NAME = "build.log"
_DACE_FOLDER = "dace"
# Flags of the extension's two units per build type: (shim and adapter, bindings). The
# bindings are glue: -O1 compiles faster for a call path a few nanoseconds slower (as GTFN).
_EXTENSION_FLAGS: dict[BuildType, tuple[tuple[str, ...], tuple[str, ...]]] = {
    BuildType.DEBUG: (("-O0", "-g"), ("-O0", "-g")),
    BuildType.RELEASE: (("-O2", "-DNDEBUG"), ("-O1", "-DNDEBUG")),
    BuildType.RELWITHDEBINFO: (("-O2", "-g", "-DNDEBUG"), ("-O1", "-g", "-DNDEBUG")),
    BuildType.MINSIZEREL: (("-Os", "-DNDEBUG"), ("-Os", "-DNDEBUG")),
}
# DaCe is not thread-safe: one build at a time in a process (processes are kept apart by
# the build cache's lock on each folder).
_DACE_LOCK = threading.Lock()


@dataclasses.dataclass(frozen=True)
class DaCeCompiler:
    """DaCeExtensionSource -> CompiledArtifact: the SDFG built by DaCe, the extension by `cxx`.

    `cpu_args` are DaCe's `compiler.cpu.args` (replacing DaCe's default, see
    DEFAULT_CPU_ARGS); `cuda_args` and `cuda_architectures` its `compiler.cuda.args` and
    `cuda_arch` (GPU only; None lets DaCe detect). `cxx` compiles both the SDFG and the
    extension; `build_jobs` bounds DaCe's parallel build (None: DaCe's default).
    """

    device: Device
    build_type: BuildType
    cache: BuildCache
    cpu_args: tuple[str, ...] = DEFAULT_CPU_ARGS
    cuda_args: tuple[str, ...] = ("-lineinfo",)
    cuda_architectures: str | None = None
    cxx: str = "c++"
    build_jobs: int | None = None

    def __post_init__(self) -> None:
        def require(name: str, value: object, kind: type, what: str) -> None:
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise TypeError(f"DaCeCompiler.{name} must be {what}, got {value!r}")

        require("device", self.device, Device, "a Device")
        require("build_type", self.build_type, BuildType, "a BuildType")
        require("cache", self.cache, BuildCache, "a BuildCache")
        require("cxx", self.cxx, str, "a compiler name or path")
        for name in ("cpu_args", "cuda_args"):
            flags = getattr(self, name)
            if not isinstance(flags, tuple) or not all(isinstance(f, str) for f in flags):
                raise TypeError(f"DaCeCompiler.{name} must be a tuple of str, got {flags!r}")
        if self.cuda_architectures is not None:
            require("cuda_architectures", self.cuda_architectures, str, "a string or None")
        if self.build_jobs is not None:
            require("build_jobs", self.build_jobs, int, "a positive int or None")
            if self.build_jobs < 1:
                raise TypeError(f"DaCeCompiler.build_jobs must be positive, got {self.build_jobs}")

    def __call__(self, source: ExtensionSource, /) -> CompiledArtifact:
        """Build `source` (the DaCeExtensionSource of DaCeBindings) or load its build."""
        plan = self.plan(source)
        build = functools.partial(_build, plan)
        result = self.cache.get_or_build(plan.key, build)
        if not _complete(result.folder, result.metadata):  # the marker survived its files
            self.cache.discard(plan.key)
            result = self.cache.get_or_build(plan.key, build)
        return CompiledArtifact(
            module_path=result.folder / result.metadata["module"],
            module_name=plan.module_name,
            entry_point=plan.entry_point,
            build_dir=result.folder,
            metadata_json=json.dumps(dict(result.metadata), sort_keys=True),
        )

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
        if _IDENTIFIER.fullmatch(entry) is None:
            raise ValueError(
                f"entry point {entry!r} cannot name an extension module: expected a C identifier "
                "of at most 100 characters"
            )
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
        tools = _tools(self.cxx)
        context = json.dumps(
            {
                "format": "stencilchain-dace/1",
                "package": package_version(),
                "device": self.device.value,
                "build_type": self.build_type.value,
                "cpu_args": self.cpu_args,
                "cuda_args": self.cuda_args if self.device is Device.GPU else None,
                "cuda_architectures": (
                    self.cuda_architectures if self.device is Device.GPU else None
                ),
                "extension_flags": _EXTENSION_FLAGS[self.build_type],
                "tools": tools.identity,
                "python": python_build_info(),
            },
            sort_keys=True,
        )
        digest = sha256_of(entry, source.fingerprint(), context)
        return DaCeBuildPlan(
            compiler=self,
            source=source,
            entry_point=entry,
            key=f"{entry}_dace_{digest[:32]}",
            module_name=f"_sc_{entry}_{digest[:12]}",
            tools=tools,
            context=context,
            context_digest=sha256_of(context),
        )


@dataclasses.dataclass(frozen=True)
class DaCeBuildPlan:
    """One build: the compiler's settings, the source, the key, the module's name, the tools."""

    compiler: DaCeCompiler
    source: DaCeExtensionSource
    entry_point: str
    key: str
    module_name: str
    tools: _Tools
    context: str
    context_digest: str


# --- tools -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Tools:
    cxx: str
    identity: str


@functools.cache
def _tools(cxx: str) -> _Tools:
    """The compiler (a path), and what identifies every tool of a build; once per process.

    DaCe runs `cmake` and `ninja` from PATH, which the build points at the Python packages'
    (a system CMake may be too old for nvcc's C++20, as 3.25 is); DaCe itself is identified
    by its installed files (no import: a cached first call must stay fast).
    """
    cxx_path = which(cxx, "C++ compiler")
    identity = {
        "cxx": executable_identity(cxx_path),
        # DaCe's build runs the cmake and ninja of their Python packages (see _compile_sdfg)
        "cmake": package_identity("cmake"),
        "ninja": package_identity("ninja"),
        "dace": _dace_identity(),
    }
    return _Tools(cxx=cxx_path, identity=json.dumps(identity, sort_keys=True))


def _dace_identity() -> str:
    spec = importlib.util.find_spec("dace")
    if spec is None or spec.origin is None:
        raise CompilationError(
            "DaCe is not installed; the DaCe toolchains need it: pip install 'stencilchain[dace]'",
            "",
            None,
        )
    folder = Path(spec.origin).parent
    parts = []
    for name in ("__init__.py", "version.py"):
        path = folder / name
        if path.is_file():
            stat = path.stat()
            parts.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
    return "|".join(parts)


# --- building ------------------------------------------------------------------------------


def _complete(folder: Path, metadata: Mapping[str, str]) -> bool:
    """Whether the files a complete build's marker names are all there."""
    names = [metadata.get("module", ""), metadata.get("dace_library", "")]
    return all(name and (folder / name).is_file() for name in names)


def _build(plan: DaCeBuildPlan, folder: Path) -> dict[str, str]:
    """Build `plan` in the empty `folder`; the marker's metadata."""
    source, entry = plan.source, plan.entry_point
    start = time.perf_counter()
    src = folder / "src"
    src.mkdir()
    shim_flags, bindings_flags = _EXTENSION_FLAGS[plan.compiler.build_type]
    (src / "bindings.cpp").write_text(source.binding_source.source_code)
    with _Jobs(folder / _LOG_NAME) as jobs:
        jobs.start(
            _compile_command(plan, src / "bindings.cpp", bindings_flags),
            f"compiling the bindings of {entry!r}",
        )
        with _DACE_LOCK, _dace_settings(plan):
            generated = _generate(plan, folder / _DACE_FOLDER, jobs)
            codegen_done = time.perf_counter()
            module = folder / f"{plan.module_name}{python_build_info()['ext_suffix']}"
            library = os.path.relpath(generated.library, folder)
            try:
                adapter = adapter_source(
                    program=source.program_source.program,
                    sdfg_name=generated.sdfg_name,
                    library=library,
                    program_args=generated.program_args,
                    init_args=generated.init_args,
                    init_reads_symbols=generated.init_reads_symbols,
                    gpu=plan.compiler.device is Device.GPU,
                    workspace_storage=generated.workspace_storage,
                )
            except ValueError as error:  # the SDFG takes what the shim cannot give
                raise CompilationError(str(error), "", None) from error
            (src / "shim.cpp").write_text(source.program_source.source_code + adapter)
            openmp = ("-fopenmp",) if plan.compiler.device is Device.CPU else ()
            jobs.start(
                _compile_command(plan, src / "shim.cpp", (*shim_flags, *openmp)),
                f"compiling the shim of {entry!r}",
            )
            built = _compile_sdfg(generated, jobs)
        dace_done = time.perf_counter()
        jobs.wait_all()
        objects = [str(src / "bindings.o"), str(src / "shim.o")]
        jobs.start(
            [plan.tools.cxx, "-shared", "-pthread", *openmp, *objects, "-o", str(module), "-ldl"],
            f"linking the module of {entry!r}",
        )
        jobs.wait_all()
    if built.resolve() != generated.library.resolve() or not module.is_file():
        raise CompilationError(
            f"building {entry!r} did not produce {module.name} and {generated.library}",
            "",
            folder / _LOG_NAME,
        )
    done = time.perf_counter()
    return {
        "module": module.name,
        "module_name": plan.module_name,
        "entry_point": entry,
        "sdfg_name": generated.sdfg_name,
        "dace_library": library,
        "device": plan.compiler.device.value,
        "build_type": plan.compiler.build_type.value,
        "init": "per-symbols" if generated.init_reads_symbols else "once",
        "workspace": generated.workspace_storage or "",
        "codegen_seconds": f"{codegen_done - start:.3f}",
        "dace_compile_seconds": f"{dace_done - codegen_done:.3f}",
        "total_seconds": f"{done - start:.3f}",
        **plan.source.key_metadata("dace", plan.context),
    }


def _compile_command(plan: DaCeBuildPlan, unit: Path, flags: Sequence[str]) -> list[str]:
    include = python_build_info()["python_include"]
    return [
        plan.tools.cxx,
        "-std=c++17",
        "-fPIC",
        "-fvisibility=hidden",
        "-fwrapv",
        "-pthread",
        *flags,
        "-isystem",
        include,
        f"-DSTENCILCHAIN_MODULE_NAME={plan.module_name}",
        "-c",
        str(unit),
        "-o",
        str(unit.with_suffix(".o")),
    ]


@dataclasses.dataclass(frozen=True)
class _Generated:
    """DaCe's code of one SDFG, written to its program folder, not compiled yet."""

    sdfg: Any  # dace.SDFG
    sdfg_name: str
    program_folder: Path
    library: Path
    program_args: tuple[CArgument, ...]
    init_args: tuple[CArgument, ...]
    init_reads_symbols: bool
    workspace_storage: str | None  # the storage of the external transients, if any


def _generate(plan: DaCeBuildPlan, program_folder: Path, jobs: _Jobs) -> _Generated:
    """Deserialize the SDFG and generate its code into `program_folder`."""
    from dace.codegen import codegen
    from dace.codegen import compiler as dace_compiler

    from stencilchain.steps.dace.sdfg_text import sdfg_from_source

    entry = plan.entry_point
    try:
        sdfg = sdfg_from_source(plan.source.sdfg_source.source_code)
        sdfg.build_folder = str(program_folder)
        # SDFG.compile would also rename an SDFG whose library this process loaded; the
        # module dlopens its library privately (RTLD_LOCAL), so equal names never clash
        code_objects = codegen.generate_code(sdfg, validate=False)
        dace_compiler.generate_program_folder(
            sdfg, code_objects, str(program_folder), folder_mode="development"
        )
    except Exception as error:
        jobs.log(f"DaCe code generation failed: {type(error).__name__}: {error}\n")
        raise CompilationError(
            f"DaCe could not generate the code of the SDFG of {entry!r}",
            f"{type(error).__name__}: {error}",
            jobs.path,
        ) from error
    code = "\n".join(str(obj.code) for obj in code_objects)
    name = sdfg.name
    program_args = _exported_params(
        code, rf"void __program_{name}\({name}_state_t \*__state", entry
    )
    init_args = _exported_params(code, rf"{name}_state_t \*__dace_init_{name}\(", entry)
    storages = sorted(set(re.findall(r"__dace_get_external_memory_size_(\w+)\(", code)))
    wanted = plan.source.sdfg_source.workspace
    if len(storages) > 1 or bool(storages) != wanted:
        raise CompilationError(
            f"the SDFG of {entry!r} has external transients in {storages or 'no storage'}, "
            + (
                "but stencilchain supports one workspace, in the device's memory"
                if wanted
                else "but its translation did not ask for a workspace"
            ),
            "",
            jobs.path,
        )
    library = Path(
        dace_compiler.get_binary_name(
            object_folder=str(program_folder), sdfg_name=name, folder_mode="development"
        )
    )
    return _Generated(
        sdfg=sdfg,
        sdfg_name=name,
        program_folder=program_folder,
        library=library,
        program_args=program_args,
        init_args=init_args,
        init_reads_symbols=_init_reads_symbols(sdfg),
        workspace_storage=storages[0] if storages else None,
    )


def _exported_params(code: str, head: str, entry: str) -> tuple[CArgument, ...]:
    """The parameters after `head` (a regex) in DaCe's exported declaration, by name."""
    match = re.search(rf"DACE_EXPORTED {head}(?:, )?([^)]*)\)", code)
    if match is None:
        raise CompilationError(
            f"DaCe's code for {entry!r} lacks the exported function {head!r} stencilchain calls "
            "(an unsupported DaCe version?)",
            "",
            None,
        )
    params: list[CArgument] = []
    for text in filter(None, (p.strip() for p in match[1].split(","))):
        name = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", text)
        if name is None:
            raise CompilationError(f"cannot read DaCe's parameter {text!r} of {entry!r}", "", None)
        params.append(CArgument(declaration=text, name=name[1]))
    return tuple(params)


def _init_reads_symbols(sdfg: dace.SDFG) -> bool:
    """Whether DaCe's init function uses the symbol values: it allocates persistent and
    global transients and runs init code, nothing else (external transients live in the
    caller's workspace)."""
    from dace import dtypes
    from dace.sdfg import nodes

    persistent = (dtypes.AllocationLifetime.Persistent, dtypes.AllocationLifetime.Global)
    reads = False
    for _, _name, desc in sdfg.arrays_recursive():
        if not desc.transient:
            continue
        reads = reads or desc.lifetime in persistent
    for sd in sdfg.all_sdfgs_recursive():
        reads = reads or any(block.as_string.strip() for block in sd.init_code.values())
    for node, _ in sdfg.all_nodes_recursive():
        if isinstance(node, nodes.Tasklet) and node.code_init.as_string.strip():
            reads = True
    return reads


def _compile_sdfg(generated: _Generated, jobs: _Jobs) -> Path:
    """DaCe's CMake build of the generated code; the library's path."""
    from dace.codegen import compiler as dace_compiler

    try:
        with _package_tools_on_path():
            library = dace_compiler.configure_and_compile(
                str(generated.program_folder), generated.sdfg_name, folder_mode="development"
            )
    except Exception as error:
        jobs.log(f"DaCe's build failed: {type(error).__name__}: {error}\n")
        raise CompilationError(
            f"DaCe could not compile the SDFG {generated.sdfg_name!r}",
            compiler_message(str(error)),
            jobs.path,
        ) from error
    jobs.log(f"DaCe built {library}\n")
    return Path(library)


@contextlib.contextmanager
def _package_tools_on_path() -> Iterator[None]:
    """PATH starting with the folders of the cmake and ninja Python packages, for the
    duration of DaCe's build (DaCe runs them by name; the builds are serialized)."""
    cmake, ninja = build_programs()
    old = os.environ.get("PATH")
    folders = dict.fromkeys([os.path.dirname(cmake), os.path.dirname(ninja)])
    os.environ["PATH"] = os.pathsep.join([*folders, *([old] if old else [])])
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PATH", None)
        else:
            os.environ["PATH"] = old


# --- DaCe's configuration -----------------------------------------------------------------


@contextlib.contextmanager
def _dace_settings(plan: DaCeBuildPlan) -> Iterator[None]:
    """DaCe's configuration for this build, in this thread, restored exactly afterwards:
    every `compiler.*` setting at its default (a user's .dace.conf or DACE_* variables are
    not part of the build key), then what the compiler decides."""
    from dace.config import Config, set_temporary

    compiler = plan.compiler
    settings: dict[tuple[str, ...], object] = {}

    def defaults(meta: dict[str, Any], path: tuple[str, ...]) -> None:
        for key, entry in meta.items():
            if entry.get("type") == "dict":
                defaults(entry["required"], (*path, key))
                continue
            leaf = (*path, key)
            with contextlib.suppress(KeyError):
                settings[leaf] = Config.get_default(*leaf)

    defaults(Config.get_metadata("compiler")["required"], ("compiler",))
    settings.update(
        {
            ("compiler", "build_type"): compiler.build_type.cmake_name,
            ("compiler", "build_folder_mode"): "development",
            ("compiler", "use_cache"): False,
            ("compiler", "cpu", "executable"): plan.tools.cxx,
            ("compiler", "cpu", "args"): " ".join(compiler.cpu_args),
            ("compiler", "cuda", "args"): " ".join(compiler.cuda_args),
            ("compiler", "cuda", "cuda_arch"): compiler.cuda_architectures or "",
            ("debugprint",): False,
        }
    )
    if compiler.device is Device.GPU:
        settings[("compiler", "cuda", "backend")] = "cuda"
    if compiler.build_jobs is not None:
        settings[("compiler", "build_jobs")] = compiler.build_jobs
    with contextlib.ExitStack() as stack:
        for path, value in settings.items():
            stack.enter_context(set_temporary(*path, value=value))
        yield


# --- processes ---------------------------------------------------------------------------


class _Jobs:
    """Compiler processes running side by side, their output appended to the build log.

    Leaving the context stops any still running (after a failure elsewhere)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._running: list[tuple[subprocess.Popen[bytes], IO[bytes], str, list[str]]] = []
        self._count = 0

    def __enter__(self) -> _Jobs:
        return self

    def __exit__(self, *exc: object) -> None:
        for process, output, _, _ in self._running:
            process.kill()
            process.wait()
            output.close()
            os.unlink(output.name)
        self._running.clear()

    def log(self, text: str) -> None:
        with self.path.open("a") as file:
            file.write(text)

    def start(self, command: list[str], what: str) -> None:
        self._count += 1
        output = self.path.with_name(f"{self.path.name}.{self._count}")
        file = output.open("w+b")
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=file,
                stderr=subprocess.STDOUT,
                env=build_environment(),
            )
        except OSError as error:
            file.close()
            raise CompilationError(
                f"{what} failed: cannot run {command[0]}: {error}", "", self.path
            ) from error
        self._running.append((process, file, what, command))

    def wait_all(self) -> None:
        """Wait for every job; CompilationError naming the first that failed."""
        failed: tuple[str, str] | None = None
        while self._running:
            process, file, what, command = self._running.pop(0)
            status = process.wait()
            file.seek(0)
            text = file.read().decode(errors="replace")
            file.close()
            os.unlink(file.name)
            tail = "" if status == 0 else f"[exit status {status}]\n"
            self.log(f"$ {' '.join(command)}\n{text}{tail}")
            if status != 0 and failed is None:
                failed = (what, text)
        if failed is not None:
            raise CompilationError(f"{failed[0]} failed", compiler_message(failed[1]), self.path)
