"""Typed step builders: each takes the frozen config positionally and only its own
step-local settings as keyword-only arguments.

A shared setting (device, build type, ...) passed to a builder is a TypeError, because
no builder has such a parameter; mypy rejects it inside a `functools.partial` too.
Step-local values are type-checked when the toolchain is built.
"""

from __future__ import annotations

import functools
import inspect
import typing
from pathlib import Path
from typing import TypeVar

from stencilchain.containers.config import GTFNConfig, ToolchainConfig
from stencilchain.program import ir
from stencilchain.runtime.compile_workflow import CompileWorkflow, cached_translation
from stencilchain.runtime.toolchain import Toolchain
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.caches.cache_root import cache_root
from stencilchain.steps.caches.translation_cache import TranslationCache
from stencilchain.steps.gtfn.bindings import GTFNBindingsStep
from stencilchain.steps.gtfn.compiler import CMakeCompiler
from stencilchain.steps.gtfn.translation import GTFNTranslationStep
from stencilchain.steps.stages import CompiledArtifact, ExtensionSource, ProgramSource
from stencilchain.steps.workflow import Step

C = TypeVar("C", bound=ToolchainConfig)


def require(builder: str, name: str, value: object, expected: type | tuple[type, ...]) -> None:
    """TypeError unless `value` is an instance of `expected` (bool is not an int here)."""
    ok = isinstance(value, expected)
    if isinstance(value, bool) and expected in (int, (int,)):
        ok = False
    if not ok:
        names = (
            expected.__name__
            if isinstance(expected, type)
            else " or ".join(t.__name__ for t in expected)
        )
        raise TypeError(
            f"{builder}(): {name} must be {names}, got {type(value).__name__} {value!r}"
        )


def require_config(builder: str, cfg: object, expected: type[C]) -> C:
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


def cache_folder(cfg: ToolchainConfig, *parts: str) -> Path:
    """A folder of the configured cache (a temporary one for `session` lifetime)."""
    return cache_root(cfg.cache_lifetime, cfg.cache_dir).joinpath(*parts)


# --- GTFN -------------------------------------------------------------------------------


def make_gtfn_translation(
    cfg: GTFNConfig, /, *, enable_transforms: bool = True, openmp_threshold: int = 65536
) -> GTFNTranslationStep:
    """The C++/CUDA translation for `cfg`'s device and data layout."""
    cfg = require_config("make_gtfn_translation", cfg, GTFNConfig)
    require("make_gtfn_translation", "enable_transforms", enable_transforms, bool)
    require("make_gtfn_translation", "openmp_threshold", openmp_threshold, int)
    return GTFNTranslationStep(
        device=cfg.device,
        enable_transforms=enable_transforms,
        data_layout=cfg.data_layout,
        openmp_threshold=openmp_threshold,
    )


def make_gtfn_bindings(cfg: GTFNConfig, /, *, flavor: str = "capi") -> GTFNBindingsStep:
    """The bindings of `cfg`'s device and data layout ("capi" or "pybind11" module)."""
    cfg = require_config("make_gtfn_bindings", cfg, GTFNConfig)
    require("make_gtfn_bindings", "flavor", flavor, str)
    return GTFNBindingsStep(device=cfg.device, data_layout=cfg.data_layout, flavor=flavor)


def make_gtfn_compiler(
    cfg: GTFNConfig, /, *, extra_flags: tuple[str, ...] = (), openmp: bool = True
) -> CMakeCompiler:
    """The CMake + Ninja compiler building into `cfg`'s build cache."""
    cfg = require_config("make_gtfn_compiler", cfg, GTFNConfig)
    require("make_gtfn_compiler", "extra_flags", extra_flags, tuple)
    require("make_gtfn_compiler", "openmp", openmp, bool)
    for flag in extra_flags:
        require("make_gtfn_compiler", "each of extra_flags", flag, str)
    return CMakeCompiler(
        device=cfg.device,
        build_type=cfg.build_type,
        cache=BuildCache(cache_folder(cfg, "builds")),
        extra_flags=extra_flags,
        openmp=openmp,
    )


# --- composition ----------------------------------------------------------------------------


def make_compile_workflow(
    cfg: ToolchainConfig,
    /,
    *,
    translation: Step[ir.Program, ProgramSource],
    bindings: Step[ProgramSource, ExtensionSource],
    compilation: Step[ExtensionSource, CompiledArtifact],
) -> CompileWorkflow:
    """The three steps composed; the translation behind the persistent translation cache
    unless `cfg.cached_translation` is off. The cache wraps the step it is given, so an
    overridden translation is the one that runs on a miss."""
    cfg = require_config("make_compile_workflow", cfg, ToolchainConfig)
    for name, step in (
        ("translation", translation),
        ("bindings", bindings),
        ("compilation", compilation),
    ):
        reject_builder(name, step)
    if cfg.cached_translation:
        translation = cached_translation(
            translation, TranslationCache(cache_folder(cfg, "translations"))
        )
    return CompileWorkflow(translation, bindings, compilation)


def make_toolchain(
    cfg: ToolchainConfig,
    /,
    *,
    name: str,
    family: str,
    translation: Step[ir.Program, ProgramSource],
    bindings: Step[ProgramSource, ExtensionSource],
    compilation: Step[ExtensionSource, CompiledArtifact],
) -> Toolchain:
    """A toolchain of the given bare steps (it adds the translation cache itself)."""
    workflow = make_compile_workflow(
        cfg, translation=translation, bindings=bindings, compilation=compilation
    )
    return Toolchain(
        name=name,
        family=family,
        config=cfg,
        workflow=workflow,
        device=cfg.device,
        collect_metrics=cfg.metrics,
    )


def default_toolchain_name(family: str, cfg: ToolchainConfig) -> str:
    """run_<family>_<device>, the name the pre-built toolchains use."""
    return f"run_{family}_{cfg.device.value}"
