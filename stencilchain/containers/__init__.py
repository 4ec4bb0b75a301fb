"""Composition: what a user composes toolchains with.

The containers and `build_container`, the frozen configs, the typed step builders, and
`override_step` to customize a step. How the containers compose the steps (the workflow,
the toolchain) is internal (`_composition`): override the providers instead.
"""

from __future__ import annotations

from stencilchain.containers.application import ApplicationContainer, build_container
from stencilchain.containers.builders import (
    make_gtfn_bindings,
    make_gtfn_compiler,
    make_gtfn_translation,
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
from stencilchain.steps.gtfn.tiling import Materialization

__all__ = [
    "ApplicationContainer",
    "ConfigError",
    "DaCeConfig",
    "DaCeContainer",
    "GTFNConfig",
    "GTFNContainer",
    "Materialization",
    "MissingExtraError",
    "ToolchainConfig",
    "build_container",
    "make_dace_backend",
    "make_dace_bindings",
    "make_dace_compiler",
    "make_dace_translator",
    "make_gtfn_bindings",
    "make_gtfn_compiler",
    "make_gtfn_translation",
    "override_step",
]
