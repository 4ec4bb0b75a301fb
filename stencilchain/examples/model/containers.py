"""The model's container: stencilchain's container inside it, fed from a section of the
model's configuration, and the model's own providers (decomposition, toolchain, model)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dependency_injector import containers, providers

from stencilchain.backends import run_embedded
from stencilchain.containers import ApplicationContainer
from stencilchain.containers.environment import resolve_settings
from stencilchain.distributed import Decomposition
from stencilchain.examples.model.model import AdvectionDiffusionModel
from stencilchain.examples.model.physics import I, J, K
from stencilchain.examples.model.settings import (
    ModelSettings,
    config_path,
    model_section,
    read_file,
)


def make_decomposition(settings: ModelSettings, comm: Any) -> Decomposition:
    """The doubly periodic grid of `settings`, split over the ranks of `comm`."""
    return Decomposition.create(
        {I: settings.nx, J: settings.ny, K: settings.nz},
        comm=comm,
        periodic=True,
        grid=settings.rank_grid(),
    )


def world() -> Any:
    from stencilchain.distributed._mpi import mpi

    return mpi("the model").COMM_WORLD


class ModelContainer(containers.DeclarativeContainer):
    """`config.model`: the model's settings (see settings.py); `config.stencils`:
    stencilchain's. Override `decomposition`, `comm` or a step of `stencils` in tests."""

    config = providers.Configuration()

    stencils = providers.Container(ApplicationContainer, config=config.stencils)

    settings = providers.Singleton(lambda section: ModelSettings(**section), config.model)
    comm = providers.Singleton(world)
    decomposition = providers.Singleton(make_decomposition, settings=settings, comm=comm)
    toolchain = providers.Selector(
        config.model.family,
        gtfn=stencils.gtfn.toolchain,
        dace=stencils.dace.toolchain,
        embedded=providers.Object(run_embedded),
    )
    model = providers.Singleton(
        AdvectionDiffusionModel,
        settings=settings,
        toolchain=toolchain,
        decomposition=decomposition,
    )


def build_model_container(
    environ: Mapping[str, str] = os.environ, file: str | Path | None = None
) -> ModelContainer:
    """A container configured as the module doc of settings.py says: defaults, then the
    file (`file`, else SCMODEL_CONFIG), then the environment."""
    table = read_file(file if file is not None else config_path(environ))
    container = ModelContainer()
    resolved = resolve_settings(environ)[:-1]
    stencils = {r.setting.name: r.value for r in resolved}
    stencils.update(  # the file's [stencils] where no variable set a value
        (name, value)
        for name, value in table.get("stencils", {}).items()
        if all(r.source == "default" for r in resolved if r.setting.name == name)
    )
    model = {"family": "gtfn", **model_section(environ, table.get("model", {}))}
    container.config.from_dict({"stencils": stencils, "model": model})
    return container
