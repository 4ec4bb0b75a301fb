"""The CMake project of a GTFN extension: its CMakeLists.txt, the configure and Ninja
commands, the one-time "toolchain" folder each build starts from, and the precompiled
pybind11 header.

Speed (a new program should build in about half a second on two cores):
- a one-time "toolchain" folder per tool set holds CMake's compiler detection and the
  OpenMP search; each build starts from a copy of it, so CMake skips both (CMake reuses
  these files the same way between its own configure runs);
- the program unit, which holds the loops, gets the build type's flags (Release: -O3);
  the bindings unit is glue and gets `bindings_optimization` (-O1), which takes about a
  third off a pybind11 unit for a call path a few nanoseconds slower;
- bindings using pybind11 get a precompiled `<pybind11/pybind11.h>`, built once per build
  context; GCC uses it only where it is exact (it checks flags and macros itself);
- the two units compile in parallel, and CMake/Ninja run directly (no find_package of
  Python or pybind11 per build: their include folders are passed in).

Longer than most modules: it writes a single program's project and a batch's (ADR 0036,
0063), which share the toolchain folder, the units' flags and the precompiled headers.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from stencilchain._version import package_version
from stencilchain.program.hashing import sha256_of
from stencilchain.steps.build.precompiled import prelude_of
from stencilchain.steps.build.runner import BuildRunner
from stencilchain.steps.build.tools import (
    BuildEnvironment,
    Tools,
    build_environment,
    python_build_info,
)
from stencilchain.steps.caches.build_cache import BuildCache, BuildResult
from stencilchain.steps.settings import BuildType

TARGET = "sc_module"
PCH_HEADER = "pybind11/pybind11.h"
PRELUDE_HEADER = "sc_prelude.h"
# Cache entries the toolchain folder found and each build is given back: FindOpenMP's
# results (it then skips its try-compiles) and the CUDA architectures CMake detected.
_CARRIED_CACHE = re.compile(
    r"OpenMP_(CXX_FLAGS|CXX_LIB_NAMES|CXX_SPEC_DATE|\w+_LIBRARY)|CMAKE_CUDA_ARCHITECTURES"
)


# Flags of the program unit (the loops), after -fwrapv: see `_unit_options`.
PROGRAM_UNIT_FLAGS = (
    "-fno-trapping-math",
    "-fno-tree-loop-distribute-patterns",
    "-ffp-contract=off",
    "-fno-predictive-commoning",
)


@dataclasses.dataclass(frozen=True)
class CMakeProject:
    """What the CMake project of one build depends on besides its sources: the tools, the
    languages ("CXX", "CUDA"), the flags, the libraries; `context_digest` identifies the
    build context (the precompiled header is shared by the builds of one context)."""

    tools: Tools
    build_type: BuildType
    languages: tuple[str, ...]
    openmp: bool
    libraries: tuple[str, ...]
    extra_flags: tuple[str, ...]
    cuda_flags: tuple[str, ...]
    bindings_optimization: str | None
    cuda_architectures: str | None
    jobs: int | None
    context_digest: str
    native_cpu: bool = False  # the program unit for the building host's CPU (-march=native)
    # what the build's processes run with (None: this process's); changes no output
    environment: BuildEnvironment | None = dataclasses.field(
        default=None, repr=False, compare=False
    )


@dataclasses.dataclass(frozen=True)
class Unit:
    """One source file of the module: its language ("cpp" or "cuda") and role."""

    file: str
    language: str
    bindings: bool
    header: bool = False
    prelude: Path | None = None  # its system headers, precompiled (`precompiled_prelude`)


@dataclasses.dataclass(frozen=True)
class Timings:
    """Seconds spent configuring (CMake) and compiling (Ninja) one build."""

    configure: float
    compile: float


def build_project(
    project: CMakeProject,
    cache: BuildCache,
    folder: Path,
    *,
    module_name: str | None,
    units: Sequence[Unit],
    pch_dir: Path | None,
    what: str,
    targets: Sequence[str] = (),
) -> Timings:
    """Configure and build the project of `units` (in `folder`/src) in `folder`/build,
    starting from the toolchain folder; `targets` limits Ninja to those outputs."""
    src, build = folder / "src", folder / "build"
    (src / "CMakeLists.txt").write_text(cmake_lists(project, module_name, units, pch_dir))
    toolchain = toolchain_folder(project, cache)
    platform_args = _reuse_platform(toolchain, build)
    with BuildRunner(folder, build_environment(project.environment)) as runner:
        start = time.perf_counter()
        runner.run([*configure_command(project, src, build), *platform_args], f"configuring {what}")
        configured = time.perf_counter()
        runner.run([*ninja_command(project, build), *targets], f"compiling {what}")
        done = time.perf_counter()
    return Timings(configure=configured - start, compile=done - configured)


def toolchain_folder(project: CMakeProject, cache: BuildCache) -> BuildResult:
    """The one-time folder of `project`'s tool set and languages: CMake's compiler
    detection and the OpenMP search, configured once for an empty project."""
    digest = sha256_of(
        "stencilchain-toolchain/1",
        package_version(),
        project.tools.identity,
        *project.languages,
        f"openmp={project.openmp}",
        f"cuda_architectures={project.cuda_architectures}",
        *((f"salt={cache.salt}",) if cache.salt else ()),
    )
    return cache.get_or_build(
        f"toolchain-{digest[:32]}", functools.partial(_build_toolchain, project)
    )


def precompiled_header(project: CMakeProject, cache: BuildCache) -> Path:
    """The folder holding `pybind11/pybind11.h.gch` for `project`'s bindings units (built
    once per build context); builds put it first on the include path."""
    pch = cache.get_or_build(
        f"pch-{project.context_digest[:32]}", functools.partial(_build_pch, project, cache)
    )
    return pch.folder / pch.metadata["include_dir"]


def cmake_lists(
    project: CMakeProject, module_name: str | None, units: Sequence[Unit], pch_dir: Path | None
) -> str:
    """The CMakeLists.txt of one module; per-unit flags, so one rule serves both units."""
    lines = _project_lines(project, "stencilchain_extension")
    lines += _target_lines(project, TARGET, module_name, units, pch_dir, output=module_name)
    return "\n".join(lines) + "\n"


def _project_lines(project: CMakeProject, name: str) -> list[str]:
    """The start of a CMakeLists.txt: the version, the project, OpenMP."""
    lines = [
        "cmake_minimum_required(VERSION 3.20)",
        f"project({name} LANGUAGES {' '.join(project.languages)})",
    ]
    if project.openmp:
        lines.append("find_package(OpenMP REQUIRED COMPONENTS CXX)")
    return lines


def _target_lines(
    project: CMakeProject,
    target: str,
    module_name: str | None,
    units: Sequence[Unit],
    pch_dir: Path | None,
    *,
    output: str | None,
    kind: str = "MODULE",
) -> list[str]:
    """The CMake target `target` of one module's `units` (a MODULE named `output`, or
    "_sc_pch" if None; or an OBJECT library), with the flags of each unit."""
    info = python_build_info()
    includes = [info["python_include"]]
    if "pybind11" in project.libraries:
        includes.append(info["pybind11_include"])
    q = _quote
    lines = [
        f"add_library({target} {kind} {' '.join(q(u.file) for u in units)})",
        f"set_target_properties({target} PROPERTIES",
    ]
    if kind == "MODULE":
        lines.append(
            f'  OUTPUT_NAME {q(output or "_sc_pch")} PREFIX "" SUFFIX {q(info["ext_suffix"])}'
        )
    lines += [
        '  DEFINE_SYMBOL "" POSITION_INDEPENDENT_CODE ON',
        "  CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF",
        "  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON",
    ]
    if "CUDA" in project.languages:
        lines += [
            "  CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF",
            "  CUDA_VISIBILITY_PRESET hidden",
        ]
        if project.cuda_architectures is not None:
            lines.append(f"  CUDA_ARCHITECTURES {q(project.cuda_architectures)}")
    lines += [
        ")",
        f"target_include_directories({target} SYSTEM PRIVATE {' '.join(map(q, includes))})",
    ]
    if module_name is not None:  # absent from the precompiled header, which GCC then accepts
        lines.append(
            f"target_compile_definitions({target} PRIVATE STENCILCHAIN_MODULE_NAME={module_name})"
        )
    if project.openmp:
        lines.append(f"target_link_libraries({target} PRIVATE OpenMP::OpenMP_CXX)")
    for unit in units:
        options = _unit_options(project, unit, pch_dir)
        if unit.header:
            lines.append(f"set_source_files_properties({q(unit.file)} PROPERTIES LANGUAGE CXX)")
        if options:
            lines.append(
                f"set_property(SOURCE {q(unit.file)} APPEND PROPERTY COMPILE_OPTIONS "
                f"{' '.join(map(q, options))})"
            )
    return lines


def configure_command(project: CMakeProject, src: Path, build: Path) -> list[str]:
    """CMake's configure of `src` into `build`, with the tools and no flags of its own."""
    tools = project.tools
    command = [
        tools.cmake,
        "-S", str(src),
        "-B", str(build),
        "-G", "Ninja",
        f"-DCMAKE_MAKE_PROGRAM:FILEPATH={tools.ninja}",
        f"-DCMAKE_BUILD_TYPE:STRING={project.build_type.cmake_name}",
        f"-DCMAKE_CXX_COMPILER:FILEPATH={tools.cxx}",
        "-DCMAKE_CXX_FLAGS:STRING=",
        "-DCMAKE_MODULE_LINKER_FLAGS:STRING=",
    ]  # fmt: skip
    if "CUDA" in project.languages:
        assert tools.nvcc is not None
        command += [
            f"-DCMAKE_CUDA_COMPILER:FILEPATH={tools.nvcc}",
            f"-DCMAKE_CUDA_HOST_COMPILER:FILEPATH={tools.cxx}",
            "-DCMAKE_CUDA_FLAGS:STRING=",
        ]
        if project.cuda_architectures is not None:
            command.append(f"-DCMAKE_CUDA_ARCHITECTURES:STRING={project.cuda_architectures}")
    return command


