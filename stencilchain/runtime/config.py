"""The frozen configuration a toolchain's steps are built from.

These are plain values; where they come from (the `STENCILCHAIN_*` environment, a config
file, keyword overrides) is the containers' business (`stencilchain.containers.config`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stencilchain.program.device import Device
from stencilchain.steps.settings import BuildType, CacheLifetime, DataLayout


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

    @property
    def external_workspace(self) -> bool:
        """Whether programs keep their temporaries in a buffer the caller provides."""
        return False


@dataclass(frozen=True, kw_only=True)
class GTFNConfig(ToolchainConfig):
    """Configuration of the GTFN (C++/CUDA) toolchains."""


@dataclass(frozen=True, kw_only=True)
class DaCeConfig(ToolchainConfig):
    """Configuration of the DaCe toolchains."""

    auto_optimize: bool = True
    external_workspace: bool = False  # a field here, a property in ToolchainConfig
