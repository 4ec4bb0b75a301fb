"""GTFN compilation: ExtensionSource -> CompiledArtifact, built with CMake and Ninja.

The program and its bindings are two translation units of one Python extension module,
built in a folder of the build cache keyed by the entry point, the source fingerprint
and the build context (build type, flags, compiler identity, tool and package versions).
A complete folder is loaded without running CMake.

Speed (a new program should build in about a second on two cores):
- a one-time "toolchain" folder per compiler holds CMake's compiler detection and the
  OpenMP search; each build starts from a copy of it, so CMake skips both (CMake reuses
  these files the same way between its own configure runs);
- the program unit, which holds the loops, gets the build type's flags (Release: -O3);
  the bindings unit is glue and gets `bindings_optimization` (-O1), which takes about a
  third off a pybind11 unit for a call path a few nanoseconds slower;
- bindings using pybind11 get a precompiled `<pybind11/pybind11.h>`, built once per build
  context; GCC uses it only where it is exact (it checks flags and macros itself);
- the two units compile in parallel, and CMake/Ninja run directly (no find_package of
  Python or pybind11 per build: their include folders are passed in).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

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
from stencilchain.steps.settings import BuildType
from stencilchain.steps.stages import CompiledArtifact, ExtensionSource

_EXTENSIONS = {"cpp": "cpp", "cuda": "cu"}
_KNOWN_LIBRARIES = ("pybind11",)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")
_TARGET = "sc_module"
_LOG_NAME = "build.log"
_PCH_HEADER = "pybind11/pybind11.h"
# Cache entries the toolchain folder found and each build is given back: FindOpenMP's
# results (it then skips its try-compiles) and the CUDA architectures CMake detected.
_CARRIED_CACHE = re.compile(
    r"OpenMP_(CXX_FLAGS|CXX_LIB_NAMES|CXX_SPEC_DATE|\w+_LIBRARY)|CMAKE_CUDA_ARCHITECTURES"
)
# Flag variables CMake would read from the environment; the key does not cover the
# environment, so the builds run without them.


@dataclasses.dataclass(frozen=True)
class CMakeCompiler:
    """ExtensionSource -> CompiledArtifact: a Python extension built with CMake + Ninja.

    `extra_flags` go to every C++ unit, `cuda_flags` to every CUDA unit; `openmp` links
    OpenMP on the CPU. `bindings_optimization` replaces the build type's optimization in
    the bindings unit (None keeps it; Debug builds keep it always). `cxx` and `nvcc` are
    the compilers (names looked up on PATH once per process, or paths).
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

    def __post_init__(self) -> None:
        def require(name: str, value: object, kind: type, what: str) -> None:
            if not isinstance(value, kind):
                raise TypeError(f"CMakeCompiler.{name} must be {what}, got {value!r}")

        require("device", self.device, Device, "a Device")
        require("build_type", self.build_type, BuildType, "a BuildType")
        require("cache", self.cache, BuildCache, "a BuildCache")
        require("openmp", self.openmp, bool, "a bool")
        require("precompiled_headers", self.precompiled_headers, bool, "a bool")
        require("cxx", self.cxx, str, "a compiler name or path")
        require("nvcc", self.nvcc, str, "a compiler name or path")
        for name in ("extra_flags", "cuda_flags"):
            flags = getattr(self, name)
            if not isinstance(flags, tuple) or not all(isinstance(f, str) for f in flags):
                raise TypeError(f"CMakeCompiler.{name} must be a tuple of str, got {flags!r}")
            _check_cmake_safe(name, flags)
        if self.bindings_optimization is not None:
            require("bindings_optimization", self.bindings_optimization, str, "a flag or None")
            _check_cmake_safe("bindings_optimization", (self.bindings_optimization,))
        if self.cuda_architectures is not None:
            require("cuda_architectures", self.cuda_architectures, str, "a string or None")
            _check_cmake_safe("cuda_architectures", (self.cuda_architectures,))
        if self.jobs is not None and (
            not isinstance(self.jobs, int) or isinstance(self.jobs, bool) or self.jobs < 1
        ):
            raise TypeError(f"CMakeCompiler.jobs must be a positive int or None, got {self.jobs!r}")

    def __call__(self, source: ExtensionSource, /) -> CompiledArtifact:
        plan = self.plan(source)
        result = self.cache.get_or_build(plan.key, functools.partial(_build_extension, plan))
        module = result.folder / result.metadata.get("module", "")
        if not module.is_file():  # the marker survived its module: rebuild, once
            self.cache.discard(plan.key)
            result = self.cache.get_or_build(plan.key, functools.partial(_build_extension, plan))
            module = result.folder / result.metadata.get("module", "")
        return CompiledArtifact(
            module_path=module,
            module_name=plan.module_name,
            entry_point=plan.entry_point,
            build_dir=result.folder,
            metadata_json=json.dumps(dict(result.metadata), sort_keys=True),
        )

    def plan(self, source: ExtensionSource) -> BuildPlan:
        """Everything a build of `source` needs, with its cache key; builds nothing."""
        if not isinstance(source, ExtensionSource):
            raise TypeError(f"CMakeCompiler takes an ExtensionSource, got {type(source).__name__}")
        program, binding = source.program_source, source.binding_source
        entry = program.entry_point
        if _IDENTIFIER.fullmatch(entry) is None:
            raise ValueError(
                f"entry point {entry!r} cannot name an extension module: expected a C identifier "
                "of at most 100 characters"
            )
        if program.device is not self.device:
            raise ValueError(
                f"CMakeCompiler for {self.device} cannot build {entry!r}, generated for {program.device}"
            )
        for what, language in (("program", program.language), ("bindings", binding.language)):
            allowed = ("cpp",) if self.device is Device.CPU else ("cpp", "cuda")
            if language not in allowed:
                raise ValueError(
                    f"the {what} source of {entry!r} is in {language!r}; CMakeCompiler for "
                    f"{self.device} builds {' or '.join(map(repr, allowed))}"
                )
        libraries = tuple(sorted({*program.library_deps, *binding.library_deps}))
        for library in libraries:
            if library not in _KNOWN_LIBRARIES:
                raise ValueError(
                    f"{entry!r} needs the library {library!r}, which CMakeCompiler does not "
                    f"provide (it knows {', '.join(_KNOWN_LIBRARIES)})"
                )
        tools = _tools(self.cxx, self.nvcc if _uses_cuda(source) else None)
        python = python_build_info()
        context = json.dumps(
            {
                "format": "stencilchain-cmake/1",
                "package": package_version(),
                "device": self.device.value,
                "build_type": self.build_type.value,
                "extra_flags": self.extra_flags,
                "openmp": self.openmp and self.device is Device.CPU,
                "bindings_optimization": self._bindings_optimization(),
                "cuda_architectures": self.cuda_architectures,
                "cuda_flags": self.cuda_flags,
                "libraries": libraries,
                "tools": tools.identity,
                "python": python,
            },
            sort_keys=True,
        )
        digest = sha256_of(entry, source.fingerprint(), context)
        return BuildPlan(
            compiler=self,
            source=source,
            entry_point=entry,
            key=f"{entry}_{digest[:32]}",
            module_name=f"_sc_{entry}_{digest[:12]}",
            context=context,
            context_digest=sha256_of(context),
            libraries=libraries,
            tools=tools,
        )

    def _bindings_optimization(self) -> str | None:
        return None if self.build_type is BuildType.DEBUG else self.bindings_optimization


