"""Customizing a step: override its provider with another builder taking the config."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

from dependency_injector import providers

from stencilchain.containers.config import DaCeConfig, GTFNConfig

S = TypeVar("S")


@overload
def override_step(provider: Any, builder: Callable[[GTFNConfig], S], /) -> Any: ...


@overload
def override_step(provider: Any, builder: Callable[[DaCeConfig], S], /) -> Any: ...


def override_step(provider: Any, builder: Callable[[Any], S], /) -> Any:
    """Override a step provider (e.g. `container.gtfn.translation`) with `builder`, wired to
    the same config. Use as a context manager in tests, or keep it for the process:

        with override_step(c.gtfn.translation, partial(make_gtfn_translation, enable_transforms=False)):
            ...
    """
    is_step = (
        isinstance(provider, providers.Factory) and len(provider.args) == 1 and not provider.kwargs
    )
    if not is_step:  # a step's Factory takes the config alone
        raise TypeError(f"override_step() takes a step's Factory provider, got {provider!r}")
    return provider.override(providers.Factory(builder, *provider.args))
