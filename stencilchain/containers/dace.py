"""The DaCe container: the one family container shape, of the DaCe descriptor and builders."""

from __future__ import annotations

from stencilchain.containers.config import dace_config_from
from stencilchain.containers.dace_builders import (
    make_dace_bindings,
    make_dace_compiler,
    make_dace_translator,
)
from stencilchain.containers.family_container import family_container
from stencilchain.steps.dace.family import DACE

DaCeContainer = family_container(
    DACE,
    config_from=dace_config_from,
    make_translation=make_dace_translator,
    make_bindings=make_dace_bindings,
    make_compilation=make_dace_compiler,
    name="DaCeContainer",
    module=__name__,
    doc="""Providers of the DaCe toolchain (needs the `dace` extra when a step is built).

    Same shape as GTFNContainer (both are made by `family_container`): `config`,
    `toolchain_config` (a frozen DaCeConfig), `cache_location`, `pools`, `metrics`, the
    step Factories `translation`, `bindings`, `compilation`, `compile_workflow`, `name` and
    `toolchain`.
    """,
)
