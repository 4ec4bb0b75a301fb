"""The DaCe container meets every composition requirement of the GTFN container: one
shared frozen config (DaCeConfig, adding auto_optimize and external_workspace) read from
the environment when the container is built; the same provider names; typed step
builders taking the config and only step-local, keyword-only settings (a shared,
misspelled or wrongly typed setting is a TypeError when the toolchain is built, and mypy
rejects it in a `functools.partial`); steps customized by `override_step` or
`.override()`; the translation cache wrapped around whatever the translation provider
built. Also: the deprecated flat `make_dace_backend` and the pre-built DaCe backends.

Nothing here compiles, and nothing runs a DaCe translation: steps are built and inspected.
Building a DaCe step needs the `dace` extra (the builders check that it is installed);
those tests are skipped without it.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
import typing
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import containers, providers

import stencilchain
from stencilchain.containers import (
    ApplicationContainer,
    ConfigError,
    DaCeConfig,
    DaCeContainer,
    GTFNConfig,
    GTFNContainer,
    ToolchainConfig,
    build_container,
    make_dace_backend,
    make_dace_bindings,
    make_dace_compiler,
    make_dace_translator,
    make_gtfn_translation,
    override_step,
)
from stencilchain.containers._composition import make_compile_workflow, make_toolchain
from stencilchain.examples import laplacian
from stencilchain.program import ir
from stencilchain.program.device import Device
from stencilchain.runtime.toolchain import Toolchain
from stencilchain.steps.dace.bindings import DaCeBindings
from stencilchain.steps.dace.compiler import DEFAULT_CPU_ARGS, DaCeCompiler
from stencilchain.steps.dace.translator import DaCeTranslator
from stencilchain.steps.settings import BuildType, CacheLifetime, DataLayout
from stencilchain.steps.stages import ProgramSource
from stencilchain.steps.workflow import CachedStep, CompileWorkflow

needs_dace = pytest.mark.skipif(
    importlib.util.find_spec("dace") is None,
    reason="building a DaCe step needs the `dace` extra",
)

STEP_PROVIDERS = ("translation", "bindings", "compilation")
DACE_ONLY = {"auto_optimize", "external_workspace"}


def container_on(cache_dir: Path, environ: dict[str, str] | None = None, **settings: Any) -> Any:
    """A container that reads only `environ` (never os.environ) and caches in `cache_dir`."""
    return build_container(environ or {}, cache_dir=cache_dir, **settings)


@dataclasses.dataclass(frozen=True)
class CountingTranslation:
    """A stand-in DaCe translation recording the programs it translated (to see cache
    misses); it returns a placeholder SDFG source, nothing here compiles it."""

    device: Device = Device.CPU
    calls: list[str] = dataclasses.field(default_factory=list, repr=False, compare=False)

    def __call__(self, program: ir.Program, /) -> ProgramSource:
        self.calls.append(program.name)
        return ProgramSource(
            program=program,
            entry_point=program.name,
            source_code=f'{{"placeholder SDFG of": "{program.name}"}}',
            language="sdfg",
            device=self.device,
        )


# --- 1. DaCeConfig: the shared settings plus auto_optimize and external_workspace -------------


def test_dace_config_adds_two_settings_to_the_shared_ones() -> None:
    assert issubclass(DaCeConfig, ToolchainConfig)
    shared = [f.name for f in dataclasses.fields(ToolchainConfig)]
    fields = [f.name for f in dataclasses.fields(DaCeConfig)]
    assert fields[: len(shared)] == shared
    assert set(fields) - set(shared) == DACE_ONLY
    cfg = DaCeConfig()
    assert cfg.auto_optimize is True
    assert cfg.external_workspace is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.auto_optimize = False  # type: ignore[misc]
    assert not hasattr(GTFNConfig(), "auto_optimize")


def test_container_config_is_the_frozen_dace_config(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir)
    cfg = c.dace.toolchain_config()
    assert type(cfg) is DaCeConfig
    assert cfg == DaCeConfig(cache_dir=session_cache_dir)
    assert c.dace.toolchain_config() is cfg  # one config per container


@needs_dace
def test_toolchain_carries_the_container_config(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir)
    assert c.dace.toolchain().config is c.dace.toolchain_config()


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, (True, False)),
        ({"STENCILCHAIN_DACE_AUTO_OPTIMIZE": "off"}, (False, False)),
        ({"STENCILCHAIN_DACE_AUTO_OPTIMIZE": "NO"}, (False, False)),
        ({"STENCILCHAIN_DACE_EXTERNAL_WORKSPACE": "1"}, (True, True)),
        (
            {
                "STENCILCHAIN_DACE_AUTO_OPTIMIZE": "false",
                "STENCILCHAIN_DACE_EXTERNAL_WORKSPACE": "On",
            },
            (False, True),
        ),
        ({"STENCILCHAIN_DACE_AUTO_OPTIMIZE": ""}, (True, False)),  # empty: unset
    ],
)
def test_dace_settings_come_from_the_environment(
    environ: dict[str, str], expected: tuple[bool, bool], session_cache_dir: Path
) -> None:
    c = container_on(session_cache_dir, environ)
    cfg = c.dace.toolchain_config()
    assert (cfg.auto_optimize, cfg.external_workspace) == expected
    assert c.gtfn.toolchain_config() == GTFNConfig(cache_dir=session_cache_dir)  # not GTFN's


def test_dace_settings_as_keywords(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir, auto_optimize=False, external_workspace="yes")
    cfg = c.dace.toolchain_config()
    assert (cfg.auto_optimize, cfg.external_workspace) == (False, True)


def test_environment_is_read_once_when_the_container_is_built(session_cache_dir: Path) -> None:
    environ = {"STENCILCHAIN_DACE_AUTO_OPTIMIZE": "off", "STENCILCHAIN_BUILD_TYPE": "debug"}
    c = build_container(environ, cache_dir=session_cache_dir)
    environ["STENCILCHAIN_DACE_AUTO_OPTIMIZE"] = "on"
    environ["STENCILCHAIN_DACE_EXTERNAL_WORKSPACE"] = "maybe"
    cfg = c.dace.toolchain_config()  # first built after the changes
    assert cfg.auto_optimize is False
    assert cfg.external_workspace is False
    assert cfg.build_type is BuildType.DEBUG


def test_os_environ_is_read_by_each_build_and_once(
    monkeypatch: pytest.MonkeyPatch, session_cache_dir: Path
) -> None:
    monkeypatch.setenv("STENCILCHAIN_CACHE_DIR", str(session_cache_dir))
    monkeypatch.setenv("STENCILCHAIN_DACE_AUTO_OPTIMIZE", "no")
    first = build_container()
    monkeypatch.setenv("STENCILCHAIN_DACE_AUTO_OPTIMIZE", "yes")
    monkeypatch.setenv("STENCILCHAIN_DEVICE", "gpu")
    assert first.dace.toolchain_config().auto_optimize is False
    assert first.dace.toolchain_config().device is Device.CPU
    second = build_container()
    assert second.dace.toolchain_config().auto_optimize is True
    assert second.dace.toolchain_config().device is Device.GPU


@pytest.mark.parametrize(
    "variable", ["STENCILCHAIN_DACE_AUTO_OPTIMIZE", "STENCILCHAIN_DACE_EXTERNAL_WORKSPACE"]
)
def test_bad_dace_value_fails_when_the_container_is_built(variable: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_container({variable: "maybe"})
    message = str(info.value)
    assert variable in message and "'maybe'" in message
    for word in ("true", "false", "on", "off"):
        assert word in message


def test_misspelled_dace_variable_fails_with_a_suggestion() -> None:
    with pytest.raises(ConfigError, match=r"did you mean STENCILCHAIN_DACE_AUTO_OPTIMIZE"):
        build_container({"STENCILCHAIN_DACE_AUTOOPTIMIZE": "0"})


def test_environment_is_read_when_the_container_is_built_not_at_import(
    session_cache_dir: Path,
) -> None:
    script = """