def ninja_command(project: CMakeProject, build: Path) -> list[str]:
    """Ninja's build of the configured `build` folder."""
    jobs = [] if project.jobs is None else ["-j", str(project.jobs)]
    return [project.tools.ninja, "-C", str(build), *jobs]


def _unit_options(project: CMakeProject, unit: Unit, pch_dir: Path | None) -> list[str]:
    """Flags of one unit, after the build type's: integers wrap like NumPy's (-fwrapv).
    The program unit also gets -fno-trapping-math: no value changes, but GCC may then turn
    a select on a floating-point comparison into a blend and vectorize the loop (else the
    comparison "may trap" and the loop has control flow); and
    -fno-tree-loop-distribute-patterns: a copy loop stays a vector loop instead of a
    `memmove` per row, which glibc runs as `rep movsb` from 2 KiB on, at half the
    bandwidth on this machine's AMD cores (a Fortran-order 256x256x80 copy: 2.4x slower);
    and -ffp-contract=off: `a * b + c` stays two roundings, as NumPy computes it, also where
    the CPU has fused multiply-adds (`native_cpu`: -march=native); and
    -fno-predictive-commoning: GCC 12.2 at -O3 drops the rounding of `(double)(float)x`
    where predictive commoning has carried a load into the next iteration and the SLP
    vectorizer then vectorizes the unrolled body (ADR 0041)."""
    if unit.language == "cuda":
        return ["-Xcompiler=-fwrapv", *project.cuda_flags]
    options = ["-fwrapv", *project.extra_flags]
    if not unit.bindings:  # the program unit, or the header precompiled for it
        options += PROGRAM_UNIT_FLAGS
        if project.native_cpu:
            options.append("-march=native")
    if unit.bindings and project.bindings_optimization is not None:
        options.append(project.bindings_optimization)
    if unit.header:
        options += ["-x", "c++-header"]
    if pch_dir is not None and unit.bindings:
        # -I folders are searched before the -isystem pybind11 folder: GCC finds the .gch
        options += [f"-I{pch_dir}", "-Winvalid-pch"]
    if unit.prelude is not None:
        options += ["-include", str(unit.prelude), "-Winvalid-pch"]
    return options


