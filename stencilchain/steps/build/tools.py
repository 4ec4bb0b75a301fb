"""The tools of a build: the C++ and CUDA compilers, the CMake and Ninja of their Python
packages, the Python the extensions are built against, and what identifies them in build
keys (cheaply: by path, size and mtime, without running or importing them)."""

from __future__ import annotations

import dataclasses
import functools
import importlib.machinery
import importlib.util
import json
import os
import platform
import shutil
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from pathlib import Path

from stencilchain.errors import CompilationError
from stencilchain.program.hashing import sha256_of

# Variables CMake would read as flags: the build keys do not cover them, so builds drop them.
IGNORED_ENVIRONMENT = (
    "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "CUDAFLAGS", "CUDAARCHS",
    "CC", "CXX", "CUDACXX", "CUDAHOSTCXX",
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class BuildEnvironment:
    """The environment variables a build's processes run with: a value that the containers
    read from the process when a container is built (`containers/environment.py`) and hand
    to the compilation step, so that no step reads `os.environ`. The flag variables CMake
    would read (`IGNORED_ENVIRONMENT`) are left out: the build keys do not cover them."""

    variables: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, environ: Mapping[str, str]) -> BuildEnvironment:
        """The build environment of the variables `environ` (without the flag variables)."""
        return cls(tuple((k, v) for k, v in environ.items() if k not in IGNORED_ENVIRONMENT))

    def for_build(self, path_first: Sequence[str] = ()) -> dict[str, str]:
        """The variables as a process takes them, with `path_first` folders first on PATH."""
        env = dict(self.variables)
        if path_first:
            old = env.get("PATH")
            env["PATH"] = os.pathsep.join([*dict.fromkeys(path_first), *([old] if old else [])])
        return env

    @functools.cached_property
    def search_path(self) -> str:
        """Where executables named without a folder are looked up: its PATH (or the system's
        default search path if it has none)."""
        return dict(self.variables).get("PATH", os.defpath)


def search_path(environment: BuildEnvironment | None) -> str | None:
    """The PATH of `environment`; None (this process's PATH) for a step made by hand."""
    return None if environment is None else environment.search_path


@dataclasses.dataclass(frozen=True)
class Tools:
    """The compilers of a build (paths) and what identifies the whole tool set (JSON text,
    part of every build key)."""

    cxx: str
    nvcc: str | None
    identity: str

    @property
    def cmake(self) -> str:
        return package_programs()[0]

    @property
    def ninja(self) -> str:
        return package_programs()[1]


@functools.cache
def find_tools(
    cxx: str, nvcc: str | None, packages: tuple[str, ...], path: str | None = None
) -> Tools:
    """The compilers `cxx` and `nvcc` (names looked up on `path`, None: this process's PATH,
    or paths) and the installed Python `packages` a build uses; looked up once per process
    and path, since every call computes a key, builds or not."""
    cxx_path = which(cxx, "C++ compiler", path)
    nvcc_path = None if nvcc is None else which(nvcc, "CUDA compiler (needed for the GPU)", path)
    identity: dict[str, str | None] = {
        "cxx": executable_identity(cxx_path),
        "nvcc": None if nvcc_path is None else executable_identity(nvcc_path),
    }
    identity.update((name, package_identity(name)) for name in packages)
    return Tools(cxx=cxx_path, nvcc=nvcc_path, identity=json.dumps(identity, sort_keys=True))


@functools.cache
def package_programs() -> tuple[str, str]:
    """The cmake and ninja executables of their Python packages (imported only to build)."""
    import cmake
    import ninja

    return str(Path(cmake.CMAKE_BIN_DIR) / "cmake"), str(Path(ninja.BIN_DIR) / "ninja")


