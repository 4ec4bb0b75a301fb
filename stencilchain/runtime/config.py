"""What the runtime needs of a toolchain's configuration: a protocol, not the config classes.

The frozen config classes live a layer up, in `stencilchain.containers.config`, beside the
table of settings they are parsed from; a toolchain only reads the few settings below.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, ClassVar, Protocol

from stencilchain.program.device import Device


def default_build_jobs() -> int:
    """The default of `build_jobs`: the number of CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class RuntimeConfig(Protocol):
    """The settings a toolchain reads when it compiles and runs programs (a frozen
    dataclass: its compared fields identify the configuration, see `output_settings`)."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    @property
    def device(self) -> Device: ...

    @property
    def metrics(self) -> bool: ...

    @property
    def build_jobs(self) -> int: ...

    @property
    def external_workspace(self) -> bool: ...


def output_settings(config: RuntimeConfig) -> str:
    """The text of the settings of `config` that can change a compiled program (its
    compared fields): what identifies a toolchain's configuration, without `build_jobs`."""
    values = ", ".join(
        f"{f.name}={getattr(config, f.name)!r}" for f in dataclasses.fields(config) if f.compare
    )
    return f"{type(config).__name__}({values})"