def _build_toolchain(project: CMakeProject, folder: Path) -> dict[str, str]:
    """Configure an empty project once: CMake's compiler detection and the OpenMP search."""
    src, build = folder / "src", folder / "build"
    src.mkdir()
    lines = [
        "cmake_minimum_required(VERSION 3.20)",
        f"project(stencilchain_toolchain LANGUAGES {' '.join(project.languages)})",
    ]
    if project.openmp:
        lines.append("find_package(OpenMP REQUIRED COMPONENTS CXX)")
    (src / "CMakeLists.txt").write_text("\n".join(lines) + "\n")
    with BuildRunner(folder, build_environment(project.environment)) as runner:
        runner.run(configure_command(project, src, build), "setting up the CMake toolchain")
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


def _reuse_platform(toolchain: BuildResult, build: Path) -> list[str]:
    """Copy the toolchain's detection files into `build`; the CMake arguments that use them."""
    args: list[str] = json.loads(toolchain.metadata.get("cache_args", "[]"))
    platform = toolchain.metadata.get("platform_dir", "")
    if platform:
        target = build / "CMakeFiles" / Path(platform).name
        target.mkdir(parents=True)
        for file in (toolchain.folder / platform).iterdir():
            if file.is_file():
                shutil.copy2(file, target / file.name)
        # CMake loads CMakeFiles/<version>/ only in a tree it marked as initialized
        args.append("-DCMAKE_PLATFORM_INFO_INITIALIZED:INTERNAL=1")
    return args