@dataclasses.dataclass(frozen=True)
class BuildPlan:
    """One extension build: the compiler's settings, the sources, the key and the tools."""

    compiler: CMakeCompiler
    source: ExtensionSource
    entry_point: str
    key: str
    module_name: str
    context: str
    context_digest: str
    libraries: tuple[str, ...]
    tools: _Tools

    @property
    def languages(self) -> tuple[str, ...]:
        return ("CXX", "CUDA") if _uses_cuda(self.source) else ("CXX",)

    @property
    def openmp(self) -> bool:
        return self.compiler.openmp and self.compiler.device is Device.CPU

    @property
    def uses_pch(self) -> bool:
        return (
            self.compiler.precompiled_headers
            and "pybind11" in self.libraries
            and self.source.binding_source.language == "cpp"
        )


# --- tools -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Tools:
    """The compilers of a build and what identifies the whole tool set (part of every key)."""

    cxx: str
    nvcc: str | None
    identity: str

    @property
    def cmake(self) -> str:
        return build_programs()[0]

    @property
    def ninja(self) -> str:
        return build_programs()[1]


@functools.cache
def _tools(cxx: str, nvcc: str | None) -> _Tools:
    """The tools of a build, looked up once per process.

    Cheap, since every call computes a key, builds or not: executables are identified by
    their resolved path, size and mtime, and CMake and Ninja without importing them.
    """
    cxx_path = which(cxx, "C++ compiler")
    nvcc_path = None if nvcc is None else which(nvcc, "CUDA compiler (needed for the GPU)")
    identity = {
        "cxx": executable_identity(cxx_path),
        "nvcc": None if nvcc_path is None else executable_identity(nvcc_path),
        "cmake": package_identity("cmake"),
        "ninja": package_identity("ninja"),
    }
    return _Tools(cxx=cxx_path, nvcc=nvcc_path, identity=json.dumps(identity, sort_keys=True))


