"""The application container holding every toolchain family, and `build_container`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dependency_injector import containers, providers

from stencilchain.containers.dace import DaCeContainer
from stencilchain.containers.environment import read_build_environment, settings_from_environ
from stencilchain.containers.gtfn import GTFNContainer
from stencilchain.containers.log_level import apply_log_level
from stencilchain.containers.trace_file import apply_trace
from stencilchain.runtime.metrics import MetricsRegistry
from stencilchain.runtime.pools import CompiledProgramPools
from stencilchain.runtime.toolchain import CompiledProgram


class ApplicationContainer(containers.DeclarativeContainer):
    """stencilchain's top container: `config` feeds every family's container, and both
    families share one compiled-program pool registry, one metrics registry and one build
    environment (read from the process when the container is built)."""

    config = providers.Configuration()
    pools: providers.Singleton[CompiledProgramPools[CompiledProgram]] = providers.Singleton(
        CompiledProgramPools
    )
    metrics = providers.Singleton(MetricsRegistry)
    build_environment = providers.Singleton(read_build_environment)
    gtfn = providers.Container(
        GTFNContainer,
        config=config,
        pools=pools,
        metrics=metrics,
        build_environment=build_environment,
    )
    dace = providers.Container(
        DaCeContainer,
        config=config,
        pools=pools,
        metrics=metrics,
        build_environment=build_environment,
    )


def build_container(
    environ: Mapping[str, str] | None = None, /, **overrides: Any
) -> ApplicationContainer:
    """A container configured from `environ` (default: os.environ, read now, once).
    `STENCILCHAIN_LOG_LEVEL` of `environ` is applied to the `stencilchain` logger (see
    containers/log_level.py), and `STENCILCHAIN_TRACE` starts a trace written to that file
    at exit (containers/trace_file.py).

    Keyword `overrides` replace single settings (e.g. `cache_dir=tmp_path`) after the
    environment is read; they are validated like the environment's values.
    """
    from stencilchain.containers.config import SETTINGS_BY_NAME, suggest
    from stencilchain.errors import ConfigError

    values = settings_from_environ(environ)
    apply_log_level(environ)
    apply_trace(environ)
    for name, value in overrides.items():
        setting = SETTINGS_BY_NAME.get(name)
        if setting is None:
            raise ConfigError(f"unknown setting {name!r}; {suggest(name, SETTINGS_BY_NAME)}")
        values[name] = setting.coerce(value)
    container = ApplicationContainer()
    container.config.from_dict(values)
    container.build_environment()  # the build processes' environment, read now, once
    return container