import json, os
import stencilchain, stencilchain.backends, stencilchain.containers
from stencilchain.containers import ConfigError, build_container
try:
    build_container()
    bad = None
except ConfigError as err:
    bad = str(err)
os.environ["STENCILCHAIN_DACE_AUTO_OPTIMIZE"] = "false"
cfg = build_container().dace.toolchain_config()
print(json.dumps({"bad": bad, "auto_optimize": cfg.auto_optimize,
                  "external_workspace": cfg.external_workspace}))
"""
    env = {
        **os.environ,
        "STENCILCHAIN_CACHE_DIR": str(session_cache_dir),
        "STENCILCHAIN_DACE_AUTO_OPTIMIZE": "maybe",  # invalid: an import that read it would fail
        "STENCILCHAIN_DACE_EXTERNAL_WORKSPACE": "yes",
    }
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["bad"] is not None and "STENCILCHAIN_DACE_AUTO_OPTIMIZE" in result["bad"]
    assert result["auto_optimize"] is False
    assert result["external_workspace"] is True


# --- 2. the container's providers: the same names and shape as GTFN's --------------------------


def provider_names(container: type[containers.DeclarativeContainer]) -> set[str]:
    return set(container.providers)


def test_dace_container_has_the_provider_names_of_the_gtfn_container() -> None:
    assert issubclass(DaCeContainer, containers.DeclarativeContainer)
    assert provider_names(DaCeContainer) == provider_names(GTFNContainer)
    for name in provider_names(GTFNContainer):
        assert type(DaCeContainer.providers[name]) is type(GTFNContainer.providers[name]), name


def test_dace_container_providers() -> None:
    p = DaCeContainer.providers
    assert isinstance(p["config"], providers.Configuration)
    assert isinstance(p["toolchain_config"], providers.Provider)
    builders = {
        "translation": make_dace_translator,
        "bindings": make_dace_bindings,
        "compilation": make_dace_compiler,
    }
    for name, builder in builders.items():
        factory = p[name]
        assert isinstance(factory, providers.Factory), name
        assert factory.provides is builder, name
        assert factory.args == (p["toolchain_config"],), name
        assert factory.kwargs == {}, name
    assert p["compile_workflow"].provides is make_compile_workflow
    assert p["toolchain"].provides is make_toolchain
    assert p["toolchain"].kwargs["family"] == "dace"


@needs_dace
def test_application_container_holds_dace_beside_gtfn(session_cache_dir: Path) -> None:
    assert isinstance(ApplicationContainer.dace, providers.Container)
    assert isinstance(ApplicationContainer.gtfn, providers.Container)
    c = container_on(session_cache_dir, {"STENCILCHAIN_BUILD_TYPE": "minsizerel"})
    assert c.declarative_parent is ApplicationContainer
    assert c.dace.container.declarative_parent is DaCeContainer
    assert c.gtfn.container.declarative_parent is GTFNContainer
    for name in STEP_PROVIDERS:
        assert getattr(c.dace, name).args[0] is c.dace.toolchain_config
    # one configuration feeds both families
    assert c.dace.toolchain_config().build_type is BuildType.MINSIZEREL
    assert c.gtfn.toolchain_config().build_type is BuildType.MINSIZEREL
    dace, gtfn = c.dace.toolchain(), c.gtfn.toolchain()
    assert isinstance(dace, Toolchain) and isinstance(gtfn, Toolchain)
    assert (dace.family, gtfn.family) == ("dace", "gtfn")
    assert (dace.name, gtfn.name) == ("run_dace_cpu", "run_gtfn_cpu")
    assert isinstance(c.dace.compile_workflow(), CompileWorkflow)


@needs_dace
@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("layout", ["strided", "unit_stride"])
@pytest.mark.parametrize("auto_optimize", ["true", "false"])
def test_steps_carry_the_config(
    device: str, layout: str, auto_optimize: str, session_cache_dir: Path
) -> None:
    c = container_on(
        session_cache_dir,
        {
            "STENCILCHAIN_DEVICE": device,
            "STENCILCHAIN_BUILD_TYPE": "debug",
            "STENCILCHAIN_DACE_AUTO_OPTIMIZE": auto_optimize,
        },
        data_layout=layout,
    )
    cfg = c.dace.toolchain_config()
    assert cfg.device is Device(device)
    assert cfg.data_layout is DataLayout(layout)
    assert cfg.auto_optimize is (auto_optimize == "true")

    translation = c.dace.translation()
    assert translation == DaCeTranslator(
        device=cfg.device, auto_optimize=cfg.auto_optimize, data_layout=cfg.data_layout
    )
    bindings = c.dace.bindings()
    assert bindings == DaCeBindings(device=cfg.device, data_layout=cfg.data_layout)
    compiler = c.dace.compilation()
    assert isinstance(compiler, DaCeCompiler)
    assert (compiler.device, compiler.build_type) == (cfg.device, BuildType.DEBUG)
    assert compiler.cpu_args == DEFAULT_CPU_ARGS
    assert Path(compiler.cache.root).is_relative_to(session_cache_dir)

    toolchain = c.dace.toolchain()
    assert toolchain.config is cfg
    assert toolchain.device is cfg.device
    assert toolchain.family == "dace"
    assert toolchain.name == f"run_dace_{device}"
    workflow = toolchain.workflow
    assert isinstance(workflow.cached_translation, CachedStep)
    assert workflow.translation == translation
    assert workflow.bindings == bindings
    assert workflow.compilation == compiler


@needs_dace
def test_cache_lifetime_reaches_the_steps(tmp_path: Path) -> None:
    assert Path(container_on(tmp_path).dace.compilation().cache.root) == tmp_path / "builds"
    c = build_container({}, cache_dir=tmp_path, cache_lifetime="session")
    assert c.dace.toolchain_config().cache_lifetime is CacheLifetime.SESSION
    session = Path(c.dace.compilation().cache.root)
    assert session.parent.parent == tmp_path
    assert session.parent.name.startswith("stencilchain-session-")


def bare(step: Any) -> Any:
    """A workflow's translation is the bare step the container provided."""
    assert not isinstance(step, CachedStep)
    return step


