"""The GTFN container: one shared config read from the environment once, a Factory per
step wired to it, overrides that customize a step, and the toolchain builder that owns
the composition (the translation cache wraps whatever the translation provider built).

Nothing here compiles: steps are built and inspected, the translation step is run at most.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import containers, providers

from stencilchain.containers import (
    ApplicationContainer,
    ConfigError,
    GTFNConfig,
    GTFNContainer,
    ToolchainConfig,
    build_container,
    make_gtfn_bindings,
    make_gtfn_compiler,
    make_gtfn_translation,
    override_step,
)
from stencilchain.containers._composition import make_compile_workflow, make_toolchain
from stencilchain.examples import laplacian
from stencilchain.program import ir
from stencilchain.program.device import Device
from stencilchain.runtime.toolchain import Toolchain
from stencilchain.steps.gtfn.bindings import GTFNBindingsStep
from stencilchain.steps.gtfn.compiler import CMakeCompiler
from stencilchain.steps.gtfn.translation import GTFNTranslationStep
from stencilchain.steps.settings import BuildType, CacheLifetime, DataLayout
from stencilchain.steps.stages import ProgramSource
from stencilchain.steps.workflow import CachedStep, CompileWorkflow

SHARED_FIELDS = {
    "device",
    "build_type",
    "cache_lifetime",
    "cache_dir",
    "data_layout",
    "cached_translation",
}
STEP_PROVIDERS = ("translation", "bindings", "compilation")


def container_on(cache_dir: Path, environ: dict[str, str] | None = None, **settings: Any) -> Any:
    """A container that reads only `environ` (never os.environ) and caches in `cache_dir`."""
    return build_container(environ or {}, cache_dir=cache_dir, **settings)


@dataclasses.dataclass(frozen=True)
class CountingTranslation:
    """A translation step that records the programs it translated (to see cache misses)."""

    inner: GTFNTranslationStep
    calls: list[str] = dataclasses.field(default_factory=list, repr=False, compare=False)

    def __call__(self, program: ir.Program, /) -> ProgramSource:
        self.calls.append(program.name)
        return self.inner(program)


# --- 1. one shared, frozen config; defaults from the environment when it is created ------


def test_shared_settings_live_in_one_frozen_config() -> None:
    assert dataclasses.is_dataclass(ToolchainConfig)
    assert {f.name for f in dataclasses.fields(ToolchainConfig)} >= SHARED_FIELDS
    assert issubclass(GTFNConfig, ToolchainConfig)
    cfg = GTFNConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.device = Device.GPU  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ToolchainConfig().build_type = BuildType.DEBUG  # type: ignore[misc]


def test_container_config_is_the_frozen_gtfn_config(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir)
    cfg = c.gtfn.toolchain_config()
    assert type(cfg) is GTFNConfig
    assert cfg == GTFNConfig(cache_dir=session_cache_dir)
    assert c.gtfn.toolchain().config is cfg


def test_environment_is_read_when_the_container_is_built_not_at_import(
    session_cache_dir: Path,
) -> None:
    """Import with a bad and a good value in the environment, then change it: the import
    reads nothing, the container built afterwards reads the environment of that moment."""
    script = """
import dataclasses, json, os
import stencilchain, stencilchain.backends, stencilchain.containers
from stencilchain.containers import GTFNConfig, ConfigError, build_container
defaults = {f.name: str(f.default) for f in dataclasses.fields(GTFNConfig)}
try:
    build_container()
    bad = None
except ConfigError as err:
    bad = str(err)
os.environ["STENCILCHAIN_DEVICE"] = "cpu"
os.environ["STENCILCHAIN_BUILD_TYPE"] = "minsizerel"
cfg = build_container().gtfn.toolchain_config()
print(json.dumps({"bad": bad, "defaults": defaults,
                  "device": cfg.device.value, "build_type": cfg.build_type.value}))
