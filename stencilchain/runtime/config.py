"""The frozen configuration a toolchain's steps are built from.

These are plain values; where they come from (the `STENCILCHAIN_*` environment, a config
file, keyword overrides) is the containers' business (`stencilchain.containers.config`).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path

from stencilchain.errors import ConfigError
from stencilchain.program.device import Device
from stencilchain.steps.settings import BuildType, CacheLifetime, DataLayout


def default_build_jobs() -> int:
    """The default of `build_jobs`: the number of CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass(frozen=True, kw_only=True)
class ToolchainConfig:
    """Settings shared by every toolchain family."""

    device: Device = Device.CPU
    build_type: BuildType = BuildType.RELEASE
    cache_lifetime: CacheLifetime = CacheLifetime.PERSISTENT
    cache_dir: Path | None = None
    data_layout: DataLayout = DataLayout.STRIDED
    cached_translation: bool = True
    metrics: bool = False
    # How many programs `Toolchain.compile_many` builds at once. It changes no output, so it
    # is not compared: it is part of no cache key and of no toolchain's identity.
    build_jobs: int = field(default_factory=default_build_jobs, compare=False)
    # The persistent cache's size limit in bytes (None: unlimited), kept by pruning the least
    # recently used entries after builds. It changes no output either (compare=False).
    cache_max_size: int | None = field(default=None, compare=False)
    # Mixed into every cache key (translations, builds, their support folders): another salt
    # finds none of the entries made under this one, and removes none of them.
    cache_salt: str = ""

    def __post_init__(self) -> None:
        jobs = self.build_jobs
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ConfigError(f"build_jobs={jobs!r} is not valid; accepted: a positive integer")
        size = self.cache_max_size
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            raise ConfigError(
                f"cache_max_size={size!r} is not valid; accepted: a size in bytes, or None"
            )
        if not isinstance(self.cache_salt, str):
            raise ConfigError(f"cache_salt={self.cache_salt!r} is not valid; accepted: text")

    @property
    def external_workspace(self) -> bool:
        """Whether programs keep their temporaries in a buffer the caller provides."""
        return False


def output_settings(config: ToolchainConfig) -> str:
    """The text of the settings of `config` that can change a compiled program (its
    compared fields): what identifies a toolchain's configuration, without `build_jobs`."""
    values = ", ".join(
        f"{f.name}={getattr(config, f.name)!r}" for f in dataclasses.fields(config) if f.compare
    )
    return f"{type(config).__name__}({values})"


@dataclass(frozen=True, kw_only=True)
class GTFNConfig(ToolchainConfig):
    """Configuration of the GTFN (C++/CUDA) toolchains."""


@dataclass(frozen=True, kw_only=True)
class DaCeConfig(ToolchainConfig):
    """Configuration of the DaCe toolchains."""

    auto_optimize: bool = True
    external_workspace: bool = False  # a field here, a property in ToolchainConfig
