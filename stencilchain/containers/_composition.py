"""What the containers compose the steps with: where the caches are, the compile workflow
and the toolchain. Not for users: they override providers (see `override_step`)."""

from __future__ import annotations

import functools
import inspect
import typing
from typing import TypedDict, TypeVar

from stencilchain.containers.config import ToolchainConfig
from stencilchain.program import ir
from stencilchain.program.device import Device
from stencilchain.runtime.build_policy import BuildPolicy
from stencilchain.runtime.metrics import MetricsRegistry
from stencilchain.runtime.pools import CompiledProgramPools
from stencilchain.runtime.toolchain import CompiledProgram, Toolchain
from stencilchain.steps.build.compiler_step import CompilerStep
from stencilchain.steps.build.tools import BuildEnvironment
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.caches.cache_root import CacheLocation, cache_location
from stencilchain.steps.dace.family import DACE
from stencilchain.steps.family import Family
from stencilchain.steps.gtfn.family import GTFN
from stencilchain.steps.settings import BuildType, CacheLifetime
from stencilchain.steps.stages import CompiledArtifact, ExtensionSource, ProgramSource
from stencilchain.steps.workflow import CompileWorkflow, Step

# Every family, in the order a cache listing tries them on a marker that names none.
FAMILIES: tuple[Family, ...] = (GTFN, DACE)


def cache_location_of(cfg: ToolchainConfig, /) -> CacheLocation:
    """The cache folders of `cfg` (a temporary root for `session` lifetime): the one place
    that says where a configuration's caches are."""
    return cache_location(cfg.cache_lifetime, cfg.cache_dir, cfg.cache_salt, FAMILIES)


class CompilerSettings(TypedDict):
    """What every family's compilation step takes from the shared config."""

    device: Device
    build_type: BuildType
    cache: BuildCache


def compiler_settings(cfg: ToolchainConfig, /) -> CompilerSettings:
    """The shared settings of a compilation step: `cfg`'s device, build type and build cache."""
    return CompilerSettings(
        device=cfg.device,
        build_type=cfg.build_type,
        cache=cache_location_of(cfg).build_cache(),
    )


def make_build_policy(cfg: ToolchainConfig, /) -> BuildPolicy:
    """What a toolchain of `cfg` does around its builds: prune the persistent caches to
    `cache_max_size` after a new build (a session cache is never pruned: it is removed at
    exit), and build a damaged cached module again."""
    limit = cfg.cache_max_size
    if limit is None or cfg.cache_lifetime is not CacheLifetime.PERSISTENT:
        return BuildPolicy()
    return BuildPolicy(prune=cache_location_of(cfg), max_size=limit)


C = TypeVar("C", bound=ToolchainConfig)


def require_config(builder: str, cfg: object, expected: type[C]) -> C:
    """`cfg`, if it is the config of the builder's family (a builder checks its config; the
    step it builds checks its own settings)."""
    if not isinstance(cfg, expected):
        raise TypeError(
            f"{builder}(): the config must be a {expected.__name__}, got {type(cfg).__name__}"
        )
    return cfg


def reject_builder(name: str, step: object) -> None:
    """TypeError if `step` is a step *builder* (it takes a config), e.g. one passed to
    `provider.override(...)` directly, which dependency-injector would use as the step."""
    if not callable(step):
        raise TypeError(f"the {name} step must be callable, got {step!r}")
    func = step.func if isinstance(step, functools.partial) else step
    try:
        hints = typing.get_type_hints(func)
        first = next(iter(inspect.signature(func).parameters), None)
    except (TypeError, ValueError, NameError):
        return
    annotation = hints.get(first) if first else None
    if isinstance(annotation, type) and issubclass(annotation, ToolchainConfig):
        raise TypeError(
            f"the {name} provider returned the step builder {step!r}, not a step; override "
            f"it with override_step(provider, builder) or providers.Factory(builder, toolchain_config)"
        )


def make_compile_workflow(
    cfg: ToolchainConfig,
    /,
    *,
    translation: Step[ir.Program, ProgramSource],
    bindings: Step[ProgramSource, ExtensionSource],
    compilation: Step[ExtensionSource, CompiledArtifact],
    environment: BuildEnvironment | None = None,
) -> CompileWorkflow:
    """The three steps composed, the translation behind the persistent translation cache
    and the whole behind the load index unless `cfg.cached_translation` is off. The cache
    wraps the step it is given, so an overridden translation is the one that runs on a
    miss; the index keys cover each step's settings, so an overridden step has its own. A compilation step that has no
    build environment of its own runs its processes in `environment` (the container's)."""
    for name, step in (
        ("translation", translation),
        ("bindings", bindings),
        ("compilation", compilation),
    ):
        reject_builder(name, step)
    if (
        environment is not None
        and isinstance(compilation, CompilerStep)
        and compilation.environment is None
    ):
        compilation = compilation.with_environment(environment)
    if not cfg.cached_translation:
        return CompileWorkflow(translation, bindings, compilation)
    location = cache_location_of(cfg)
    return CompileWorkflow(
        translation, bindings, compilation, location.translation_cache(), location.load_index()
    )


def make_toolchain(
    cfg: ToolchainConfig,
    /,
    *,
    name: str,
    family: str,
    workflow: CompileWorkflow,
    pools: CompiledProgramPools[CompiledProgram],
    metrics: MetricsRegistry,
    policy: BuildPolicy | None = None,
) -> Toolchain:
    """A toolchain running the container's compile workflow (whatever provided it)."""
    if not isinstance(workflow, CompileWorkflow):
        raise TypeError(
            f"the compile_workflow provider returned {workflow!r}, not a CompileWorkflow; "
            "override it with a provider of one (e.g. providers.Object(CompileWorkflow(...)))"
        )
    return Toolchain(
        name=name,
        family=family,
        config=cfg,
        workflow=workflow,
        pools=pools,
        metrics=metrics,
        policy=BuildPolicy() if policy is None else policy,
    )


def default_toolchain_name(family: str, cfg: ToolchainConfig) -> str:
    """run_<family>_<device>, the name the pre-built toolchains use."""
    return f"run_{family}_{cfg.device.value}"