@needs_dace
def test_external_workspace_reaches_a_step(session_cache_dir: Path) -> None:
    off = container_on(session_cache_dir, external_workspace=False).dace.toolchain()
    on = container_on(session_cache_dir, external_workspace=True).dace.toolchain()
    assert on.config.external_workspace is True
    assert on.workflow != off.workflow
    assert bare(on.workflow.translation).external_workspace is True
    assert bare(off.workflow.translation).external_workspace is False
    assert on.external_workspace and not off.external_workspace
    # and so the translation cache key
    assert repr(bare(on.workflow.translation)) != repr(bare(off.workflow.translation))


# --- 3. typed step builders ------------------------------------------------------------------

BUILDERS: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "translation": (
        make_dace_translator,
        {"auto_optimize_args": Mapping[str, object] | None, "disable_transforms": bool},
    ),
    "bindings": (make_dace_bindings, {"openmp_threshold": int}),
    "compilation": (
        make_dace_compiler,
        {"cpu_args": tuple[str, ...], "cuda_architectures": str | None, "native_cpu": bool},
    ),
}


@pytest.mark.parametrize("step", list(BUILDERS))
def test_builder_signature(step: str) -> None:
    """cfg is positional-only; every other parameter is keyword-only, typed, with a default."""
    builder, local = BUILDERS[step]
    params = list(inspect.signature(builder).parameters.values())
    hints = typing.get_type_hints(builder)
    assert params[0].name == "cfg"
    assert params[0].kind is inspect.Parameter.POSITIONAL_ONLY
    assert hints["cfg"] is DaCeConfig
    rest = params[1:]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in rest)
    assert all(p.default is not inspect.Parameter.empty for p in rest)
    assert {p.name: hints[p.name] for p in rest} == local
    config_fields = {f.name for f in dataclasses.fields(DaCeConfig)}
    assert not config_fields & {p.name for p in rest}


@needs_dace
def test_step_local_settings_are_keyword_only() -> None:
    cfg = DaCeConfig()
    with pytest.raises(TypeError):
        make_dace_translator(cfg, None)  # type: ignore[misc]
    with pytest.raises(TypeError):
        make_dace_bindings(cfg=cfg)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="config must be a DaCeConfig"):
        make_dace_compiler(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="config must be a DaCeConfig"):
        make_dace_translator(GTFNConfig())  # type: ignore[arg-type]


