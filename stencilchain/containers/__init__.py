"""Composition: configs, step builders, the DeclarativeContainers and `build_container`."""

from __future__ import annotations

from stencilchain.containers.application import ApplicationContainer, build_container
from stencilchain.containers.builders import (
    make_compile_workflow,
    make_gtfn_bindings,
    make_gtfn_compiler,
    make_gtfn_translation,
    make_toolchain,
)
from stencilchain.containers.config import DaCeConfig, GTFNConfig, ToolchainConfig
from stencilchain.containers.dace import DaCeContainer
from stencilchain.containers.dace_builders import (
    make_dace_bindings,
    make_dace_compiler,
    make_dace_translator,
)
from stencilchain.containers.flat import make_dace_backend
from stencilchain.containers.gtfn import GTFNContainer
from stencilchain.containers.overrides import override_step
from stencilchain.errors import ConfigError, MissingExtraError

__all__ = [
    "ApplicationContainer",
    "ConfigError",
    "DaCeConfig",
    "DaCeContainer",
    "GTFNConfig",
    "GTFNContainer",
    "MissingExtraError",
    "ToolchainConfig",
    "build_container",
    "make_compile_workflow",
    "make_dace_backend",
    "make_dace_bindings",
    "make_dace_compiler",
    "make_dace_translator",
    "make_gtfn_bindings",
    "make_gtfn_compiler",
    "make_gtfn_translation",
    "make_toolchain",
    "override_step",
]
