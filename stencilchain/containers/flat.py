"""A flat keyword front end for callers who want one call instead of a container."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from stencilchain.containers.config import DaCeConfig
from stencilchain.containers.dace_builders import (
    make_dace_bindings,
    make_dace_compiler,
    make_dace_translator,
)
from stencilchain.runtime.toolchain import Toolchain


def _keyword_only(builder: Callable[..., Any]) -> set[str]:
    return {
        p.name
        for p in inspect.signature(builder).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }


def make_dace_backend(
    *, name: str | None = None, environ: Mapping[str, str] | None = None, **settings: Any
) -> Toolchain:
    """Deprecated: a DaCe toolchain from flat keywords.

    Each keyword goes to where it belongs: a DaCeConfig field (device, build_type,
    auto_optimize, ...) or a step builder's own setting (auto_optimize_args,
    disable_transforms, cpu_args, ...). The result equals, field by field, the toolchain
    of `build_container(environ, **config).dace` with the same step overrides.
    """
    warnings.warn(
        "make_dace_backend() is deprecated: build the toolchain through the container, "
        "build_container(**config).dace.toolchain(), and customize steps with "
        "override_step(container.dace.translation, functools.partial(make_dace_translator, ...))",
        DeprecationWarning,
        stacklevel=2,
    )
    from stencilchain.containers.application import build_container
    from stencilchain.containers.overrides import override_step

    config_fields = {f.name for f in dataclasses.fields(DaCeConfig)}
    step_builders: dict[str, Callable[..., Any]] = {
        "translation": make_dace_translator,
        "bindings": make_dace_bindings,
        "compilation": make_dace_compiler,
    }
    per_step: dict[str, dict[str, Any]] = {step: {} for step in step_builders}
    config: dict[str, Any] = {}
    for key, value in settings.items():
        if key in config_fields:
            config[key] = value
            continue
        for step, builder in step_builders.items():
            if key in _keyword_only(builder):
                per_step[step][key] = value
                break
        else:
            known = sorted(config_fields | set().union(*map(_keyword_only, step_builders.values())))
            raise TypeError(
                f"make_dace_backend(): unknown keyword {key!r}; known: {', '.join(known)}"
            )
    container = build_container(environ, **config)
    if name is not None:
        container.dace.name.override(name)
    for step, options in per_step.items():
        if options:
            override_step(
                getattr(container.dace, step), functools.partial(step_builders[step], **options)
            )
    toolchain: Toolchain = container.dace.toolchain()
    return toolchain
