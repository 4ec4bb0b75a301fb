"""DaCe's CMake build of a generated program folder, run by the build's BuildRunner.

DaCe's `configure_and_compile` runs `cmake` and `ninja` by name from this process's PATH,
which finds the system's (a system CMake may be too old for nvcc's C++20, as 3.25 is).
Instead of pointing os.environ at the Python packages' tools, this module runs the very
commands DaCe would run (its CMakeLists, its flags, its configure cache, its replay of a
recorded build, its precompiled runtime header) through the runner, whose explicit
environment puts the packages' tools first on PATH.

Two halves: `prepare` reads DaCe's configuration and precompiles DaCe's header (under
the DaCe lock and the build's DaCe settings: neither is thread-safe); `build` runs the
processes and may run beside other builds of this process.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import threading
from pathlib import Path

from stencilchain.steps.build.runner import BuildRunner

# DaCe's caches (configure results, recorded builds) stage a new entry under a name made
# of the process id: two threads of one process publishing at once would share it.
_PUBLISH_LOCK = threading.Lock()


@dataclasses.dataclass(frozen=True)
class NativeBuild:
    """The commands of DaCe's build of one program folder, and DaCe's caches around them.

    `configure` and `build` are DaCe's command lines (shell commands, as DaCe runs them);
    `recipe` is a recorded build of the same shape that DaCe accepted for this program
    (replayed instead of running CMake), `recorded` whether one was found at all.
    """

    program_folder: str
    program_name: str
    build_folder: str
    library: Path
    configure: str
    build: str
    jobs: int
    configure_key: str
    command_key: str
    cache_root: str
    reuse_configure: bool
    reuse_commands: bool
    recorded: bool
    recipe: tuple[dict[str, str], ...] | None


def prepare(program_folder: Path, program_name: str) -> NativeBuild:
    """The build DaCe's `configure_and_compile` would run for `program_folder`, in the
    same steps (see dace/codegen/compiler.py); runs nothing but DaCe's header precompile.
    Call it with DaCe's configuration of the build in place."""
    import dace.library
    from dace.codegen import command_db
    from dace.codegen import compiler as dc
    from dace.codegen.target import TargetCodeGenerator
    from dace.config import Config

    folder = os.path.abspath(program_folder)
    src_folder = os.path.join(folder, "src")
    build_folder = os.path.join(folder, "build")
    os.makedirs(build_folder, exist_ok=True)
    with open(os.path.join(folder, "dace_files.csv")) as file:
        file_list = [line.strip().split(",") for line in file]
    files: list[str] = []
    targets = {}
    for target_name, target_type, file_name in file_list:
        parts = (target_name, target_type, file_name) if target_type else (target_name, file_name)
        files.append(os.path.join(*parts))
        targets[target_name] = next(
            k for k, v in TargetCodeGenerator.extensions().items() if v["name"] == target_name
        )
    dace_path = os.path.dirname(os.path.dirname(os.path.abspath(dc.__file__)))
    command = [
        "cmake",
        "",  # DaCe's slot for Windows' "-A x64": kept, so that the text (and key) is DaCe's
        "-G Ninja",  # the runner's PATH always has the Ninja of its Python package
        '"' + os.path.join(dace_path, "codegen") + '"',
        f'-DDACE_SRC_DIR="{src_folder}"',
        '-DDACE_FILES="{}"'.format(";".join(files)),
        f"-DDACE_PROGRAM_NAME={program_name}",
        "-DDACE_CPP_STANDARD={}".format(Config.get("compiler", "cpp_standard")),
    ]
    with open(os.path.join(folder, "dace_environments.csv")) as file:
        environments = dace.library.get_environments_and_dependencies(
            {line.strip() for line in file}
        )
    environment_flags, link_flags = dc.get_environment_flags(environments)
    command += sorted(environment_flags)
    command += shlex.split(Config.get("compiler", "extra_cmake_args"))
    command = [part.replace("\\", "/") for part in command]
    libraries: set[str] = set()
    cmake_files: list[str] = []
    for target_name, target in sorted(targets.items()):
        try:
            command += target.cmake_options()
            cmake_files += target.cmake_files()
            libraries |= dc.unique_flags(Config.get("compiler", target_name, "libs"))
        except KeyError:
            pass
    command.append('-DDACE_LIBS="{}"'.format(" ".join(sorted(libraries))))
    command.append(f'-DDACE_CMAKE_FILES="{";".join(cmake_files)}"')
    command.append(f"-DCMAKE_BUILD_TYPE={Config.get('compiler', 'build_type')}")
    command.append("-DCMAKE_EXPORT_COMPILE_COMMANDS=ON")
    linker = (Config.get("compiler", "linker", "executable") or "").strip()
    if linker:
        command.append(f'-DCMAKE_LINKER="{dc.make_absolute(linker)}"')
    all_link_flags = (
        " ".join(sorted(link_flags)) + " " + (Config.get("compiler", "linker", "args") or "")
    ).strip()
    if all_link_flags:
        command.append(f'-DCMAKE_SHARED_LINKER_FLAGS="{all_link_flags}"')
    command.append(f'-DDACE_PCH_DIR="{dc.prepare_precompiled_header(targets) or ""}"')
    # DaCe's keys: what the configure discovers, and what a recorded build replays
    naming = ("-DDACE_SRC_DIR=", "-DDACE_FILES=", "-DDACE_PROGRAM_NAME=")
    shape = [part for part in command if not part.startswith(naming)]
    configure_key = dc.cache_key(*shape, *sorted({os.path.dirname(f) for f in files}))
    cmake_sources = sorted({p for c in shape for p in re.findall(r'[^"=;\s]+\.cmake', c)})
    cmake_sources.append(os.path.join(dace_path, "codegen", "CMakeLists.txt"))
    command_key = dc.cache_key(
        *shape,
        *[f.replace(program_name, "$NAME") for f in files],
        *(dc.newest_mtime(p) for p in cmake_sources),
    )
    cache_root = dc.build_cache_root()
    reuse_commands = dc.CACHES_SUPPORTED and Config.get_bool("compiler", "command_cache")
    recorded = command_db.load(cache_root, command_key) if reuse_commands else None
    recipe = (
        command_db.accepts(recorded, build_folder, folder, program_name, files)
        if recorded
        else None
    )
    if recipe is not None:
        recipe = [entry for entry in recipe if not _builds_stub(entry, program_name)]
    jobs = max(1, int(Config.get("compiler", "build_jobs")))
    library = dc.get_binary_name(
        object_folder=folder, sdfg_name=program_name, folder_mode="development"
    )
    return NativeBuild(
        program_folder=folder,
        program_name=program_name,
        build_folder=build_folder,
        library=Path(library),
        configure=" ".join(command),
        build=(
            f"cmake --build . --config {Config.get('compiler', 'build_type')} --parallel {jobs}"
            f" --target {program_name}"
        ),
        jobs=jobs,
        configure_key=configure_key,
        command_key=command_key,
        cache_root=cache_root,
        reuse_configure=dc.CACHES_SUPPORTED and Config.get_bool("compiler", "configure_cache"),
        reuse_commands=reuse_commands,
        recorded=bool(recorded),
        recipe=None if recipe is None else tuple(recipe),
    )


