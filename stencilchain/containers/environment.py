"""Reading the environment, only when asked (a container is built), never at import: the
`STENCILCHAIN_*` settings and the environment of the build processes.

Settings come from three layers, the first that has one winning: a variable of the
environment, the TOML file named by `STENCILCHAIN_CONFIG`, the default.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stencilchain.containers.config import (
    CONFIG_FILE,
    SETTINGS,
    SETTINGS_BY_ENV,
    SETTINGS_BY_NAME,
    Setting,
    suggest,
)
from stencilchain.errors import ConfigError
from stencilchain.steps.build.tools import BuildEnvironment

PREFIX = "STENCILCHAIN_"

DEFAULT = "default"
ENVIRONMENT = "environment"
FILE = "config file"


@dataclasses.dataclass(frozen=True)
class ResolvedSetting:
    """A setting's value and where it came from: `source` is "default", "environment" or
    "config file"; `origin` names the variable or the file ("" for a default)."""

    setting: Setting[Any]
    value: Any
    source: str
    origin: str


def settings_from_environ(environ: Mapping[str, str] | None = None) -> dict[str, object]:
    """Every setting's value, keyed by field name, from `environ` (default: `os.environ`, now).

    Unset or empty variables give the value of the config file (`STENCILCHAIN_CONFIG`),
    else the default. The result suits `providers.Configuration.from_dict` and
    `gtfn_config_from` / `dace_config_from`. Raises `ConfigError` for a bad value, an
    unknown `STENCILCHAIN_*` variable, or a config file that cannot be used.
    """
    return {r.setting.name: r.value for r in resolve_settings(environ)[:-1]}


def resolve_settings(environ: Mapping[str, str] | None = None) -> tuple[ResolvedSetting, ...]:
    """Every setting (in `SETTINGS` order), then the config-file variable, with their sources."""
    if environ is None:
        environ = os.environ
    unknown = sorted(
        name for name, raw in environ.items()
        if name.startswith(PREFIX) and name not in SETTINGS_BY_ENV and raw.strip()
    )  # fmt: skip
    if unknown:
        raise ConfigError(
            "; ".join(
                f"unknown variable {name}={environ[name]!r}: {suggest(name, SETTINGS_BY_ENV, PREFIX)}"
                for name in unknown
            )
        )
    file: Path | None = CONFIG_FILE.parse(environ.get(CONFIG_FILE.env, ""))
    from_file = {} if file is None else read_config_file(file)
    resolved = []
    for setting in SETTINGS:
        raw = environ.get(setting.env, "")
        if raw.strip():
            resolved.append(ResolvedSetting(setting, setting.parse(raw), ENVIRONMENT, setting.env))
        elif setting.name in from_file:
            resolved.append(ResolvedSetting(setting, from_file[setting.name], FILE, str(file)))
        else:
            resolved.append(ResolvedSetting(setting, setting.default, DEFAULT, ""))
    if file is None:
        resolved.append(ResolvedSetting(CONFIG_FILE, None, DEFAULT, ""))
    else:
        resolved.append(ResolvedSetting(CONFIG_FILE, file, ENVIRONMENT, CONFIG_FILE.env))
    return tuple(resolved)


def read_config_file(path: Path) -> dict[str, object]:
    """The settings of the TOML file `path`, parsed and checked, keyed by setting name."""
    where = f"{CONFIG_FILE.env}={str(path)!r}"
    from stencilchain import _toml as tomllib  # only when a file is named

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{where}: cannot read the file ({error.strerror or error})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{where}: not valid TOML ({error})") from None
    values: dict[str, object] = {}
    for name, value in data.items():
        setting = SETTINGS_BY_NAME.get(name)
        if setting is None:
            raise ConfigError(
                f"{path}: unknown setting {name!r}; {suggest(name, SETTINGS_BY_NAME)}"
            )
        label = f"{path}: {name}"
        if isinstance(value, str):
            parsed = setting.parse(value, label=label)
        elif isinstance(value, bool) and bool in setting.types:
            parsed = value
        elif isinstance(value, int) and not isinstance(value, bool) and int in setting.types:
            parsed = setting.parse(str(value), label=label)
        else:
            raise ConfigError(f"{label}={value!r} is not valid; accepted: {setting.accepted}")
        if isinstance(parsed, Path) and not parsed.is_absolute():
            parsed = path.absolute().parent / parsed  # relative to the file, not to the cwd
        values[name] = parsed
    return values


def read_build_environment(environ: Mapping[str, str] | None = None) -> BuildEnvironment:
    """The environment of the build processes (compilers, CMake, Ninja): `environ`
    (default: `os.environ`, now) without the flag variables CMake would read."""
    return BuildEnvironment.of(os.environ if environ is None else environ)