def _build_pch(project: CMakeProject, cache: BuildCache, folder: Path) -> dict[str, str]:
    """Precompile `<pybind11/pybind11.h>` with exactly the flags of a bindings unit, as
    `pybind11/pybind11.h.gch` in a folder that builds put first on the include path."""
    gch = folder / "include" / (PCH_HEADER + ".gch")
    _precompile(project, cache, folder, f"#include <{PCH_HEADER}>\n", True, gch)
    return {"include_dir": "include"}


def _precompile(
    project: CMakeProject, cache: BuildCache, folder: Path, text: str, bindings: bool, gch: Path
) -> None:
    """Compile the header `text` into `gch` as a unit of a project generated like every
    build (so CMake adds the flags of a unit of that role, bindings or program)."""
    stub = "pch_stub.cpp"
    (folder / "src").mkdir()
    (folder / "src" / stub).write_text(text)
    obj = f"CMakeFiles/{TARGET}.dir/{stub}.o"
    build_project(
        project,
        cache,
        folder,
        module_name=None,
        units=[Unit(stub, "cpp", bindings=bindings, header=True)],
        pch_dir=None,
        what="precompiled system headers",
        targets=[obj],
    )
    gch.parent.mkdir(parents=True, exist_ok=True)
    os.replace(folder / "build" / obj, gch)
    shutil.rmtree(folder / "build", ignore_errors=True)


def precompiled_prelude(
    project: CMakeProject, cache: BuildCache, unit: Unit, source: str
) -> Path | None:
    """The header to `-include` in C++ `unit` (whose text is `source`): the unit's system
    headers (`build.precompiled.prelude_of`), precompiled with exactly the unit's flags
    once per build context, role and prelude. None where the unit has no prelude. Parsing
    those headers is most of a small unit's compile time (<Python.h> for the bindings)."""
    prelude = prelude_of(source)
    if not prelude or unit.language != "cpp":
        return None
    role = "bindings" if unit.bindings else "program"
    digest = sha256_of("stencilchain-gtfn-prelude/1", project.context_digest, role, prelude)
    build = functools.partial(_build_prelude, project, cache, prelude, unit.bindings)
    result = cache.get_or_build(f"pch-{digest[:32]}", build)
    header = result.folder / result.metadata.get("include_dir", "") / PRELUDE_HEADER
    complete = header.is_file() and header.with_name(PRELUDE_HEADER + ".gch").is_file()
    return header if complete else None


def _build_prelude(
    project: CMakeProject, cache: BuildCache, prelude: str, bindings: bool, folder: Path
) -> dict[str, str]:
    """Precompile `prelude` for a unit of this role as `include/sc_prelude.h(.gch)`."""
    include = folder / "include"
    _precompile(project, cache, folder, prelude, bindings, include / (PRELUDE_HEADER + ".gch"))
    (include / PRELUDE_HEADER).write_text(prelude)
    return {"include_dir": "include"}


def _cmake_cache_entries(path: Path) -> list[tuple[str, str, str]]:
    """(name, type, value) of each entry of a CMakeCache.txt."""
    entries = []
    for line in path.read_text().splitlines():
        match = re.fullmatch(r"([A-Za-z0-9_.+-]+):([A-Z]+)=(.*)", line)
        if match is not None:
            entries.append((match[1], match[2], match[3]))
    return entries


def _quote(text: str) -> str:
    """`text` as one quoted CMake argument."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'"{escaped}"'


@dataclasses.dataclass(frozen=True)
class BatchMember:
    """One module of a batch build: its name and its units (in `folder`/src); `shared`:
    the start of the (C++ mangled) name of the function by which the batch's shared
    bindings unit calls its program unit (its own bindings unit is then left out), None
    where the member's bindings are its own unit."""

    module_name: str
    units: tuple[Unit, ...]
    shared: str | None = None


