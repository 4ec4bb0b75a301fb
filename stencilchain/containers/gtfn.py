"""The GTFN container: one shared config, a Factory per step, the workflow composing them,
and the toolchain running that workflow."""

from __future__ import annotations

from dependency_injector import containers, providers

from stencilchain.containers._composition import (
    cache_location_of,
    default_toolchain_name,
    make_compile_workflow,
    make_toolchain,
)
from stencilchain.containers.builders import (
    make_gtfn_bindings,
    make_gtfn_compiler,
    make_gtfn_translation,
)
from stencilchain.containers.config import gtfn_config_from
from stencilchain.runtime.metrics import MetricsRegistry
from stencilchain.runtime.pools import CompiledProgramPools
from stencilchain.runtime.toolchain import CompiledProgram


class GTFNContainer(containers.DeclarativeContainer):
    """Providers of the GTFN toolchain.

    `config` holds the settings (see docs/configuration.md); `toolchain_config` is the
    frozen GTFNConfig built from them; `cache_location` the folders of its caches;
    `translation`, `bindings` and `compilation` are Factories of typed step builders wired
    to it; `compile_workflow` composes them (the translation behind the translation
    cache) and `toolchain` runs whatever `compile_workflow` provides. `pools` (compiled
    programs) and `metrics` are Singletons a host application may override or share.
    Override any provider to customize it; the override lands in `toolchain()`.
    """

    config = providers.Configuration()
    toolchain_config = providers.Singleton(gtfn_config_from, config)
    cache_location = providers.Callable(cache_location_of, toolchain_config)
    pools: providers.Singleton[CompiledProgramPools[CompiledProgram]] = providers.Singleton(
        CompiledProgramPools
    )
    metrics = providers.Singleton(MetricsRegistry)

    translation = providers.Factory(make_gtfn_translation, toolchain_config)
    bindings = providers.Factory(make_gtfn_bindings, toolchain_config)
    compilation = providers.Factory(make_gtfn_compiler, toolchain_config)

    name = providers.Callable(default_toolchain_name, "gtfn", toolchain_config)
    compile_workflow = providers.Factory(
        make_compile_workflow,
        toolchain_config,
        translation=translation,
        bindings=bindings,
        compilation=compilation,
    )
    # A Factory, so that an override made after a first toolchain() still lands; toolchains
    # with the same settings share their compiled programs (through `pools`).
    toolchain = providers.Factory(
        make_toolchain,
        toolchain_config,
        name=name,
        family="gtfn",
        workflow=compile_workflow,
        pools=pools,
        metrics=metrics,
    )