def _uses_cuda(source: ExtensionSource) -> bool:
    return "cuda" in (source.program_source.language, source.binding_source.language)


# --- building ----------------------------------------------------------------------------


def _build_extension(plan: BuildPlan, folder: Path) -> dict[str, str]:
    """Build `plan`'s module in the empty `folder`; returns the marker's metadata."""
    compiler = plan.compiler
    toolchain = compiler.cache.get_or_build(
        _toolchain_key(plan), functools.partial(_build_toolchain, plan)
    )
    pch_dir: Path | None = None
    if plan.uses_pch:
        pch = compiler.cache.get_or_build(
            f"pch-{plan.context_digest[:32]}", functools.partial(_build_pch, plan)
        )
        pch_dir = pch.folder / pch.metadata["include_dir"]

    program, binding = plan.source.program_source, plan.source.binding_source
    src, build = folder / "src", folder / "build"
    src.mkdir()
    program_file = f"{plan.entry_point}.{_EXTENSIONS[program.language]}"
    bindings_file = f"{plan.entry_point}_bindings.{_EXTENSIONS[binding.language]}"
    (src / program_file).write_text(program.source_code)
    (src / bindings_file).write_text(binding.source_code)
    (src / "CMakeLists.txt").write_text(
        _cmake_lists(
            plan,
            module_name=plan.module_name,
            units=[
                _Unit(program_file, program.language, bindings=False),
                _Unit(bindings_file, binding.language, bindings=True),
            ],
            pch_dir=pch_dir,
        )
    )
    platform_args = _reuse_platform(toolchain.folder, toolchain.metadata, build)
    with _Log(folder / _LOG_NAME) as log:
        start = time.perf_counter()
        log.run(
            [*_configure_command(plan, src, build), *platform_args],
            f"configuring {plan.entry_point!r}",
        )
        configured = time.perf_counter()
        log.run(_ninja_command(plan, build), f"compiling {plan.entry_point!r}")
        done = time.perf_counter()
    module = build / f"{plan.module_name}{python_build_info()['ext_suffix']}"
    if not module.is_file():
        raise CompilationError(
            f"building {plan.entry_point!r} produced no module {module.name}",
            "",
            folder / _LOG_NAME,
        )
    return {
        "module": str(module.relative_to(folder)),
        "module_name": plan.module_name,
        "entry_point": plan.entry_point,
        "device": compiler.device.value,
        "build_type": compiler.build_type.value,
        "configure_seconds": f"{configured - start:.3f}",
        "compile_seconds": f"{done - configured:.3f}",
        "precompiled_header": "yes" if pch_dir is not None else "no",
        **plan.source.key_metadata("gtfn", plan.context),
    }


def _toolchain_key(plan: BuildPlan) -> str:
    compiler = plan.compiler
    digest = sha256_of(
        "stencilchain-toolchain/1",
        package_version(),
        plan.tools.identity,
        *plan.languages,
        f"openmp={plan.openmp}",
        f"cuda_architectures={compiler.cuda_architectures}",
    )
    return f"toolchain-{digest[:32]}"


def _build_toolchain(plan: BuildPlan, folder: Path) -> dict[str, str]:
    """Configure an empty project once: CMake's compiler detection and the OpenMP search."""
    src, build = folder / "src", folder / "build"
    src.mkdir()
    lines = [
        "cmake_minimum_required(VERSION 3.20)",
        f"project(stencilchain_toolchain LANGUAGES {' '.join(plan.languages)})",
    ]
    if plan.openmp:
        lines.append("find_package(OpenMP REQUIRED COMPONENTS CXX)")
    (src / "CMakeLists.txt").write_text("\n".join(lines) + "\n")
    with _Log(folder / _LOG_NAME) as log:
        log.run(_configure_command(plan, src, build), "setting up the CMake toolchain")
    platform = [p.parent for p in (build / "CMakeFiles").glob("*/CMakeSystem.cmake")]
    cache_args = [
        f"-D{name}:{kind}={value}"
        for name, kind, value in _cmake_cache_entries(build / "CMakeCache.txt")
        if _CARRIED_CACHE.fullmatch(name)
    ]
    return {
        "platform_dir": str(platform[0].relative_to(folder)) if len(platform) == 1 else "",
        "cache_args": json.dumps(cache_args),
    }


