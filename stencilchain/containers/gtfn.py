"""The GTFN container: the one family container shape, of the GTFN descriptor and builders."""

from __future__ import annotations

from stencilchain.containers.builders import (
    make_gtfn_bindings,
    make_gtfn_compiler,
    make_gtfn_translation,
)
from stencilchain.containers.config import gtfn_config_from
from stencilchain.containers.family_container import family_container
from stencilchain.steps.gtfn.family import GTFN

GTFNContainer = family_container(
    GTFN,
    config_from=gtfn_config_from,
    make_translation=make_gtfn_translation,
    make_bindings=make_gtfn_bindings,
    make_compilation=make_gtfn_compiler,
    name="GTFNContainer",
    module=__name__,
    doc="""Providers of the GTFN toolchain.

    `config` holds the settings (see docs/configuration.md); `toolchain_config` is the
    frozen GTFNConfig built from them; `cache_location` the folders of its caches;
    `translation`, `bindings` and `compilation` are Factories of typed step builders wired
    to it; `compile_workflow` composes them (the translation behind the translation
    cache) and `toolchain` runs whatever `compile_workflow` provides. `pools` (compiled
    programs) and `metrics` are Singletons a host application may override or share.
    Override any provider to customize it; the override lands in `toolchain()`.
    """,
)