@functools.cache
def host_cpu_identity() -> str:
    """What identifies this host's CPU for code built with -march=native: the vendor, model
    and instruction-set flags of /proc/cpuinfo's first processor (elsewhere, what the
    `platform` module says). Read once per process: a file read, no process start."""
    fields = {"vendor_id", "cpu family", "model", "model name", "flags"}
    try:
        first = _first_processor("/proc/cpuinfo")
    except OSError:
        return sha256_of(platform.machine(), platform.processor())
    lines = [line for line in first.splitlines() if line.split(":", 1)[0].strip() in fields]
    return sha256_of(platform.machine(), *lines)


def _first_processor(path: str) -> str:
    """The first processor's block of `path` (/proc/cpuinfo): read a block at a time up to
    its first blank line, since the kernel makes each processor's entry as it is read (on
    a machine of many cores the whole file costs milliseconds)."""
    text = ""
    with open(path, encoding="utf-8", errors="replace") as file:
        while "\n\n" not in text:
            block = file.read(4096)
            if not block:
                break
            text += block
    return text.split("\n\n", 1)[0]


def executable_identity(path: str) -> str:
    """The executable at `path`, its links followed: the file's device and inode (another
    file when a link points elsewhere, e.g. `update-alternatives`), size and modification
    time (any upgrade). One `stat`: `--version` would cost a process start on every cached
    first call, and `os.path.realpath` a `lstat` per component of every link."""
    stat = os.stat(path)
    parts = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    return sha256_of(path, *map(str, parts))


def package_identity(name: str) -> str:
    """The installed Python package `name`, without importing it: where its `__init__.py`
    (and `version.py`, where it has one) are, their sizes and modification times."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise CompilationError(
            f"the Python package {name!r}, which the build runs, is not installed; "
            f"install it (pip install {name})",
            "",
            None,
        )
    identities = []
    for path in (spec.origin, os.path.join(os.path.dirname(spec.origin), "version.py")):
        try:
            info = os.stat(path)  # one stat per file
        except FileNotFoundError:
            if path == spec.origin:
                raise
            continue
        identities.append(f"{path}:{info.st_size}:{info.st_mtime_ns}")
    return "|".join(identities)


def which(name: str, what: str, path: str | None = None) -> str:
    """The absolute path of the executable `name` (a name on `path`, None: this process's
    PATH, or a path)."""
    found = shutil.which(name, path=path)
    if found is None:
        raise CompilationError(
            f"{what} {name!r} not found (looked on PATH); install it or give its path",
            "",
            None,
        )
    return os.path.abspath(found)


@functools.lru_cache(maxsize=1)
def python_identity() -> str:
    """What identifies the Python an extension is built against, for build keys: the
    interpreter's version and installation, its extension suffix, and pybind11's files
    (as `package_identity`). Cheap, since every cached first call computes a key: it loads
    neither sysconfig's data nor pybind11 (about 2 ms together), which `python_build_info`
    does for a build."""
    return json.dumps(
        {
            "python_version": sys.version,
            "base_prefix": sys.base_prefix,
            "ext_suffix": importlib.machinery.EXTENSION_SUFFIXES[0],
            "pybind11": package_identity("pybind11"),
        },
        sort_keys=True,
    )


@functools.lru_cache(maxsize=1)
def python_build_info() -> dict[str, str]:
    """What an extension is built against: Python headers, ABI suffix, pybind11."""
    import pybind11

    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    return {
        "python_include": sysconfig.get_paths()["include"],
        "ext_suffix": str(suffix) if suffix else ".so",
        "python_version": sys.version,
        "pybind11_include": pybind11.get_include(),
        "pybind11_version": pybind11.__version__,
    }


def build_environment(
    environment: BuildEnvironment | None, path_first: Sequence[str] = ()
) -> dict[str, str]:
    """The explicit environment of a build's processes: `environment` (what the container
    read), with `path_first` folders put first on PATH. It never changes os.environ."""
    if environment is None:
        # The one place below the containers that reads the environment: a compilation step
        # made by hand, not by a container, inherits this process's (as a build always has).
        environment = BuildEnvironment.of(os.environ)
    return environment.for_build(path_first)