@dataclasses.dataclass(frozen=True)
class SharedBindings:
    """The one bindings unit of several members of a batch (`steps.cpp.shared_unit`)."""

    unit: Unit


SHARED_TARGET = "sc_bindings"


BATCH_TARGET = "sc_batch"
SEAL_SCRIPT = "sc_seal.sh"
# A member's relocatable object, sealed: its hidden symbols made local (out of their COMDAT
# groups, which a later link would otherwise discard from all members but one), and its
# GNU-unique ones (function-local statics of inline code) weak, so that members' copies
# merge as a link of one module merges its units'. $1 objcopy, $2 readelf, $3 the object,
# $4 (if any) the start of the names of the symbols that stay global (still hidden in the
# library; not its clones such as `<name>._omp_fn.0`): the program unit's function that the
# batch's shared bindings unit calls. One readelf and one objcopy (a process costs CPU
# time that counts per program); objcopy cannot read an empty list.
_SEAL = """set -e
obj=$3
rm -f "$obj.local" "$obj.unique"
"$2" -sW "$obj" | awk -v keep="$4" -v obj="$obj" '
  $7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK" || $5 == "UNIQUE") {
    kept = keep != "" && index($8, keep) == 1 && index($8, ".") == 0
    if (($6 == "HIDDEN" || $6 == "INTERNAL") && !kept) print $8 > (obj ".local")
    else if ($5 == "UNIQUE") print $8 > (obj ".unique")
  }'
set -- "$1" -R .group
if [ -s "$obj.local" ]; then set -- "$@" "--localize-symbols=$obj.local"; fi
if [ -s "$obj.unique" ]; then set -- "$@" "--weaken-symbols=$obj.unique"; fi
"$@" "$obj"
"""


def batch_cmake_lists(
    project: CMakeProject,
    members: Sequence[BatchMember],
    output_name: str,
    kept: Sequence[int] | None = None,
    shared: SharedBindings | None = None,
) -> str:
    """The CMakeLists.txt of several modules linked into one library `output_name`: the
    `kept` members (their indices; None: all), member k as the targets `sc_member_k`;
    with `shared`, the bindings of the members that have a `shared` symbol are that one
    unit (the target `sc_bindings`) instead of theirs.

    Each member's units compile as they do alone (an OBJECT library with the flags of a
    module's target); the two objects are linked into one relocatable object (`ld -r`,
    which resolves the member's own symbols as its own link would), whose hidden symbols
    `objcopy` then makes local (so no member's internals meet another's; see _SEAL) but
    the program's function that the shared bindings call; one link then makes the
    library, which exports each member's `PyInit_<module>`. A strong symbol that two
    members define makes the link fail: nothing of the batch is used."""
    q = _quote
    lines = _project_lines(project, "stencilchain_batch")
    lines += [
        'get_filename_component(SC_BINUTILS "${CMAKE_LINKER}" DIRECTORY)',
        'find_program(SC_OBJCOPY objcopy HINTS "${SC_BINUTILS}" REQUIRED)',
        'find_program(SC_READELF readelf HINTS "${SC_BINUTILS}" REQUIRED)',
    ]
    targets: list[tuple[str, str | None, tuple[Unit, ...], str]] = []
    for index in range(len(members)) if kept is None else kept:
        member = members[index]
        if shared is not None and member.shared is not None:
            units = tuple(unit for unit in member.units if not unit.bindings)
            targets.append((f"sc_member_{index}", member.module_name, units, member.shared))
        else:
            targets.append((f"sc_member_{index}", member.module_name, member.units, ""))
    if shared is not None:
        targets.append((SHARED_TARGET, None, (shared.unit,), ""))
    objects = []
    for target, module_name, units, keep in targets:
        lines += _target_lines(
            project, target, module_name, units, None, output=None, kind="OBJECT"
        )
        # a CMake variable, so not `_quote`d (which escapes `$`); the target is a C name
        relocatable = f'"${{CMAKE_CURRENT_BINARY_DIR}}/{target}.o"'
        objects.append(relocatable)
        lines += [
            f"add_custom_command(OUTPUT {relocatable}",
            f'  COMMAND "${{CMAKE_LINKER}}" -r -o {relocatable} "$<TARGET_OBJECTS:{target}>"',
            f'  COMMAND /bin/sh "${{CMAKE_CURRENT_SOURCE_DIR}}/{SEAL_SCRIPT}" "${{SC_OBJCOPY}}"'
            f' "${{SC_READELF}}" {relocatable} {q(keep)}',
            f'  DEPENDS "$<TARGET_OBJECTS:{target}>" COMMAND_EXPAND_LISTS VERBATIM)',
        ]
    info = python_build_info()
    lines += [
        f"add_library({BATCH_TARGET} MODULE {' '.join(objects)})",
        f"set_source_files_properties({' '.join(objects)} PROPERTIES "
        "EXTERNAL_OBJECT TRUE GENERATED TRUE)",
        f"set_target_properties({BATCH_TARGET} PROPERTIES",
        f'  OUTPUT_NAME {q(output_name)} PREFIX "" SUFFIX {q(info["ext_suffix"])}',
        "  LINKER_LANGUAGE CXX POSITION_INDEPENDENT_CODE ON",
        ")",
    ]
    if project.openmp:
        lines.append(f"target_link_libraries({BATCH_TARGET} PRIVATE OpenMP::OpenMP_CXX)")
    return "\n".join(lines) + "\n"