def _reuse_platform(toolchain: Path, metadata: Mapping[str, str], build: Path) -> list[str]:
    """Copy the toolchain's detection files into `build`; the CMake arguments that use them."""
    args: list[str] = json.loads(metadata.get("cache_args", "[]"))
    platform = metadata.get("platform_dir", "")
    if platform:
        target = build / "CMakeFiles" / Path(platform).name
        target.mkdir(parents=True)
        for file in (toolchain / platform).iterdir():
            if file.is_file():
                shutil.copy2(file, target / file.name)
        # CMake loads CMakeFiles/<version>/ only in a tree it marked as initialized
        args.append("-DCMAKE_PLATFORM_INFO_INITIALIZED:INTERNAL=1")
    return args


def _build_pch(plan: BuildPlan, folder: Path) -> dict[str, str]:
    """Precompile `<pybind11/pybind11.h>` with exactly the flags of a bindings unit.

    The header is compiled as the bindings unit of a project generated like every build
    (so CMake adds the same flags), then stored as `pybind11/pybind11.h.gch` in a folder
    that builds put first on the include path.
    """
    src, build = folder / "src", folder / "build"
    src.mkdir()
    stub = "pch_stub.cpp"
    (src / stub).write_text(f"#include <{_PCH_HEADER}>\n")
    (src / "CMakeLists.txt").write_text(
        _cmake_lists(
            plan,
            module_name=None,
            units=[_Unit(stub, "cpp", bindings=True, header=True)],
            pch_dir=None,
        )
    )
    toolchain = plan.compiler.cache.get_or_build(
        _toolchain_key(plan), functools.partial(_build_toolchain, plan)
    )
    platform_args = _reuse_platform(toolchain.folder, toolchain.metadata, build)
    obj = f"CMakeFiles/{_TARGET}.dir/{stub}.o"
    with _Log(folder / _LOG_NAME) as log:
        log.run(
            [*_configure_command(plan, src, build), *platform_args],
            "configuring the pybind11 header",
        )
        log.run([*_ninja_command(plan, build), obj], "precompiling the pybind11 header")
    target = folder / "include" / _PCH_HEADER
    target.parent.mkdir(parents=True)
    os.replace(build / obj, target.with_name(target.name + ".gch"))
    shutil.rmtree(build, ignore_errors=True)
    return {"include_dir": "include"}


@dataclasses.dataclass(frozen=True)
class _Unit:
    """One source file of the module: its language and role."""

    file: str
    language: str
    bindings: bool
    header: bool = False


def _cmake_lists(
    plan: BuildPlan, *, module_name: str | None, units: Sequence[_Unit], pch_dir: Path | None
) -> str:
    """The CMakeLists.txt of one module; per-unit flags, so one rule serves both units."""
    compiler = plan.compiler
    info = python_build_info()
    includes = [info["python_include"]]
    if "pybind11" in plan.libraries:
        includes.append(info["pybind11_include"])
    q = _cmake_quote
    lines = [
        "cmake_minimum_required(VERSION 3.20)",
        f"project(stencilchain_extension LANGUAGES {' '.join(plan.languages)})",
    ]
    if plan.openmp:
        lines.append("find_package(OpenMP REQUIRED COMPONENTS CXX)")
    lines += [
        f"add_library({_TARGET} MODULE {' '.join(q(u.file) for u in units)})",
        f"set_target_properties({_TARGET} PROPERTIES",
        f'  OUTPUT_NAME {q(module_name or "_sc_pch")} PREFIX "" SUFFIX {q(info["ext_suffix"])}',
        '  DEFINE_SYMBOL "" POSITION_INDEPENDENT_CODE ON',
        "  CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF",
        "  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON",
    ]
    if "CUDA" in plan.languages:
        lines += [
            "  CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF",
            "  CUDA_VISIBILITY_PRESET hidden",
        ]
        if compiler.cuda_architectures is not None:
            lines.append(f"  CUDA_ARCHITECTURES {q(compiler.cuda_architectures)}")
    lines += [
        ")",
        f"target_include_directories({_TARGET} SYSTEM PRIVATE {' '.join(map(q, includes))})",
    ]
    if module_name is not None:  # absent from the precompiled header, which GCC then accepts
        lines.append(
            f"target_compile_definitions({_TARGET} PRIVATE STENCILCHAIN_MODULE_NAME={module_name})"
        )
    if plan.openmp:
        lines.append(f"target_link_libraries({_TARGET} PRIVATE OpenMP::OpenMP_CXX)")
    for unit in units:
        options = _unit_options(plan, unit, pch_dir)
        if unit.header:
            lines.append(f"set_source_files_properties({q(unit.file)} PROPERTIES LANGUAGE CXX)")
        if options:
            lines.append(
                f"set_property(SOURCE {q(unit.file)} APPEND PROPERTY COMPILE_OPTIONS "
                f"{' '.join(map(q, options))})"
            )
    return "\n".join(lines) + "\n"