BAD_PARTIALS: list[tuple[str, dict[str, Any], str]] = [
    # shared settings belong to the config
    ("translation", {"device": Device.GPU}, "device"),
    ("translation", {"data_layout": DataLayout.UNIT_STRIDE}, "data_layout"),
    ("translation", {"auto_optimize": False}, "auto_optimize"),
    ("bindings", {"device": Device.CPU}, "device"),
    ("bindings", {"data_layout": DataLayout.UNIT_STRIDE}, "data_layout"),
    ("compilation", {"build_type": BuildType.DEBUG}, "build_type"),
    ("compilation", {"cache_dir": Path("/tmp")}, "cache_dir"),
    ("compilation", {"external_workspace": True}, "external_workspace"),
    # misspelled step-local settings
    ("translation", {"disable_transform": True}, "disable_transform"),
    ("translation", {"auto_optimise_args": {}}, "auto_optimise_args"),
    ("compilation", {"cpu_arg": ("-O2",)}, "cpu_arg"),
    ("compilation", {"cuda_architecture": "80"}, "cuda_architecture"),
    # wrong value types
    ("translation", {"disable_transforms": "no"}, "disable_transforms"),
    ("translation", {"disable_transforms": 1}, "disable_transforms"),
    ("translation", {"auto_optimize_args": [("validate", True)]}, "auto_optimize_args"),
    ("translation", {"auto_optimize_args": {1: True}}, "auto_optimize_args"),
    ("compilation", {"cpu_args": ["-O2"]}, "cpu_args"),
    ("compilation", {"cpu_args": ("-O2", 2)}, "cpu_args"),
    ("compilation", {"cuda_architectures": 80}, "cuda_architectures"),
]


@needs_dace
@pytest.mark.parametrize(
    ("step", "kwargs", "name"),
    BAD_PARTIALS,
    ids=[f"{s}-{'-'.join(k)}-{type(next(iter(k.values()))).__name__}" for s, k, _ in BAD_PARTIALS],
)
def test_bad_partial_fails_when_the_toolchain_is_built(
    step: str, kwargs: dict[str, Any], name: str, session_cache_dir: Path
) -> None:
    c = container_on(session_cache_dir)
    builder, _ = BUILDERS[step]
    with (
        override_step(getattr(c.dace, step), functools.partial(builder, **kwargs)),
        pytest.raises(TypeError, match=re.escape(name)),
    ):
        c.dace.toolchain()


@needs_dace
def test_a_gtfn_builder_on_a_dace_provider_fails_when_the_toolchain_is_built(
    session_cache_dir: Path,
) -> None:
    c = container_on(session_cache_dir)
    with (
        override_step(c.dace.translation, make_gtfn_translation),
        pytest.raises(TypeError, match="config must be a GTFNConfig"),
    ):
        c.dace.toolchain()


# --- mypy: one run on one snippet whose bad lines end in `# expected error` --------------------

SNIPPET = """
from __future__ import annotations

import functools

from stencilchain.containers import (
    DaCeConfig,
    build_container,
    make_dace_bindings,
    make_dace_compiler,
    make_dace_translator,
    override_step,
)
from stencilchain.program.device import Device
from stencilchain.steps.dace.compiler import DaCeCompiler
from stencilchain.steps.dace.translator import DaCeTranslator
from stencilchain.steps.settings import BuildType, DataLayout

# good partials: step-local settings with the right types
plain = functools.partial(make_dace_translator, disable_transforms=True)
validated = functools.partial(make_dace_translator, auto_optimize_args={"validate": False})
flags = functools.partial(make_dace_compiler, cpu_args=("-O2",), cuda_architectures="80")
step: DaCeTranslator = plain(DaCeConfig(device=Device.GPU))
compiler: DaCeCompiler = flags(DaCeConfig())

# shared settings
functools.partial(make_dace_translator, device=Device.GPU)  # expected error
functools.partial(make_dace_translator, data_layout=DataLayout.UNIT_STRIDE)  # expected error
functools.partial(make_dace_translator, auto_optimize=False)  # expected error
functools.partial(make_dace_bindings, device=Device.CPU)  # expected error
functools.partial(make_dace_compiler, build_type=BuildType.DEBUG)  # expected error
functools.partial(make_dace_compiler, external_workspace=True)  # expected error
# misspelled settings
functools.partial(make_dace_translator, disable_transform=True)  # expected error
functools.partial(make_dace_translator, auto_optimise_args={})  # expected error
functools.partial(make_dace_compiler, cpu_arg=("-O2",))  # expected error
# wrong value types
functools.partial(make_dace_translator, disable_transforms="no")  # expected error
functools.partial(make_dace_translator, disable_transforms=1)  # expected error
functools.partial(make_dace_translator, auto_optimize_args=[("validate", True)])  # expected error
functools.partial(make_dace_translator, auto_optimize_args={1: True})  # expected error
functools.partial(make_dace_compiler, cpu_args=["-O2"])  # expected error
functools.partial(make_dace_compiler, cuda_architectures=80)  # expected error

# customizing a step is one typed line
c = build_container()
with override_step(c.dace.translation, plain):
    pass
override_step(c.dace.translation, validated)
override_step(c.dace.compilation, flags)


def no_transforms(cfg: DaCeConfig) -> DaCeTranslator:
    return make_dace_translator(cfg, disable_transforms=True)


override_step(c.dace.translation, no_transforms)
override_step(c.dace.translation, lambda: plain(DaCeConfig()))  # expected error
override_step(c.dace.translation, functools.partial(make_dace_translator, device=Device.CPU))  # expected error
override_step(c.dace.translation, lambda cfg: make_dace_translator(cfg, disable_transforms=True))  # lambda of the default builder
"""
EXPECTED = "# expected error"
LAMBDA = "# lambda of the default builder"
ERROR = re.compile(r"^snippet\.py:(\d+): error: (.*)$", re.MULTILINE)