"""
    env = {
        **os.environ,
        "STENCILCHAIN_CACHE_DIR": str(session_cache_dir),
        "STENCILCHAIN_DEVICE": "tpu",  # invalid: an import that read it would fail
        "STENCILCHAIN_BUILD_TYPE": "debug",
    }
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["bad"] is not None and "STENCILCHAIN_DEVICE" in result["bad"]
    assert result["defaults"]["device"] == str(Device.CPU)  # not captured at import
    assert result["defaults"]["build_type"] == str(BuildType.RELEASE)
    assert result["device"] == "cpu"
    assert result["build_type"] == "minsizerel"


def test_os_environ_read_by_each_build(
    monkeypatch: pytest.MonkeyPatch, session_cache_dir: Path
) -> None:
    monkeypatch.setenv("STENCILCHAIN_CACHE_DIR", str(session_cache_dir))
    monkeypatch.setenv("STENCILCHAIN_BUILD_TYPE", "debug")
    assert build_container().gtfn.toolchain_config().build_type is BuildType.DEBUG
    monkeypatch.setenv("STENCILCHAIN_BUILD_TYPE", "relwithdebinfo")
    assert build_container().gtfn.toolchain_config().build_type is BuildType.RELWITHDEBINFO


# --- 2. environment injection: read once, validated, booleans --------------------------


def test_mapping_read_once(session_cache_dir: Path) -> None:
    environ = {
        "STENCILCHAIN_BUILD_TYPE": "debug",
        "STENCILCHAIN_DATA_LAYOUT": "unit_stride",
        "STENCILCHAIN_CACHE_DIR": str(session_cache_dir),
    }
    c = build_container(environ)
    environ["STENCILCHAIN_BUILD_TYPE"] = "release"
    environ["STENCILCHAIN_DATA_LAYOUT"] = "bogus"
    environ["STENCILCHAIN_DEVICE"] = "gpu"
    cfg = c.gtfn.toolchain_config()  # first built after the changes
    assert cfg.build_type is BuildType.DEBUG
    assert cfg.data_layout is DataLayout.UNIT_STRIDE
    assert cfg.device is Device.CPU
    assert c.gtfn.compilation().build_type is BuildType.DEBUG


def test_os_environ_read_once(monkeypatch: pytest.MonkeyPatch, session_cache_dir: Path) -> None:
    monkeypatch.setenv("STENCILCHAIN_CACHE_DIR", str(session_cache_dir))
    monkeypatch.setenv("STENCILCHAIN_BUILD_TYPE", "debug")
    c = build_container()
    monkeypatch.setenv("STENCILCHAIN_BUILD_TYPE", "release")
    monkeypatch.setenv("STENCILCHAIN_DEVICE", "gpu")
    assert c.gtfn.toolchain_config().build_type is BuildType.DEBUG
    assert c.gtfn.toolchain().device is Device.CPU


@pytest.mark.parametrize(
    ("variable", "value", "accepted"),
    [
        ("STENCILCHAIN_DEVICE", "tpu", ["cpu", "gpu"]),
        ("STENCILCHAIN_BUILD_TYPE", "fast", ["debug", "release", "relwithdebinfo", "minsizerel"]),
        ("STENCILCHAIN_CACHE_LIFETIME", "forever", ["session", "persistent"]),
        ("STENCILCHAIN_DATA_LAYOUT", "fortran", ["strided", "unit_stride"]),
        ("STENCILCHAIN_CACHED_TRANSLATION", "maybe", ["true", "false", "yes", "no", "on", "off"]),
    ],
)
def test_bad_value_fails_when_the_container_is_built(
    variable: str, value: str, accepted: list[str]
) -> None:
    with pytest.raises(ConfigError) as info:
        build_container({variable: value})
    message = str(info.value)
    assert variable in message
    assert repr(value) in message
    for word in accepted:
        assert word in message
    assert isinstance(info.value, ValueError)


def test_misspelled_variable_fails_with_a_suggestion() -> None:
    with pytest.raises(
        ConfigError, match=r"STENCILCHAIN_BUILDTYPE.*did you mean STENCILCHAIN_BUILD_TYPE"
    ):
        build_container({"STENCILCHAIN_BUILDTYPE": "debug"})


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"device": "tpu"}, r"device='tpu'.*cpu, gpu"),
        ({"devise": "gpu"}, r"'devise'.*did you mean device"),
        ({"cached_translation": 1}, r"cached_translation=1"),
    ],
)
def test_bad_keyword_setting_fails(overrides: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        build_container({}, **overrides)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("1", True), ("true", True), ("True", True), ("YES", True), ("on", True),
        ("0", False), ("false", False), ("FALSE", False), ("no", False), ("Off", False),
        ("", True),  # empty: unset, the default
    ],
)  # fmt: skip
def test_boolean_spellings_reach_the_container(
    word: str, expected: bool, session_cache_dir: Path
) -> None:
    c = container_on(session_cache_dir, {"STENCILCHAIN_CACHED_TRANSLATION": word})
    assert c.gtfn.toolchain_config().cached_translation is expected
    workflow = c.gtfn.compile_workflow()
    assert isinstance(workflow.cached_translation, CachedStep) is expected


# --- 3. the container's providers --------------------------------------------------------


def test_gtfn_container_providers() -> None:
    assert issubclass(GTFNContainer, containers.DeclarativeContainer)
    p = GTFNContainer.providers
    assert isinstance(p["config"], providers.Configuration)
    assert isinstance(p["toolchain_config"], providers.Provider)
    builders = {
        "translation": make_gtfn_translation,
        "bindings": make_gtfn_bindings,
        "compilation": make_gtfn_compiler,
    }
    for name, builder in builders.items():
        factory = p[name]
        assert isinstance(factory, providers.Factory), name
        assert factory.provides is builder, name
        assert factory.args == (p["toolchain_config"],), name
        assert factory.kwargs == {}, name
    assert isinstance(p["compile_workflow"], providers.Provider)
    assert p["compile_workflow"].provides is make_compile_workflow
    assert isinstance(p["toolchain"], providers.Provider)
    assert p["toolchain"].provides is make_toolchain


def test_application_container_holds_gtfn(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir)
    assert c.declarative_parent is ApplicationContainer
    assert isinstance(ApplicationContainer.gtfn, providers.Container)
    assert isinstance(c.gtfn, providers.Container)
    assert c.gtfn.container.declarative_parent is GTFNContainer
    # the instance's step factories are wired to the instance's own config provider
    for name in STEP_PROVIDERS:
        assert getattr(c.gtfn, name).args[0] is c.gtfn.toolchain_config
    assert isinstance(c.gtfn.compile_workflow(), CompileWorkflow)
    assert isinstance(c.gtfn.toolchain(), Toolchain)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("layout", ["strided", "unit_stride"])
def test_steps_carry_the_config(device: str, layout: str, session_cache_dir: Path) -> None:
    c = container_on(
        session_cache_dir,
        {"STENCILCHAIN_DEVICE": device, "STENCILCHAIN_BUILD_TYPE": "debug"},
        data_layout=layout,
    )
    cfg = c.gtfn.toolchain_config()
    assert cfg.device is Device(device)
    assert cfg.data_layout is DataLayout(layout)

    translation = c.gtfn.translation()
    assert isinstance(translation, GTFNTranslationStep)
    assert (translation.device, translation.data_layout) == (cfg.device, cfg.data_layout)
    bindings = c.gtfn.bindings()
    assert isinstance(bindings, GTFNBindingsStep)
    assert (bindings.device, bindings.data_layout) == (cfg.device, cfg.data_layout)
    compiler = c.gtfn.compilation()
    assert isinstance(compiler, CMakeCompiler)
    assert (compiler.device, compiler.build_type) == (cfg.device, BuildType.DEBUG)
    assert Path(compiler.cache.root).is_relative_to(session_cache_dir)

    toolchain = c.gtfn.toolchain()
    assert toolchain.config is cfg
    assert toolchain.device is cfg.device
    assert toolchain.family == "gtfn"
    assert toolchain.name == f"run_gtfn_{device}"
    workflow = toolchain.workflow
    assert isinstance(workflow.cached_translation, CachedStep)
    assert workflow.translation == translation
    assert workflow.bindings == bindings
    assert workflow.compilation == compiler


def test_cache_lifetime_reaches_the_steps(tmp_path: Path) -> None:
    persistent = container_on(tmp_path).gtfn.compilation().cache.root
    assert Path(persistent) == tmp_path / "builds"
    c = build_container({}, cache_dir=tmp_path, cache_lifetime="session")
    assert c.gtfn.toolchain_config().cache_lifetime is CacheLifetime.SESSION
    session = Path(c.gtfn.compilation().cache.root)
    assert session.parent.parent == tmp_path  # the process's session folder inside cache_dir
    assert session.parent.name.startswith("stencilchain-session-")


# --- 5. customizing a step by overriding its provider ---------------------------------


def test_override_with_factory_of_partial(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir, {"STENCILCHAIN_DEVICE": "gpu"})
    with c.gtfn.translation.override(providers.Factory(functools.partial(make_gtfn_translation, enable_transforms=False), c.gtfn.toolchain_config)):  # fmt: skip
        step = c.gtfn.translation()
    assert step == GTFNTranslationStep(device=Device.GPU, enable_transforms=False)
    assert c.gtfn.translation().enable_transforms is True  # restored on exit


def test_override_step_with_partial(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir, data_layout="unit_stride")
    with override_step(c.gtfn.translation, functools.partial(make_gtfn_translation, openmp_threshold=7)):  # fmt: skip
        step = c.gtfn.translation()
        assert c.gtfn.toolchain().workflow.translation == step
    assert step == GTFNTranslationStep(
        device=Device.CPU, data_layout=DataLayout.UNIT_STRIDE, openmp_threshold=7
    )
    assert c.gtfn.translation().openmp_threshold == 65536


def test_override_step_with_any_callable_taking_the_config(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir, {"STENCILCHAIN_BUILD_TYPE": "debug"})
    seen: list[GTFNConfig] = []

    def pybind11_bindings(cfg: GTFNConfig) -> GTFNBindingsStep:
        seen.append(cfg)
        return make_gtfn_bindings(cfg, flavor="pybind11")

    with (
        override_step(c.gtfn.bindings, pybind11_bindings),
        override_step(c.gtfn.compilation, functools.partial(make_gtfn_compiler, extra_flags=("-DX=1",), openmp=False)),
    ):  # fmt: skip
        workflow = c.gtfn.toolchain().workflow
    assert seen == [c.gtfn.toolchain_config()]
    assert workflow.bindings == GTFNBindingsStep(device=Device.CPU, flavor="pybind11")
    assert workflow.compilation.extra_flags == ("-DX=1",)
    assert workflow.compilation.openmp is False
    assert workflow.compilation.build_type is BuildType.DEBUG  # shared setting from the config


def test_override_step_rejects_a_provider_that_is_not_a_step_factory(
    session_cache_dir: Path,
) -> None:
    c = container_on(session_cache_dir)
    with pytest.raises(TypeError, match="Factory"):
        override_step(c.gtfn.toolchain, make_gtfn_translation)


def test_override_with_a_bare_builder(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir)
    with c.gtfn.translation.override(
        functools.partial(make_gtfn_translation, enable_transforms=False)
    ):
        try:
            toolchain = c.gtfn.toolchain()
        except TypeError:
            return  # refusing the bare builder when the toolchain is built is fine too
    step = toolchain.workflow.translation
    assert isinstance(step, GTFNTranslationStep)
    assert step.enable_transforms is False


# --- 6. the toolchain builder owns the composition ---------------------------------------


def test_override_is_the_step_inside_the_cache(private_cache_dir: Path) -> None:
    c = container_on(private_cache_dir)
    counting = CountingTranslation(GTFNTranslationStep(device=Device.CPU, enable_transforms=False))

    def build(cfg: GTFNConfig) -> CountingTranslation:
        return counting

    with override_step(c.gtfn.translation, build):
        toolchain = c.gtfn.toolchain()
    cached = toolchain.workflow.cached_translation
    assert isinstance(cached, CachedStep)
    assert cached.step is counting
    assert Path(cached.cache.root).is_relative_to(private_cache_dir)  # type: ignore[attr-defined]

    program = laplacian.PROGRAM.ir
    first = cached(program)
    second = cached(program)  # a hit: the override is not called again
    assert counting.calls == [program.name]
    assert first.source_code == second.source_code == counting.inner(program).source_code


def test_override_without_translation_cache_is_the_bare_step(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir, cached_translation=False)
    marker = GTFNTranslationStep(device=Device.CPU, openmp_threshold=3)
    with override_step(c.gtfn.translation, lambda cfg: marker):
        toolchain = c.gtfn.toolchain()
    assert toolchain.workflow.translation is marker


def test_compile_workflow_caches_its_translation_by_default(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir)
    workflow = c.gtfn.compile_workflow()
    assert isinstance(workflow, CompileWorkflow)
    assert isinstance(workflow.cached_translation, CachedStep)
    assert workflow.translation == c.gtfn.translation()
    assert isinstance(workflow.bindings, GTFNBindingsStep)
    assert isinstance(workflow.compilation, CMakeCompiler)
    no_transforms = functools.partial(make_gtfn_translation, enable_transforms=False)
    with override_step(c.gtfn.translation, no_transforms):
        overridden = c.gtfn.compile_workflow()
    assert isinstance(overridden.cached_translation, CachedStep)
    assert overridden.translation.enable_transforms is False


@pytest.mark.parametrize(
    "opt_out",
    [
        {"settings": {"cached_translation": False}},
        {"environ": {"STENCILCHAIN_CACHED_TRANSLATION": "off"}},
    ],
    ids=["keyword", "environment"],
)
def test_compile_workflow_cache_opt_out(opt_out: dict[str, Any], session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir, opt_out.get("environ"), **opt_out.get("settings", {}))
    workflow = c.gtfn.compile_workflow()
    assert isinstance(workflow.translation, GTFNTranslationStep)
    assert workflow.translation == c.gtfn.translation()
    assert isinstance(c.gtfn.toolchain().workflow.translation, GTFNTranslationStep)


def test_override_after_the_toolchain_was_built_is_not_dropped(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir)
    before = c.gtfn.toolchain()
    assert before.workflow.translation.enable_transforms is True
    no_transforms = functools.partial(make_gtfn_translation, enable_transforms=False)
    try:
        with override_step(c.gtfn.translation, no_transforms):
            after = c.gtfn.toolchain()
    except (RuntimeError, TypeError, ValueError):
        return  # refusing the late override loudly is fine too
    assert after.workflow.translation.enable_transforms is False
