"""The pre-built toolchains, each named by its attribute name, built on first access
from a default container (configured by the environment at that moment).

    smooth.with_backend(stencilchain.backends.run_gtfn_cpu)(f, out, 0.1)

They share one metrics registry (`METRICS`, also each toolchain's `.metrics`) and one
compiled-program pool registry: the process-wide state of the pre-built backends.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stencilchain.program.embedded import EmbeddedBackend, run_embedded

if TYPE_CHECKING:
    from stencilchain.containers.application import ApplicationContainer
    from stencilchain.runtime.metrics import MetricsRegistry
    from stencilchain.runtime.pools import CompiledProgramPools
    from stencilchain.runtime.toolchain import CompiledProgram, Toolchain

    METRICS: MetricsRegistry

    run_gtfn_cpu: Toolchain
    run_gtfn_cpu_no_transforms: Toolchain
    run_gtfn_gpu: Toolchain
    run_dace_cpu: Toolchain
    run_dace_cpu_noopt: Toolchain
    run_dace_gpu: Toolchain


_shared: list[tuple[MetricsRegistry, CompiledProgramPools[CompiledProgram]]] = []
_shared_lock = threading.Lock()


def _shared_state() -> tuple[MetricsRegistry, CompiledProgramPools[CompiledProgram]]:
    """The metrics and pools of the pre-built backends, made on first use (importing this
    module imports no runtime)."""
    with _shared_lock:
        if not _shared:
            from stencilchain.runtime.metrics import MetricsRegistry
            from stencilchain.runtime.pools import CompiledProgramPools

            _shared.append((MetricsRegistry(), CompiledProgramPools()))
        return _shared[0]


def _container(**settings: Any) -> ApplicationContainer:
    """A container from the environment now, sharing the backends' metrics and pools."""
    from dependency_injector import providers

    from stencilchain.containers import build_container

    metrics, pools = _shared_state()
    container = build_container(None, **settings)
    container.metrics.override(providers.Object(metrics))
    container.pools.override(providers.Object(pools))
    return container


def _gtfn(device: str, **translation_options: Any) -> Callable[[str], Toolchain]:
    def build(name: str) -> Toolchain:
        from stencilchain.containers import make_gtfn_translation, override_step

        container = _container(device=device)
        container.gtfn.name.override(name)
        if translation_options:
            override_step(
                container.gtfn.translation,
                functools.partial(make_gtfn_translation, **translation_options),
            )
        toolchain: Toolchain = container.gtfn.toolchain()
        return toolchain

    return build


def _dace(device: str, auto_optimize: bool) -> Callable[[str], Toolchain]:
    def build(name: str) -> Toolchain:
        container = _container(device=device, auto_optimize=auto_optimize)
        container.dace.name.override(name)
        toolchain: Toolchain = container.dace.toolchain()
        return toolchain

    return build


_BUILDERS: dict[str, Callable[[str], Toolchain]] = {
    "run_gtfn_cpu": _gtfn("cpu"),
    "run_gtfn_cpu_no_transforms": _gtfn("cpu", enable_transforms=False),
    "run_gtfn_gpu": _gtfn("gpu"),
    "run_dace_cpu": _dace("cpu", auto_optimize=True),
    "run_dace_cpu_noopt": _dace("cpu", auto_optimize=False),
    "run_dace_gpu": _dace("gpu", auto_optimize=True),
}
NAMES = ("run_embedded", *_BUILDERS)

_built: dict[str, Any] = {}
_lock = threading.Lock()


def build(name: str) -> Toolchain | EmbeddedBackend:
    """A new toolchain `name`, configured by the environment now (the attribute
    `backends.<name>` is built once and kept); `run_embedded` is the NumPy executor."""
    builder = _BUILDERS.get(name)
    if builder is None:
        if name == "run_embedded":
            return run_embedded
        raise KeyError(f"unknown toolchain {name!r}; known: {', '.join(NAMES)}")
    return builder(name)


def __getattr__(name: str) -> Any:
    if name == "METRICS":
        return _shared_state()[0]
    builder = _BUILDERS.get(name)
    if builder is None:
        raise AttributeError(
            f"module 'stencilchain.backends' has no attribute {name!r}; known: {', '.join(NAMES)}"
        )
    with _lock:
        if name not in _built:
            _built[name] = builder(name)
        return _built[name]


def __dir__() -> list[str]:
    return sorted([*globals(), *_BUILDERS, "METRICS"])


__all__ = ["METRICS", "NAMES", "EmbeddedBackend", "build", "run_embedded"]