def lines_marked(marker: str) -> set[int]:
    text = textwrap.dedent(SNIPPET)
    return {n for n, line in enumerate(text.splitlines(), start=1) if line.endswith(marker)}


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[str]]:
    """mypy --strict on SNIPPET, with the project's mypy settings (so that the result does
    not depend on whether DaCe, which ships no type information, is installed): the
    snippet's error messages by line number."""
    folder = tmp_path_factory.mktemp("mypy_dace")
    (folder / "snippet.py").write_text(textwrap.dedent(SNIPPET))
    root = Path(stencilchain.__file__).resolve().parents[1]
    env = {**os.environ, "MYPYPATH": str(root)}  # the editable install is invisible to mypy
    proc = subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict", "--no-incremental",
            f"--config-file={root / 'pyproject.toml'}",
            f"--cache-dir={folder / 'cache'}", "snippet.py",
        ],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    errors: dict[int, list[str]] = {}
    for line, message in ERROR.findall(proc.stdout):
        errors.setdefault(int(line), []).append(message)
    unresolved = [m for ms in errors.values() for m in ms if "import-not-found" in m]
    assert not unresolved, proc.stdout
    return errors


@pytest.mark.slow
def test_mypy_rejects_bad_partials(mypy_errors: dict[int, list[str]]) -> None:
    expected = lines_marked(EXPECTED)
    assert len(expected) == 17
    missing = sorted(expected - set(mypy_errors))
    assert not missing, f"mypy accepted the bad lines {missing}"
    text = textwrap.dedent(SNIPPET).splitlines()
    shared = ("device=", "data_layout=", "auto_optimize=", "build_type=", "external_workspace=")
    for line in expected:
        messages = " ".join(mypy_errors[line])
        if text[line - 1].startswith("functools.partial") and any(
            s in text[line - 1] for s in shared
        ):
            assert "Unexpected keyword argument" in messages, (line, messages)


@pytest.mark.slow
def test_mypy_accepts_good_partials(mypy_errors: dict[int, list[str]]) -> None:
    allowed = lines_marked(EXPECTED) | lines_marked(LAMBDA)
    unexpected = {n: m for n, m in mypy_errors.items() if n not in allowed}
    assert not unexpected


@pytest.mark.slow
def test_mypy_accepts_a_lambda_of_the_default_builder(mypy_errors: dict[int, list[str]]) -> None:
    (line,) = lines_marked(LAMBDA)
    assert line not in mypy_errors, mypy_errors.get(line)


# --- 4. customizing a step by overriding its provider ---------------------------------------


@needs_dace
def test_override_with_factory_of_partial(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir, {"STENCILCHAIN_DEVICE": "gpu"})
    no_transforms = functools.partial(make_dace_translator, disable_transforms=True)
    with c.dace.translation.override(providers.Factory(no_transforms, c.dace.toolchain_config)):
        step = c.dace.translation()
        assert c.dace.toolchain().workflow.translation == step
    assert step == DaCeTranslator(device=Device.GPU, disable_transforms=True)
    assert c.dace.translation().disable_transforms is False  # restored on exit


@needs_dace
def test_override_step_with_partial(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir, data_layout="unit_stride", auto_optimize=False)
    validated = functools.partial(make_dace_translator, auto_optimize_args={"validate_all": True})
    with override_step(c.dace.translation, validated):
        step = c.dace.translation()
        assert c.dace.toolchain().workflow.translation == step
    assert step == DaCeTranslator(
        device=Device.CPU,
        auto_optimize=False,
        auto_optimize_args=(("validate_all", True),),
        data_layout=DataLayout.UNIT_STRIDE,
    )
    assert c.dace.translation().auto_optimize_args == ()


@needs_dace
def test_override_step_with_any_callable_taking_the_config(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir, {"STENCILCHAIN_BUILD_TYPE": "debug"})
    seen: list[DaCeConfig] = []

    def plain_translation(cfg: DaCeConfig) -> DaCeTranslator:
        seen.append(cfg)
        return make_dace_translator(cfg, disable_transforms=True)

    flags = functools.partial(make_dace_compiler, cpu_args=("-O1",), cuda_architectures="90")
    with (
        override_step(c.dace.translation, plain_translation),
        override_step(c.dace.compilation, flags),
    ):
        workflow = c.dace.toolchain().workflow
    assert seen == [c.dace.toolchain_config()]
    assert workflow.translation.disable_transforms is True
    assert workflow.compilation.cpu_args == ("-O1",)
    assert workflow.compilation.cuda_architectures == "90"
    assert workflow.compilation.build_type is BuildType.DEBUG  # shared setting from the config
    assert c.dace.compilation().cpu_args == DEFAULT_CPU_ARGS  # restored on exit


