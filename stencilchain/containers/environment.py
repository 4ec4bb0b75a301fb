"""Reading the `STENCILCHAIN_*` environment variables, only when asked, never at import."""

from __future__ import annotations

import os
from collections.abc import Mapping

from stencilchain.containers.config import SETTINGS, SETTINGS_BY_ENV, ConfigError, suggest

PREFIX = "STENCILCHAIN_"


def settings_from_environ(environ: Mapping[str, str] | None = None) -> dict[str, object]:
    """Every setting's value, keyed by field name, from `environ` (default: `os.environ`, now).

    Unset or empty variables give the default. The result suits
    `providers.Configuration.from_dict` and `gtfn_config_from` / `dace_config_from`.
    Raises `ConfigError` for a bad value or an unknown `STENCILCHAIN_*` variable.
    """
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
    return {s.name: s.parse(environ.get(s.env, "")) for s in SETTINGS}