def _builds_stub(entry: dict[str, str], program_name: str) -> bool:
    """Whether the recorded command `entry` builds DaCe's stub library of the program (for
    DaCe's own ctypes loader; the shim dlopens the program's library itself)."""
    stub = f"dacestub_{program_name}"
    output = entry.get("output", "")
    return output == f"lib{stub}.so" or output.startswith(f"CMakeFiles/{stub}.dir/")


def build(native: NativeBuild, runner: BuildRunner, ninja: str) -> Path:
    """Run `native` (a recorded build replayed, else CMake's configure and build, which
    is then recorded); the library's path. `ninja` reads the build's commands back."""
    from dace.codegen import command_db

    folder = native.build_folder
    if native.recipe is not None:
        replayed = command_db.replay(list(native.recipe), folder, native.jobs)
        runner.note(
            f"DaCe replayed its recorded build of this shape ({len(native.recipe)} commands"
            + ("):\n" if replayed else ", one failed: building with CMake):\n")
            + "\n".join(entry["command"] for entry in native.recipe)
        )
        if replayed:
            return native.library
    if native.recorded:
        command_db.drop(native.cache_root, native.command_key)
    if native.recipe is not None:
        command_db.clear(folder)
    _configure(native, runner)
    runner.run(
        ["/bin/sh", "-c", native.build],
        f"DaCe's build of the SDFG {native.program_name!r}",
        cwd=Path(folder),
    )
    if native.reuse_commands:
        _record(native, runner, ninja)
    return native.library


def _configure(native: NativeBuild, runner: BuildRunner) -> None:
    """DaCe's `run_cmake` configure: seeded from an earlier configure of the same shape
    and published for the next one; a failure is retried once from an empty folder."""
    from dace.codegen import compiler as dc

    folder, key = native.build_folder, native.configure_key
    what = f"DaCe's CMake configure of the SDFG {native.program_name!r}"
    command = ["/bin/sh", "-c", native.configure]
    seeded = native.reuse_configure and dc.seed_cmake_configure(folder, key)
    if runner.run(command, what, cwd=Path(folder), check=False):
        if native.reuse_configure and not seeded:
            with _PUBLISH_LOCK:
                dc.publish_cmake_configure(folder, key)
    else:
        if seeded:  # a bad seed would fail every later build of this shape
            shutil.rmtree(os.path.join(native.cache_root, "configure", key), ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        runner.run(command, what, cwd=Path(folder))
    Path(folder, "cmake_configure.sh").write_text(native.configure)


def _record(native: NativeBuild, runner: BuildRunner, ninja: str) -> None:
    """Record the commands Ninja ran (DaCe's `command_db.capture`), for later programs of
    this shape; advisory, like DaCe's: a report that cannot be read records nothing."""
    from dace.codegen import command_db

    report = runner.output(
        [ninja, "-t", "compdb"], "reading the build's commands", cwd=Path(native.build_folder)
    )
    try:
        entries = json.loads(report) if report is not None else []
    except ValueError:
        entries = []
    # commandless rules are phony; the build.ninja rule reruns CMake, which a replay skips
    kept = [e for e in entries if e.get("command") and e.get("output") != "build.ninja"]
    recipe = command_db.template(
        kept, native.build_folder, native.program_folder, native.program_name
    )
    with _PUBLISH_LOCK:
        command_db.publish(native.cache_root, native.command_key, recipe)