@needs_dace
def test_override_with_a_bare_builder(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir)
    with c.dace.translation.override(
        functools.partial(make_dace_translator, disable_transforms=True)
    ):
        try:
            toolchain = c.dace.toolchain()
        except TypeError:
            return  # refusing the bare builder when the toolchain is built is fine too
    step = toolchain.workflow.translation
    assert isinstance(step, DaCeTranslator)
    assert step.disable_transforms is True


def test_override_step_rejects_a_provider_that_is_not_a_step_factory(
    session_cache_dir: Path,
) -> None:
    c = container_on(session_cache_dir)
    with pytest.raises(TypeError, match="Factory"):
        override_step(c.dace.toolchain, make_dace_translator)
    with pytest.raises(TypeError, match="Factory"):
        override_step(c.dace.compile_workflow, make_dace_translator)


# --- 5. the toolchain builder owns the composition -------------------------------------------


@needs_dace
def test_override_is_the_step_inside_the_cache(private_cache_dir: Path) -> None:
    c = container_on(private_cache_dir)
    counting = CountingTranslation()

    def build(cfg: DaCeConfig) -> CountingTranslation:
        return counting

    with override_step(c.dace.translation, build):
        toolchain = c.dace.toolchain()
    cached = toolchain.workflow.cached_translation
    assert isinstance(cached, CachedStep)
    assert cached.step is counting
    assert Path(cached.cache.root).is_relative_to(private_cache_dir)  # type: ignore[attr-defined]

    program = laplacian.PROGRAM.ir
    first = cached(program)
    second = cached(program)  # a hit: the override is not called again
    assert counting.calls == [program.name]
    assert first == second == counting(program)


@needs_dace
def test_override_without_translation_cache_is_the_bare_step(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir, cached_translation=False)
    marker = DaCeTranslator(device=Device.CPU, disable_transforms=True)
    with override_step(c.dace.translation, lambda cfg: marker):
        toolchain = c.dace.toolchain()
    assert toolchain.workflow.translation is marker


@needs_dace
def test_compile_workflow_caches_its_translation_by_default(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir)
    workflow = c.dace.compile_workflow()
    assert isinstance(workflow, CompileWorkflow)
    assert isinstance(workflow.cached_translation, CachedStep)
    assert workflow.translation == c.dace.translation()
    assert Path(workflow.translation_cache.root).is_relative_to(session_cache_dir)  # type: ignore[attr-defined]
    assert isinstance(workflow.bindings, DaCeBindings)
    assert isinstance(workflow.compilation, DaCeCompiler)
    assert workflow == c.dace.toolchain().workflow
    no_transforms = functools.partial(make_dace_translator, disable_transforms=True)
    with override_step(c.dace.translation, no_transforms):
        overridden = c.dace.compile_workflow()
    assert isinstance(overridden.cached_translation, CachedStep)
    assert overridden.translation.disable_transforms is True


@needs_dace
def test_translation_cache_key_covers_the_dace_settings(session_cache_dir: Path) -> None:
    """Toolchains that translate differently never share translation cache entries."""
    program = laplacian.PROGRAM.ir
    keys = set()
    for settings in ({}, {"auto_optimize": False}, {"data_layout": "unit_stride"}):
        workflow = container_on(session_cache_dir, **settings).dace.toolchain().workflow
        keys.add(workflow.translation_key(program))
    c = container_on(session_cache_dir)
    with override_step(
        c.dace.translation, functools.partial(make_dace_translator, disable_transforms=True)
    ):
        keys.add(c.dace.toolchain().workflow.translation_key(program))
    gtfn = container_on(session_cache_dir).gtfn.toolchain().workflow
    keys.add(gtfn.translation_key(program))
    assert len(keys) == 5


@needs_dace
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
    workflow = c.dace.compile_workflow()
    assert isinstance(workflow.translation, DaCeTranslator)
    assert workflow.translation == c.dace.translation()
    assert isinstance(c.dace.toolchain().workflow.translation, DaCeTranslator)


@needs_dace
def test_override_after_the_toolchain_was_built_is_not_dropped(session_cache_dir: Path) -> None:
    c = container_on(session_cache_dir)
    before = c.dace.toolchain()
    assert before.workflow.translation.disable_transforms is False
    no_transforms = functools.partial(make_dace_translator, disable_transforms=True)
    try:
        with override_step(c.dace.translation, no_transforms):
            after = c.dace.toolchain()
    except (RuntimeError, TypeError, ValueError):
        return  # refusing the late override loudly is fine too
    assert after.workflow.translation.disable_transforms is True


# --- 6. the translator derives what the config decides ---------------------------------------

DERIVED_KEYS = ("device", "use_gpu_storage", "symbols")


@needs_dace
@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("layout", ["strided", "unit_stride"])
def test_translator_derives_device_storage_and_unit_strides(
    device: str, layout: str, session_cache_dir: Path
) -> None:
    c = container_on(session_cache_dir, device=device, data_layout=layout)
    step = c.dace.translation()
    derived = step.derived_auto_optimize_args(laplacian.PROGRAM.ir)
    assert derived["device"] == device
    assert derived["use_gpu_storage"] is (device == "gpu")
    fields = [p for p in laplacian.PROGRAM.ir.params if isinstance(p.type, ir.FieldType)]
    if layout == "unit_stride":
        assert derived["symbols"] == {f"{p.name}_s{len(p.type.dims) - 1}": 1 for p in fields}  # type: ignore[union-attr]
    else:
        assert derived["symbols"] == {}


