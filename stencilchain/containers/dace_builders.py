"""Typed step builders of the DaCe family (the `dace` extra).

Same rules as the GTFN builders (builders.py): the config positionally, only step-local
settings as typed keyword-only arguments.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping

from stencilchain.containers.builders import cache_folder, require, require_config
from stencilchain.containers.config import DaCeConfig
from stencilchain.errors import MissingExtraError
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.dace.bindings import DaCeBindings
from stencilchain.steps.dace.compiler import DEFAULT_CPU_ARGS, DaCeCompiler
from stencilchain.steps.dace.translator import DaCeTranslator


def require_dace(builder: str) -> None:
    """MissingExtraError unless DaCe can be imported (checked without importing it)."""
    if importlib.util.find_spec("dace") is None:
        raise MissingExtraError(
            f"{builder}(): the DaCe toolchains need DaCe, which is not installed; "
            "install the extra: pip install 'stencilchain[dace]'"
        )


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
    require_dace("make_dace_translator")
    require("make_dace_translator", "disable_transforms", disable_transforms, bool)
    if auto_optimize_args is not None:
        require("make_dace_translator", "auto_optimize_args", auto_optimize_args, Mapping)
    return DaCeTranslator(
        device=cfg.device,
        auto_optimize=cfg.auto_optimize,
        auto_optimize_args=tuple(sorted((auto_optimize_args or {}).items())),
        disable_transforms=disable_transforms,
        data_layout=cfg.data_layout,
        external_workspace=cfg.external_workspace,
    )


def make_dace_bindings(cfg: DaCeConfig, /, *, openmp_threshold: int = 65536) -> DaCeBindings:
    """The bindings (GTFN's argument-checking module around a shim calling the SDFG);
    calls on arrays of fewer than `openmp_threshold` points run on one thread."""
    cfg = require_config("make_dace_bindings", cfg, DaCeConfig)
    require("make_dace_bindings", "openmp_threshold", openmp_threshold, int)
    return DaCeBindings(
        device=cfg.device, data_layout=cfg.data_layout, openmp_threshold=openmp_threshold
    )


def make_dace_compiler(
    cfg: DaCeConfig,
    /,
    *,
    cpu_args: tuple[str, ...] = DEFAULT_CPU_ARGS,
    cuda_architectures: str | None = None,
) -> DaCeCompiler:
    """DaCe's build of the SDFG plus the extension, into `cfg`'s build cache."""
    cfg = require_config("make_dace_compiler", cfg, DaCeConfig)
    require_dace("make_dace_compiler")
    require("make_dace_compiler", "cpu_args", cpu_args, tuple)
    for flag in cpu_args:
        require("make_dace_compiler", "each of cpu_args", flag, str)
    if cuda_architectures is not None:
        require("make_dace_compiler", "cuda_architectures", cuda_architectures, str)
    return DaCeCompiler(
        device=cfg.device,
        build_type=cfg.build_type,
        cache=BuildCache(cache_folder(cfg, "builds")),
        cpu_args=cpu_args,
        cuda_architectures=cuda_architectures,
    )
