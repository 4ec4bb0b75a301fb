"""The pre-built toolchains of `stencilchain.backends`, as the command line uses them.

Each command builds the toolchains it names afresh from the environment (through the
backends' own builders, which call `build_container()`), so that a command configures
them exactly as a library user's first access would, even when `main()` runs several
times in one process. A backend whose construction raises ImportError (a missing extra)
is unavailable, with that message.
"""

from __future__ import annotations

import dataclasses
import functools
import shutil
from typing import Any

from stencilchain import backends
from stencilchain.app.errors import FAILURE, CLIError
from stencilchain.containers.config import suggest
from stencilchain.program.device import Device
from stencilchain.runtime.toolchain import Toolchain

DEFAULT_BACKEND = "run_gtfn_cpu"


@dataclasses.dataclass(frozen=True)
class Backend:
    """A pre-built backend: the object (None when unavailable) and why it is unavailable."""

    name: str
    value: Any
    unavailable: str = ""

    @property
    def toolchain(self) -> Toolchain | None:
        return self.value if isinstance(self.value, Toolchain) else None

    @property
    def family(self) -> str:
        toolchain = self.toolchain
        if toolchain is not None:
            return toolchain.family
        return "embedded" if self.value is not None else _family_of_name(self.name)


def backend_names() -> tuple[str, ...]:
    """Every pre-built backend, in the order `stencilchain.backends.NAMES` lists them."""
    return tuple(backends.NAMES)


def load_backend(name: str) -> Backend:
    """The backend `name`, built now; CLIError if there is no such backend."""
    names = backend_names()
    if name not in names:
        raise CLIError(f"unknown backend {name!r}; {suggest(name, names, 'run_')}")
    try:
        value = _construct(name)
    except ImportError as error:
        return Backend(name, None, str(error) or f"{type(error).__name__} while building {name}")
    return Backend(name, value)


def require_toolchain(name: str) -> Toolchain:
    """The compiling toolchain `name`; CLIError if unknown, unavailable or not compiling."""
    return toolchain_of(load_backend(name))


def toolchain_of(backend: Backend) -> Toolchain:
    """The toolchain of `backend`; CLIError if it is unavailable or compiles nothing."""
    name = backend.name
    if backend.unavailable:
        raise CLIError(f"backend {name} is not available: {backend.unavailable}", FAILURE)
    if backend.toolchain is None:
        compiling = [n for n in backend_names() if n != name]
        raise CLIError(
            f"backend {name} runs programs with NumPy and compiles nothing; "
            f"choose a toolchain: {', '.join(compiling)}"
        )
    return backend.toolchain


def run_problem(backend: Backend) -> str:
    """Why programs of `backend` cannot run here ("" if they can): a GPU toolchain needs
    cupy and a CUDA GPU (compiling needs only nvcc)."""
    if backend.unavailable:
        return backend.unavailable
    toolchain = backend.toolchain
    if toolchain is None or toolchain.device is not Device.GPU:
        return ""
    return gpu_problem()


@functools.cache
def gpu_problem() -> str:
    """Why GPU programs cannot run in this process ("" if they can)."""
    if shutil.which("nvcc") is None:
        return "the CUDA compiler nvcc is not on PATH"
    try:
        import cupy
    except ImportError:
        return "cupy is not installed (pip install 'stencilchain[cuda12]')"
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as error:  # cupy imports without a driver and fails on first use
        return f"no usable CUDA GPU ({type(error).__name__}: {error})"
    return "" if count > 0 else "no CUDA GPU found"


def _construct(name: str) -> Any:
    # A fresh toolchain from the environment now; the module attribute is cached per process.
    return backends.build(name)


def _family_of_name(name: str) -> str:
    parts = name.split("_")
    return parts[1] if len(parts) > 1 and parts[0] == "run" else ""