@needs_dace
@pytest.mark.parametrize("key", DERIVED_KEYS)
def test_translator_rejects_derived_auto_optimize_args(key: str, session_cache_dir: Path) -> None:
    value: object = {"device": "gpu", "use_gpu_storage": True, "symbols": {"f_s1": 1}}[key]
    with pytest.raises(ValueError, match=key):
        DaCeTranslator(device=Device.CPU, auto_optimize_args=((key, value),))
    with pytest.raises(ValueError, match=key):
        make_dace_translator(DaCeConfig(), auto_optimize_args={key: value})
    step = DaCeTranslator(device=Device.CPU, auto_optimize_args=(("validate", True),))
    with pytest.raises(ValueError, match=key):
        dataclasses.replace(step, auto_optimize_args=((key, value),))
    with pytest.raises(ValueError, match=key):
        dataclasses.replace(step, auto_optimize_args=(("validate", True), (key, value)))
    c = container_on(session_cache_dir)
    with (
        override_step(c.dace.translation, functools.partial(make_dace_translator, auto_optimize_args={key: value})),
        pytest.raises(ValueError, match=key),
    ):  # fmt: skip
        c.dace.toolchain()


@needs_dace
def test_translator_auto_optimize_args_have_one_spelling() -> None:
    a = DaCeTranslator(device=Device.CPU, auto_optimize_args=(("validate_all", True), ("validate", False)))  # fmt: skip
    b = make_dace_translator(
        DaCeConfig(), auto_optimize_args={"validate": False, "validate_all": True}
    )
    assert a == b
    assert repr(a) == repr(b)  # the translation cache key


# --- 7. the deprecated flat front end --------------------------------------------------------

# what defines a toolchain; its runtime state (pools, metrics) is the container's
TOOLCHAIN_FIELDS = [f.name for f in dataclasses.fields(Toolchain) if f.compare]

# Flat keywords -> (config settings, translation options, compilation options).
FLAT_CASES: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "defaults": ({}, {}, {}),
    "config_only": (
        {
            "device": "gpu",
            "build_type": "debug",
            "cache_lifetime": "persistent",
            "data_layout": "unit_stride",
            "cached_translation": True,
            "metrics": True,
            "auto_optimize": False,
            "external_workspace": False,  # True is refused until it is supported (below)
        },
        {},
        {},
    ),
    "steps_only": (
        {},
        {"auto_optimize_args": {"validate": False}, "disable_transforms": True},
        {"cpu_args": ("-O1", "-fwrapv"), "cuda_architectures": "80"},
    ),
    "mixed": (
        {"build_type": "minsizerel", "auto_optimize": False, "cached_translation": False},
        {"disable_transforms": True},
        {"cpu_args": ("-O3",)},
    ),
    "typed_config_values": (
        {"device": Device.CPU, "build_type": BuildType.RELWITHDEBINFO, "metrics": False},
        {"auto_optimize_args": {"validate_all": True}},
        {},
    ),
}


def flat_backend(**keywords: Any) -> Toolchain:
    with pytest.warns(DeprecationWarning):
        return make_dace_backend(**keywords)


