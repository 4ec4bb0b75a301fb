"""Typed step builders of the GTFN family: each takes the frozen config positionally and
only its own step-local settings as keyword-only arguments.

A shared setting (device, build type, ...) passed to a builder is a TypeError, because
no builder has such a parameter; mypy rejects it inside a `functools.partial` too.
Builders only pass values: each step checks its settings itself (`__post_init__`), so a
step built directly is checked the same way.
"""

from __future__ import annotations

from stencilchain.containers._composition import compiler_settings, require_config
from stencilchain.containers.config import GTFNConfig
from stencilchain.steps.gtfn.bindings import GTFNBindingsStep
from stencilchain.steps.gtfn.compiler import CMakeCompiler
from stencilchain.steps.gtfn.tiling import Materialization
from stencilchain.steps.gtfn.translation import GTFNTranslationStep


def make_gtfn_translation(
    cfg: GTFNConfig,
    /,
    *,
    enable_transforms: bool = True,
    openmp_threshold: int = 65536,
    materialization: Materialization = Materialization.AUTO,
) -> GTFNTranslationStep:
    """The C++/CUDA translation for `cfg`'s device and data layout. `materialization`:
    whether intermediates read at several offsets are kept in per-tile buffers (AUTO: the
    cost model of `stencilchain.steps.gtfn.tiling` decides; RECOMPUTE: never; ALWAYS)."""
    cfg = require_config("make_gtfn_translation", cfg, GTFNConfig)
    return GTFNTranslationStep(
        device=cfg.device,
        enable_transforms=enable_transforms,
        data_layout=cfg.data_layout,
        openmp_threshold=openmp_threshold,
        materialization=materialization,
    )


def make_gtfn_bindings(cfg: GTFNConfig, /, *, flavor: str = "capi") -> GTFNBindingsStep:
    """The bindings of `cfg`'s device and data layout ("capi" or "pybind11" module)."""
    cfg = require_config("make_gtfn_bindings", cfg, GTFNConfig)
    return GTFNBindingsStep(device=cfg.device, data_layout=cfg.data_layout, flavor=flavor)


def make_gtfn_compiler(
    cfg: GTFNConfig,
    /,
    *,
    extra_flags: tuple[str, ...] = (),
    openmp: bool = True,
    native_cpu: bool = True,
) -> CMakeCompiler:
    """The CMake + Ninja compiler building into `cfg`'s build cache. `native_cpu`: the
    program's loops for this host's CPU (-march=native; the build key names the CPU)."""
    cfg = require_config("make_gtfn_compiler", cfg, GTFNConfig)
    return CMakeCompiler(
        **compiler_settings(cfg),
        extra_flags=extra_flags,
        openmp=openmp,
        native_cpu=native_cpu,
    )
