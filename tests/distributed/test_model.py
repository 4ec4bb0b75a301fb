"""The distributed model: one checksum on 1, 2 and 4 ranks with each program built once
in the job, its configuration section, and overrides through its container."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import numpy as np
import pytest
from dependency_injector import providers

import stencilchain as sc
from stencilchain.containers import make_gtfn_translation, override_step
from stencilchain.examples.model.containers import build_model_container, make_decomposition
from stencilchain.examples.model.settings import ModelSettings

from ._launch import launch

pytest.importorskip("mpi4py", reason="the mpi extra is not installed")


SMALL = {"SCMODEL_NX": "16", "SCMODEL_NY": "12", "SCMODEL_NZ": "5", "SCMODEL_STEPS": "3"}


def run_model(ranks: int, cache: Path) -> tuple[str, list[int]]:
    """`python -m stencilchain.examples.model` on `ranks` ranks: (checksum line, builds
    per rank)."""
    output = launch(ranks, ["-m", "stencilchain.examples.model"], cache=cache, env=SMALL)
    assert len(re.findall(r"^step ", output, re.MULTILINE)) == 3, output
    checksum = re.search(r"^checksum .*$", output, re.MULTILINE)
    builds = re.search(r"builds per rank \[([\d, ]+)\]", output)
    assert checksum is not None and builds is not None, output
    return checksum[0], [int(b) for b in builds[1].split(",")]


def test_one_checksum_on_one_two_and_four_ranks(private_cache_dir: Path) -> None:
    """A cold job of four ranks builds each of the two programs once; jobs of one and two
    ranks then load them and end with the same checksum, bit for bit."""
    four, builds = run_model(4, private_cache_dir)
    assert sorted(builds) == [0, 0, 1, 1], builds
    one, builds = run_model(1, private_cache_dir)
    assert builds == [0]
    two, builds = run_model(2, private_cache_dir)
    assert builds == [0, 0]
    assert one == two == four


def test_overrides_through_the_model_container(private_cache_dir: Path) -> None:
    """A host's test overrides one stencilchain step (translation without transforms) and
    one model provider (the decomposition, on this process alone), and gets the embedded
    family's result."""
    from mpi4py import MPI

    environ = {"STENCILCHAIN_CACHE_DIR": str(private_cache_dir), **SMALL}
    container = build_model_container(environ)
    override_step(
        container.stencils.gtfn.translation,
        functools.partial(make_gtfn_translation, enable_transforms=False),
    )
    container.decomposition.override(
        providers.Singleton(
            make_decomposition, settings=container.settings, comm=providers.Object(MPI.COMM_SELF)
        )
    )
    model = container.model()
    assert model.toolchain.workflow.translation.enable_transforms is False
    assert model.grid.ranks == 1 and model.grid.comm.Get_size() == 1
    model.compile()
    for number in range(3):
        model.step(number)

    reference = build_model_container({**environ, "SCMODEL_FAMILY": "embedded"})
    reference.decomposition.override(container.decomposition)
    embedded = reference.model()
    for number in range(3):
        embedded.step(number)
    np.testing.assert_allclose(model.q.interior, embedded.q.interior, rtol=1e-12, atol=1e-14)


def test_the_configuration_section(tmp_path: Path) -> None:
    """Defaults, then the file's [model], then SCMODEL_* variables; [stencils] from the
    file where no STENCILCHAIN_* variable is set."""
    file = tmp_path / "model.toml"
    file.write_text(
        '[model]\nnx = 40\nsteps = 7\nranks = "1x1"\n'
        '[stencils]\nbuild_type = "debug"\ncache_dir = "from-file"\n'
    )
    container = build_model_container(
        {"SCMODEL_CONFIG": str(file), "SCMODEL_STEPS": "9", "STENCILCHAIN_CACHE_DIR": "from-env"}
    )
    settings = container.settings()
    assert (settings.nx, settings.ny, settings.steps, settings.rank_grid()) == (40, 64, 9, (1, 1))
    config = container.stencils.gtfn.toolchain_config()
    assert str(config.build_type.value) == "debug"
    assert config.cache_dir == Path("from-env")


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"SCMODEL_NX": "many"}, "SCMODEL_NX='many' is not a valid int"),
        ({"SCMODEL_FAMILY": "fortran"}, "family='fortran': accepted gtfn, dace, embedded"),
        ({"SCMODEL_RANKS": "2by2"}, "ranks='2by2': 'auto' or e.g. '2x2'"),
        ({"SCMODEL_STEPS": "0"}, "steps=0 must be at least 1"),
    ],
)
def test_bad_model_settings_name_the_setting(environ: dict[str, str], message: str) -> None:
    with pytest.raises(sc.ConfigError, match=re.escape(message)):
        build_model_container(environ).settings()


def test_settings_defaults_are_valid() -> None:
    assert ModelSettings().rank_grid() is None
