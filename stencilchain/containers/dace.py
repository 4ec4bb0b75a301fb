"""The DaCe container: the same provider names and shape as GTFNContainer."""

from __future__ import annotations

from dependency_injector import containers, providers

from stencilchain.containers._composition import (
    cache_location_of,
    default_toolchain_name,
    make_compile_workflow,
    make_toolchain,
)
from stencilchain.containers.config import dace_config_from
from stencilchain.containers.dace_builders import (
    make_dace_bindings,
    make_dace_compiler,
    make_dace_translator,
)
from stencilchain.runtime.metrics import MetricsRegistry
from stencilchain.runtime.pools import CompiledProgramPools
from stencilchain.runtime.toolchain import CompiledProgram


class DaCeContainer(containers.DeclarativeContainer):
    """Providers of the DaCe toolchain (needs the `dace` extra when a step is built).

    Same shape as GTFNContainer: `config`, `toolchain_config` (a frozen DaCeConfig),
    `cache_location`, `pools`, `metrics`, the step Factories `translation`, `bindings`,
    `compilation`, `compile_workflow`, `name` and `toolchain`.
    """

    config = providers.Configuration()
    toolchain_config = providers.Singleton(dace_config_from, config)
    cache_location = providers.Callable(cache_location_of, toolchain_config)
    pools: providers.Singleton[CompiledProgramPools[CompiledProgram]] = providers.Singleton(
        CompiledProgramPools
    )
    metrics = providers.Singleton(MetricsRegistry)

    translation = providers.Factory(make_dace_translator, toolchain_config)
    bindings = providers.Factory(make_dace_bindings, toolchain_config)
    compilation = providers.Factory(make_dace_compiler, toolchain_config)

    name = providers.Callable(default_toolchain_name, "dace", toolchain_config)
    compile_workflow = providers.Factory(
        make_compile_workflow,
        toolchain_config,
        translation=translation,
        bindings=bindings,
        compilation=compilation,
    )
    toolchain = providers.Factory(
        make_toolchain,
        toolchain_config,
        name=name,
        family="dace",
        workflow=compile_workflow,
        pools=pools,
        metrics=metrics,
    )