def _unit_options(plan: BuildPlan, unit: _Unit, pch_dir: Path | None) -> list[str]:
    """Flags of one unit, after the build type's: integers wrap like NumPy's (-fwrapv)."""
    compiler = plan.compiler
    if unit.language == "cuda":
        return ["-Xcompiler=-fwrapv", *compiler.cuda_flags]
    options = ["-fwrapv", *compiler.extra_flags]
    optimization = compiler._bindings_optimization()
    if unit.bindings and optimization is not None:
        options.append(optimization)
    if unit.header:
        options += ["-x", "c++-header"]
    if pch_dir is not None and unit.bindings:
        # -I folders are searched before the -isystem pybind11 folder: GCC finds the .gch
        options += [f"-I{pch_dir}", "-Winvalid-pch"]
    return options


def _configure_command(plan: BuildPlan, src: Path, build: Path) -> list[str]:
    compiler, tools = plan.compiler, plan.tools
    command = [
        tools.cmake,
        "-S", str(src),
        "-B", str(build),
        "-G", "Ninja",
        f"-DCMAKE_MAKE_PROGRAM:FILEPATH={tools.ninja}",
        f"-DCMAKE_BUILD_TYPE:STRING={compiler.build_type.cmake_name}",
        f"-DCMAKE_CXX_COMPILER:FILEPATH={tools.cxx}",
        "-DCMAKE_CXX_FLAGS:STRING=",
        "-DCMAKE_MODULE_LINKER_FLAGS:STRING=",
    ]  # fmt: skip
    if "CUDA" in plan.languages:
        assert tools.nvcc is not None
        command += [
            f"-DCMAKE_CUDA_COMPILER:FILEPATH={tools.nvcc}",
            f"-DCMAKE_CUDA_HOST_COMPILER:FILEPATH={tools.cxx}",
            "-DCMAKE_CUDA_FLAGS:STRING=",
        ]
        if compiler.cuda_architectures is not None:
            command.append(f"-DCMAKE_CUDA_ARCHITECTURES:STRING={compiler.cuda_architectures}")
    return command


def _ninja_command(plan: BuildPlan, build: Path) -> list[str]:
    jobs = [] if plan.compiler.jobs is None else ["-j", str(plan.compiler.jobs)]
    return [plan.tools.ninja, "-C", str(build), *jobs]


def _cmake_cache_entries(path: Path) -> list[tuple[str, str, str]]:
    """(name, type, value) of each entry of a CMakeCache.txt."""
    entries = []
    for line in path.read_text().splitlines():
        match = re.fullmatch(r"([A-Za-z0-9_.+-]+):([A-Z]+)=(.*)", line)
        if match is not None:
            entries.append((match[1], match[2], match[3]))
    return entries


def _cmake_quote(text: str) -> str:
    """`text` as one quoted CMake argument."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'"{escaped}"'


def _check_cmake_safe(name: str, values: Sequence[str]) -> None:
    for value in values:
        if ";" in value or "\n" in value:
            raise ValueError(
                f"CMakeCompiler.{name}: {value!r} contains ';' or a newline, which CMake "
                "would split; pass each flag as its own string"
            )


# --- running and logging ------------------------------------------------------------------


class _Log:
    """The build log of one folder: every command and its output, kept on disk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: TextIO | None = None

    def __enter__(self) -> _Log:
        self._file = self.path.open("a")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._file is not None
        self._file.close()

    def run(self, command: list[str], what: str) -> None:
        """Run `command`, its output appended to the log; CompilationError if it fails."""
        assert self._file is not None
        self._file.write(f"$ {' '.join(command)}\n")
        self._file.flush()
        start = self._file.tell()
        try:
            done = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                stdout=self._file,
                stderr=subprocess.STDOUT,
                env=build_environment(),
                check=False,
            )
        except OSError as error:
            raise CompilationError(
                f"{what} failed: cannot run {command[0]}: {error}", "", self.path
            ) from error
        self._file.seek(0, os.SEEK_END)
        if done.returncode != 0:
            self._file.write(f"[exit status {done.returncode}]\n")
            self._file.flush()
            with self.path.open("rb") as file:
                file.seek(start)
                output = file.read().decode(errors="replace")
            raise CompilationError(f"{what} failed", compiler_message(output), self.path)