@needs_dace
def test_flat_front_end_warns_and_points_to_the_container(session_cache_dir: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make_dace_backend(environ={}, cache_dir=session_cache_dir)
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1
    message = str(deprecations[0].message)
    assert "deprecated" in message
    assert "build_container" in message and ".dace.toolchain()" in message
    assert "override_step" in message
    assert deprecations[0].filename == __file__  # points at the caller


@needs_dace
@pytest.mark.parametrize("case", list(FLAT_CASES))
def test_flat_front_end_equals_the_container_toolchain(case: str, tmp_path: Path) -> None:
    config, translation, compilation = FLAT_CASES[case]
    flat = flat_backend(environ={}, cache_dir=tmp_path, **config, **translation, **compilation)

    c = build_container({}, cache_dir=tmp_path, **config)
    if translation:
        override_step(c.dace.translation, functools.partial(make_dace_translator, **translation))
    if compilation:
        override_step(c.dace.compilation, functools.partial(make_dace_compiler, **compilation))
    built = c.dace.toolchain()

    for name in TOOLCHAIN_FIELDS:
        assert getattr(flat, name) == getattr(built, name), name
    assert flat.identity == built.identity  # so they share compiled programs


@needs_dace
def test_flat_front_end_maps_each_keyword_where_it_belongs(tmp_path: Path) -> None:
    config, translation, compilation = FLAT_CASES["mixed"]
    flat = flat_backend(environ={}, cache_dir=tmp_path, **config, **translation, **compilation)
    assert flat.config == DaCeConfig(
        cache_dir=tmp_path,
        build_type=BuildType.MINSIZEREL,
        auto_optimize=False,
        cached_translation=False,
    )
    step = flat.workflow.translation
    assert isinstance(step, DaCeTranslator)  # cached_translation=False
    assert step == DaCeTranslator(device=Device.CPU, auto_optimize=False, disable_transforms=True)
    assert flat.workflow.compilation.cpu_args == ("-O3",)
    assert flat.workflow.compilation.build_type is BuildType.MINSIZEREL
    assert flat.name == "run_dace_cpu"
    named = flat_backend(environ={}, cache_dir=tmp_path, name="run_dace_custom", metrics=True)
    assert named.name == "run_dace_custom"
    assert named.config.metrics is True


@needs_dace
def test_flat_front_end_reads_the_environ_it_is_given(tmp_path: Path) -> None:
    flat = flat_backend(
        environ={"STENCILCHAIN_DACE_AUTO_OPTIMIZE": "off", "STENCILCHAIN_BUILD_TYPE": "debug"},
        cache_dir=tmp_path,
        build_type="release",  # a keyword wins over the environment
    )
    assert flat.config.auto_optimize is False
    assert flat.config.build_type is BuildType.RELEASE


@needs_dace
@pytest.mark.parametrize(
    "keyword",
    [
        {"disable_transform": True},  # misspelled step setting
        {"auto_optimise": False},  # misspelled config setting
        {"enable_transforms": False},  # a GTFN step setting
        {"flavor": "pybind11"},  # a GTFN bindings setting
        {"openmp": False},  # a GTFN compiler setting
        {"config_file": "x.toml"},  # not a setting of a config
    ],
    ids=lambda k: next(iter(k)),
)
def test_flat_front_end_rejects_unknown_keywords(keyword: dict[str, Any], tmp_path: Path) -> None:
    (name,) = keyword
    with pytest.raises(TypeError, match=rf"unknown keyword '{name}'"):
        flat_backend(environ={}, cache_dir=tmp_path, **keyword)


@needs_dace
@pytest.mark.parametrize(
    ("keyword", "error"),
    [
        ({"disable_transforms": "yes"}, TypeError),
        ({"cpu_args": ["-O2"]}, TypeError),
        ({"auto_optimize_args": {"device": "gpu"}}, ValueError),
        ({"auto_optimize": "maybe"}, ConfigError),
    ],
    ids=lambda v: next(iter(v)) if isinstance(v, dict) else v.__name__,
)
def test_flat_front_end_checks_values_like_the_container(
    keyword: dict[str, Any], error: type[Exception], tmp_path: Path
) -> None:
    with pytest.raises(error):
        flat_backend(environ={}, cache_dir=tmp_path, **keyword)


# --- 8. the pre-built DaCe backends ----------------------------------------------------------

DACE_BACKENDS = {"run_dace_cpu": True, "run_dace_cpu_noopt": False, "run_dace_gpu": True}


@needs_dace
def test_prebuilt_dace_backends(session_cache_dir: Path) -> None:
    from stencilchain import backends

    assert set(DACE_BACKENDS) <= set(backends.NAMES)
    assert set(DACE_BACKENDS) <= set(dir(backends))
    for name, auto_optimize in DACE_BACKENDS.items():
        toolchain = getattr(backends, name)
        assert isinstance(toolchain, Toolchain), name
        assert toolchain.name == name
        assert toolchain.family == "dace"
        assert toolchain.config.auto_optimize is auto_optimize, name
        assert toolchain.config.cache_dir == session_cache_dir  # never the user's cache
        step = toolchain.workflow.translation
        assert isinstance(step, DaCeTranslator)
        assert step.auto_optimize is auto_optimize
        assert step.device is toolchain.device
    assert backends.run_dace_cpu.device is Device.CPU
    assert backends.run_dace_cpu_noopt.device is Device.CPU
    assert backends.run_dace_gpu.device is Device.GPU
    assert backends.run_dace_gpu.workflow.compilation.device is Device.GPU
    assert backends.run_dace_cpu_noopt.workflow.bindings == backends.run_dace_cpu.workflow.bindings
    assert backends.run_dace_cpu_noopt.workflow.compilation == backends.run_dace_cpu.workflow.compilation  # fmt: skip
    names = [getattr(backends, n).name for n in backends.NAMES]
    assert len(set(names)) == len(names)
    identities = {getattr(backends, n).identity for n in DACE_BACKENDS}
    assert len(identities) == len(DACE_BACKENDS)


def test_session_fixtures_are_the_prebuilt_dace_backends(request: pytest.FixtureRequest) -> None:
    """The end-to-end tests' dace_cpu and dace_cpu_noopt equal run_dace_cpu and
    run_dace_cpu_noopt (and share their compiled programs) when the environment holds
    only the test settings of conftest.py."""
    from stencilchain import backends

    others = sorted(
        k for k in os.environ
        if k.startswith("STENCILCHAIN_")
        and k not in ("STENCILCHAIN_CACHE_DIR", "STENCILCHAIN_CACHE_LIFETIME")
    )  # fmt: skip
    if others:
        pytest.skip(f"the environment sets {others}, which the pre-built backends read")
    for fixture, name in (("dace_cpu", "run_dace_cpu"), ("dace_cpu_noopt", "run_dace_cpu_noopt")):
        toolchain = request.getfixturevalue(fixture)
        prebuilt = getattr(backends, name)
        for field in TOOLCHAIN_FIELDS:
            assert getattr(toolchain, field) == getattr(prebuilt, field), (fixture, field)
        assert toolchain.identity == prebuilt.identity


def test_external_workspace_through_the_container_and_the_flat_front_end(
    private_cache_dir: Path,
) -> None:
    """The setting reaches the translator both ways, and the two toolchains are equal."""
    import warnings

    pytest.importorskip("dace")

    from stencilchain.containers import build_container, make_dace_backend

    container = build_container({}, cache_dir=private_cache_dir, external_workspace=True)
    toolchain = container.dace.toolchain()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        flat = make_dace_backend(environ={}, cache_dir=private_cache_dir, external_workspace=True)
    for t in (toolchain, flat):
        assert t.external_workspace
        assert bare(t.workflow.translation).external_workspace is True
    assert flat.identity == toolchain.identity
