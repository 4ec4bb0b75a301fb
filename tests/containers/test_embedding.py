"""A host application embeds stencilchain's GTFNContainer in its own DeclarativeContainer,
under its own config section, passes its own settings, overrides one step, and runs a
program compiled by the resulting toolchain (one compile, in the test's private cache).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from dependency_injector import containers, providers

import stencilchain as sc
from stencilchain.containers import (
    ConfigError,
    GTFNConfig,
    GTFNContainer,
    build_container,
    make_gtfn_translation,
    override_step,
)
from stencilchain.program.device import Device
from stencilchain.steps.gtfn.translation import GTFNTranslationStep
from stencilchain.steps.settings import BuildType
from stencilchain.steps.workflow import CachedStep

I = sc.Dimension("I")
J = sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]


@sc.field_operator
def lap(f: F) -> F:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


@sc.field_operator
def diffuse(f: F, alpha: sc.float64) -> F:
    return f + alpha * lap(f)


@sc.program
def diffusion(f: F, out: F, alpha: sc.float64) -> None:
    diffuse(f, alpha, out=out)


class Greeter:
    def __init__(self, greeting: str) -> None:
        self.greeting = greeting


class HostContainer(containers.DeclarativeContainer):
    """A host application's container: its own providers and stencilchain's, each fed
    from its own section of the host's configuration."""

    config = providers.Configuration()
    greeter = providers.Factory(Greeter, greeting=config.app.greeting)
    stencil = providers.Container(GTFNContainer, config=config.stencil)


def test_host_embeds_gtfn_container(private_cache_dir: Path) -> None:
    host = HostContainer()
    host.config.from_dict(
        {
            "app": {"greeting": "hello"},
            "stencil": {"cache_dir": str(private_cache_dir), "build_type": "debug"},
        }
    )
    no_transforms = functools.partial(make_gtfn_translation, enable_transforms=False)
    with override_step(host.stencil.translation, no_transforms):
        toolchain = host.stencil.toolchain()

    assert host.greeter().greeting == "hello"
    cfg = host.stencil.toolchain_config()
    assert cfg == GTFNConfig(cache_dir=private_cache_dir, build_type=BuildType.DEBUG)
    assert toolchain.config is cfg
    translation = toolchain.workflow.cached_translation
    assert isinstance(translation, CachedStep)
    assert translation.step == GTFNTranslationStep(device=Device.CPU, enable_transforms=False)
    assert toolchain.workflow.compilation.build_type is BuildType.DEBUG

    rng = np.random.default_rng(7)
    f = rng.random((12, 9))
    out = np.zeros_like(f)
    expected = np.zeros_like(f)
    diffusion.with_backend(sc.backends.run_embedded)(f, expected, 0.25)
    diffusion.with_backend(toolchain)(f, out, 0.25)
    np.testing.assert_allclose(out, expected, rtol=1e-13, atol=1e-13)
    assert np.any(out != 0.0)

    artifact = toolchain.compile(diffusion).artifact
    assert artifact.module_path.is_relative_to(private_cache_dir)
    assert artifact.metadata["build_type"] == "debug"
    assert any((private_cache_dir / "translations").rglob("*"))  # the translation cache


def test_host_sections_are_independent(private_cache_dir: Path) -> None:
    """Two hosts, two configurations; neither touches stencilchain's own container."""
    debug, gpu = HostContainer(), HostContainer()
    debug.config.from_dict({"stencil": {"build_type": "debug", "cache_dir": private_cache_dir}})
    gpu.config.from_dict({"stencil": {"device": "gpu", "cache_dir": private_cache_dir}})
    with override_step(debug.stencil.translation, functools.partial(make_gtfn_translation, openmp_threshold=5)):  # fmt: skip
        assert debug.stencil.translation().openmp_threshold == 5
        assert gpu.stencil.translation().openmp_threshold == 65536
        assert build_container({}).gtfn.translation().openmp_threshold == 65536
    assert debug.stencil.toolchain_config().build_type is BuildType.DEBUG
    assert debug.stencil.toolchain_config().device is Device.CPU
    assert gpu.stencil.toolchain_config().device is Device.GPU
    assert gpu.stencil.toolchain().name == "run_gtfn_gpu"


def test_host_values_are_validated(private_cache_dir: Path) -> None:
    host = HostContainer()
    host.config.from_dict({"stencil": {"build_type": "fastest", "cache_dir": private_cache_dir}})
    with pytest.raises(ConfigError, match=r"build_type='fastest'.*debug, release"):
        host.stencil.toolchain()
    misspelled = HostContainer()
    misspelled.config.from_dict({"stencil": {"buildtype": "debug"}})
    with pytest.raises(ConfigError, match="did you mean build_type"):
        misspelled.stencil.toolchain_config()


def test_host_without_a_stencil_section() -> None:
    """A host whose configuration has no section for stencilchain gets the defaults: an
    absent section is no error."""
    host = HostContainer()
    host.config.from_dict({"app": {"greeting": "hi"}})
    assert host.stencil.toolchain_config() == GTFNConfig()
