"""The model's own configuration section: defaults, then a TOML file, then the environment.

    [model]              # or SCMODEL_<NAME> variables, e.g. SCMODEL_NX=128
    nx = 64              # global grid points along I, J (doubly periodic) and K
    ny = 64
    nz = 16
    steps = 10
    ranks = "auto"       # ranks along I and J: "auto" or e.g. "2x2"
    family = "gtfn"      # gtfn, dace or embedded
    cfl = 0.4            # the time step's Courant number
    nu = 0.02            # horizontal diffusivity (grid units)
    kappa = 0.5          # vertical diffusivity (grid units)

    [stencils]           # stencilchain's settings, as in its configuration reference
    build_type = "release"

The file is SCMODEL_CONFIG (or `--config`). In the `stencils` section, a STENCILCHAIN_*
variable that is set wins over the file, and the file over stencilchain's defaults.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stencilchain import _toml as tomllib
from stencilchain.errors import ConfigError

PREFIX = "SCMODEL_"
FAMILIES = ("gtfn", "dace", "embedded")


@dataclasses.dataclass(frozen=True)
class ModelSettings:
    nx: int = 64
    ny: int = 64
    nz: int = 16
    steps: int = 10
    ranks: str = "auto"
    family: str = "gtfn"
    cfl: float = 0.4
    nu: float = 0.02
    kappa: float = 0.5

    def __post_init__(self) -> None:
        for name in ("nx", "ny", "nz", "steps"):
            if getattr(self, name) < 1:
                raise ConfigError(f"model setting {name}={getattr(self, name)} must be at least 1")
        if self.family not in FAMILIES:
            raise ConfigError(
                f"model setting family={self.family!r}: accepted {', '.join(FAMILIES)}"
            )
        self.rank_grid()  # checked now

    def rank_grid(self) -> tuple[int, int] | None:
        """Ranks along I and J, or None for as square as MPI makes it."""
        if self.ranks == "auto":
            return None
        parts = self.ranks.lower().split("x")
        try:
            i, j = (int(p) for p in parts)
        except ValueError:
            raise ConfigError(f"model setting ranks={self.ranks!r}: 'auto' or e.g. '2x2'") from None
        return i, j


def model_section(environ: Mapping[str, str], file: Mapping[str, Any]) -> dict[str, Any]:
    """The model section: the file's `[model]` table, then SCMODEL_* variables, typed and
    checked (ConfigError names a bad value and where it came from)."""
    fields = {f.name: f for f in dataclasses.fields(ModelSettings)}
    values: dict[str, Any] = {}
    unknown = set(file) - fields.keys()
    if unknown:
        raise ConfigError(f"[model] in the config file: unknown settings {sorted(unknown)}")
    sources = [(f"[model] {name}", name, value) for name, value in file.items()]
    sources += [
        (f"{PREFIX}{name.upper()}", name, environ[f"{PREFIX}{name.upper()}"])
        for name in fields
        if f"{PREFIX}{name.upper()}" in environ
    ]
    for where, name, value in sources:
        kind = type(getattr(ModelSettings(), name))
        try:
            values[name] = kind(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{where}={value!r} is not a valid {kind.__name__}") from None
    return values


def read_file(path: str | Path | None) -> dict[str, Any]:
    """The TOML config file at `path` (empty without one)."""
    if not path:
        return {}
    try:
        with open(path, "rb") as file:
            return tomllib.load(file)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"the model's config file {path}: {error}") from None


def config_path(environ: Mapping[str, str] = os.environ) -> str | None:
    return environ.get(f"{PREFIX}CONFIG") or None
