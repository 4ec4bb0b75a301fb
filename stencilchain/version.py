"""The package version, part of every cache key."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("stencilchain")
    except metadata.PackageNotFoundError:
        from stencilchain import __version__

        return __version__
