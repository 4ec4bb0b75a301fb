"""The GTFN container: one shared config, a Factory per step, the composed toolchain."""

from __future__ import annotations

from dependency_injector import containers, providers

from stencilchain.containers.builders import (
    default_toolchain_name,
    make_compile_workflow,
    make_gtfn_bindings,
    make_gtfn_compiler,
    make_gtfn_translation,
    make_toolchain,
)
from stencilchain.containers.config import gtfn_config_from


class GTFNContainer(containers.DeclarativeContainer):
    """Providers of the GTFN toolchain.

    `config` holds the settings (see docs/configuration.md); `toolchain_config` is the
    frozen GTFNConfig built from them; `translation`, `bindings` and `compilation` are
    Factories of typed step builders wired to it. Override a step's provider to
    customize it: the toolchain wraps whatever the translation provider returns in the
    translation cache.
    """

    config = providers.Configuration()
    toolchain_config = providers.Singleton(gtfn_config_from, config)

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
    # with the same settings share their compiled programs (runtime.toolchain's pools).
    toolchain = providers.Factory(
        make_toolchain,
        toolchain_config,
        name=name,
        family="gtfn",
        translation=translation,
        bindings=bindings,
        compilation=compilation,
    )