def build_batch_project(
    project: CMakeProject,
    cache: BuildCache,
    folder: Path,
    *,
    members: Sequence[BatchMember],
    output_name: str,
    what: str,
    shared: SharedBindings | None = None,
) -> tuple[list[int], bool, Timings]:
    """Configure and build `members` (their units in `folder`/src) into one library
    `folder`/build/`output_name`<ext_suffix>, with one CMake configure and one Ninja run
    that keeps going past a failed unit, the bindings of the members with a `shared`
    symbol as the one unit `shared`; the members it holds (their indices), whether their
    bindings are the shared unit, and the times. If a unit fails to compile and the
    bindings were shared, every member gets its own bindings unit again (the objects built
    are kept); if a member then fails to compile, the library is linked again without it;
    if that fails too, or the link fails for another reason, CompilationError: nothing of
    the batch is used."""
    src, build = folder / "src", folder / "build"
    kept = list(range(len(members)))
    (src / SEAL_SCRIPT).write_text(_SEAL)
    (src / "CMakeLists.txt").write_text(
        batch_cmake_lists(project, members, output_name, None, shared)
    )
    toolchain = toolchain_folder(project, cache)
    platform_args = _reuse_platform(toolchain, build)
    with BuildRunner(folder, build_environment(project.environment)) as runner:
        start = time.perf_counter()
        runner.run([*configure_command(project, src, build), *platform_args], f"configuring {what}")
        configured = time.perf_counter()
        ninja = [*ninja_command(project, build), "-k", "0"]
        built = runner.run(ninja, f"compiling {what}", check=False)
        if not built and shared is not None:
            # which member's bindings failed is known only from units of their own
            shared = None
            runner.note("building the batch again with the bindings of each member as its own unit")
            for stale in (
                build / f"{target}.o" for target in (*_member_targets(members), SHARED_TARGET)
            ):
                stale.unlink(
                    missing_ok=True
                )  # sealed for the shared unit; failures are read from them
            (src / "CMakeLists.txt").write_text(batch_cmake_lists(project, members, output_name))
            built = runner.run(
                ninja, f"compiling {what} with bindings units of their own", check=False
            )
        if not built:
            # a member without its relocatable object failed to compile
            failed = {i for i in kept if not (build / f"sc_member_{i}.o").is_file()}
            if not failed or len(failed) == len(kept):
                raise runner.logged_error(f"{what} failed", "see the log above")
            kept = [i for i in kept if i not in failed]
            runner.note(
                "building the batch again without "
                + ", ".join(members[i].module_name for i in sorted(failed))
            )
            # Ninja runs CMake again first (its CMakeLists changed), then only the link
            (src / "CMakeLists.txt").write_text(
                batch_cmake_lists(project, members, output_name, kept)
            )
            runner.run(ninja, f"compiling {what} without its failed members")
        done = time.perf_counter()
    return (
        kept,
        shared is not None,
        Timings(configure=configured - start, compile=done - configured),
    )


def _member_targets(members: Sequence[BatchMember]) -> list[str]:
    return [f"sc_member_{index}" for index in range(len(members))]
