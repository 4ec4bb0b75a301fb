"""Customizing a step: override its provider with another builder taking the config."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from dependency_injector import providers

from stencilchain.containers.config import ToolchainConfig

C = TypeVar("C", bound=ToolchainConfig)
S = TypeVar("S")


def override_step(provider: Any, builder: Callable[[C], S], /) -> Any:
    """Override a step provider (e.g. `container.gtfn.translation`) with `builder`, wired to
    the same config. Use as a context manager in tests, or keep it for the process:

        with override_step(c.gtfn.translation, partial(make_gtfn_translation, enable_transforms=False)):
            ...
    """
    if not isinstance(provider, providers.Factory):
        raise TypeError(f"override_step() takes a step's Factory provider, got {provider!r}")
    return provider.override(providers.Factory(builder, *provider.args))
