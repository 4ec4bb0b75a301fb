"""Typed step builders of the DaCe family (the `dace` extra).

Same rules as the GTFN builders (builders.py): the config positionally, only step-local
settings as typed keyword-only arguments; the steps check their settings (and that DaCe is
installed: `MissingExtraError`) themselves.
"""

from __future__ import annotations

from collections.abc import Mapping

from stencilchain.containers._composition import compiler_settings, require_config
from stencilchain.containers.config import DaCeConfig
from stencilchain.steps.dace.bindings import DaCeBindings
from stencilchain.steps.dace.compiler import DEFAULT_CPU_ARGS, DaCeCompiler
from stencilchain.steps.dace.translator import DaCeTranslator


def make_dace_translator(
    cfg: DaCeConfig,
    /,
    *,
    auto_optimize_args: Mapping[str, object] | None = None,
    disable_transforms: bool = False,
) -> DaCeTranslator:
    """The SDFG translation for `cfg`'s device, data layout, auto-optimize and external
    workspace settings."""
    cfg = require_config("make_dace_translator", cfg, DaCeConfig)
    args: object = auto_optimize_args or ()
    if isinstance(args, Mapping):
        args = tuple(args.items())
    return DaCeTranslator(
        device=cfg.device,
        auto_optimize=cfg.auto_optimize,
        auto_optimize_args=args,  # type: ignore[arg-type]  # the step checks it
        disable_transforms=disable_transforms,
        data_layout=cfg.data_layout,
        external_workspace=cfg.external_workspace,
    )


def make_dace_bindings(cfg: DaCeConfig, /, *, openmp_threshold: int = 65536) -> DaCeBindings:
    """The bindings (the argument-checking module around a shim calling the SDFG); calls on
    domains of fewer than `openmp_threshold` points run on one thread."""
    cfg = require_config("make_dace_bindings", cfg, DaCeConfig)
    return DaCeBindings(
        device=cfg.device, data_layout=cfg.data_layout, openmp_threshold=openmp_threshold
    )


def make_dace_compiler(
    cfg: DaCeConfig,
    /,
    *,
    cpu_args: tuple[str, ...] = DEFAULT_CPU_ARGS,
    cuda_architectures: str | None = None,
    native_cpu: bool = True,
) -> DaCeCompiler:
    """DaCe's build of the SDFG plus the extension, into `cfg`'s build cache. `native_cpu`:
    the SDFG for this host's CPU (-march=native; the build key names the CPU)."""
    cfg = require_config("make_dace_compiler", cfg, DaCeConfig)
    return DaCeCompiler(
        **compiler_settings(cfg),
        cpu_args=cpu_args,
        cuda_architectures=cuda_architectures,
        native_cpu=native_cpu,
    )
