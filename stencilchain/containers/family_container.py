"""One container shape for every toolchain family: `family_container` builds the
DeclarativeContainer of a family from its descriptor, its config parser and its three
typed step builders, so that GTFNContainer and DaCeContainer cannot drift apart."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dependency_injector import containers, providers

from stencilchain.containers._composition import (
    cache_location_of,
    default_toolchain_name,
    make_build_policy,
    make_compile_workflow,
    make_toolchain,
)
from stencilchain.containers.config import ToolchainConfig
from stencilchain.containers.environment import read_build_environment
from stencilchain.runtime.metrics import MetricsRegistry
from stencilchain.runtime.pools import CompiledProgramPools
from stencilchain.runtime.toolchain import CompiledProgram
from stencilchain.steps.family import Family

ConfigParser = Callable[[Mapping[str, object] | None], ToolchainConfig]


def family_container(
    descriptor: Family,
    *,
    config_from: ConfigParser,
    make_translation: Callable[..., Any],
    make_bindings: Callable[..., Any],
    make_compilation: Callable[..., Any],
    name: str,
    module: str,
    doc: str,
) -> type[containers.DeclarativeContainer]:
    """The DeclarativeContainer `name` of the family `descriptor`: providers `config`,
    `family` (the descriptor), `toolchain_config` (the frozen config `config_from` builds),
    `cache_location`, `pools`, `metrics`, `build_environment` (read from the process once,
    when first needed), the step Factories `translation`, `bindings` and
    `compilation` (of the typed builders given, wired to `toolchain_config`),
    `compile_workflow`, `build_policy`, `name` and `toolchain`; its class is named `name`
    in `module`."""

    class FamilyContainer(containers.DeclarativeContainer):
        config = providers.Configuration()
        family = providers.Object(descriptor)
        toolchain_config = providers.Singleton(config_from, config)
        cache_location = providers.Callable(cache_location_of, toolchain_config)
        pools: providers.Singleton[CompiledProgramPools[CompiledProgram]] = providers.Singleton(
            CompiledProgramPools
        )
        metrics = providers.Singleton(MetricsRegistry)
        build_environment = providers.Singleton(read_build_environment)

        translation = providers.Factory(make_translation, toolchain_config)
        bindings = providers.Factory(make_bindings, toolchain_config)
        compilation = providers.Factory(make_compilation, toolchain_config)

        name = providers.Callable(default_toolchain_name, descriptor.name, toolchain_config)
        compile_workflow = providers.Factory(
            make_compile_workflow,
            toolchain_config,
            translation=translation,
            bindings=bindings,
            compilation=compilation,
            environment=build_environment,
        )
        build_policy = providers.Callable(make_build_policy, toolchain_config)
        # A Factory, so that an override made after a first toolchain() still lands;
        # toolchains with the same settings share their compiled programs (through `pools`).
        toolchain = providers.Factory(
            make_toolchain,
            toolchain_config,
            name=name,
            family=descriptor.name,
            workflow=compile_workflow,
            pools=pools,
            metrics=metrics,
            policy=build_policy,
        )

    FamilyContainer.__name__ = FamilyContainer.__qualname__ = name
    FamilyContainer.__module__ = module
    FamilyContainer.__doc__ = doc
    return FamilyContainer
