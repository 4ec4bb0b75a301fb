"""The build tools shared by the compilers: the C++ compiler, the CMake and Ninja of their
Python packages, the Python the extensions are built against, and how they are identified
in build keys (cheaply: by path, size and mtime, without running or importing them)."""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import sys
import sysconfig
from pathlib import Path

from stencilchain.errors import CompilationError
from stencilchain.program.hashing import sha256_of

# Variables CMake would read as flags: the build keys do not cover them, so builds drop them.
IGNORED_ENVIRONMENT = (
    "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "CUDAFLAGS", "CUDAARCHS",
    "CC", "CXX", "CUDACXX", "CUDAHOSTCXX",
)  # fmt: skip


@functools.cache
def build_programs() -> tuple[str, str]:
    """The cmake and ninja executables of their Python packages (imported only to build)."""
    import cmake
    import ninja

    return str(Path(cmake.CMAKE_BIN_DIR) / "cmake"), str(Path(ninja.BIN_DIR) / "ninja")


def executable_identity(path: str) -> str:
    # the resolved executable's size and modification time change with any upgrade;
    # `--version` would cost a process start on every cached first call
    real = os.path.realpath(path)
    stat = os.stat(real)
    return sha256_of(path, real, str(stat.st_size), str(stat.st_mtime_ns))


def package_identity(name: str) -> str:
    """The installed Python package `name`: where it is and when it was installed."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise CompilationError(
            f"the Python package {name!r}, which provides the {name} executable, is not installed",
            "",
            None,
        )
    stat = os.stat(spec.origin)
    return f"{spec.origin}:{stat.st_size}:{stat.st_mtime_ns}"


def which(name: str, what: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise CompilationError(f"{what} {name!r} not found (looked on PATH)", "", None)
    return os.path.abspath(found)


@functools.lru_cache(maxsize=1)
def python_build_info() -> dict[str, str]:
    """What the extension is built against: Python headers, ABI suffix, pybind11."""
    import pybind11

    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    return {
        "python_include": sysconfig.get_paths()["include"],
        "ext_suffix": str(suffix) if suffix else ".so",
        "python_version": sys.version,
        "pybind11_include": pybind11.get_include(),
        "pybind11_version": pybind11.__version__,
    }


def compiler_message(output: str, max_lines: int = 60) -> str:
    """The part of a failed command's output that says what went wrong."""
    lines = output.rstrip().splitlines()
    for index, line in enumerate(lines):
        if re.search(r"\berror\b", line, re.IGNORECASE):
            return "\n".join(lines[index : index + max_lines])
    return "\n".join(lines[-max_lines:])


def build_environment() -> dict[str, str]:
    """The environment of CMake and Ninja, without the flag variables CMake would read."""
    return {k: v for k, v in os.environ.items() if k not in IGNORED_ENVIRONMENT}
