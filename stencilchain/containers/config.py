"""Toolchain configuration: the frozen config classes and the one table of their settings.

Every setting is declared once, in `SETTINGS`: its config field, environment variable, type,
default and meaning. The config classes hold the defaults, which the table reads; the runtime
names only the protocol it needs (`stencilchain.runtime.config.RuntimeConfig`).
`environment.py` parses variables with the table, and `render_configuration_reference` writes
docs/configuration.md from it: `python -m stencilchain.containers.config > docs/configuration.md`.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from stencilchain.errors import ConfigError
from stencilchain.program.device import Device
from stencilchain.runtime.config import default_build_jobs
from stencilchain.steps.settings import BuildType, CacheLifetime, DataLayout

T = TypeVar("T")


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


@dataclass(frozen=True, kw_only=True)
class GTFNConfig(ToolchainConfig):
    """Configuration of the GTFN (C++/CUDA) toolchains."""


@dataclass(frozen=True, kw_only=True)
class DaCeConfig(ToolchainConfig):
    """Configuration of the DaCe toolchains."""

    auto_optimize: bool = True
    external_workspace: bool = False  # a field here, a property in ToolchainConfig


def _default(name: str) -> Any:
    """The default of config field `name` (DaCeConfig has every field)."""
    return next(f.default for f in dataclasses.fields(DaCeConfig) if f.name == name)


E = TypeVar("E", bound=enum.Enum)
C = TypeVar("C", bound="ToolchainConfig")


@dataclass(frozen=True)
class Setting(Generic[T]):
    """One setting: its config field, environment variable, type, default and meaning."""

    name: str  # the config field
    env: str  # the environment variable
    type_name: str  # for the docs: choice, boolean, integer, size, text or path
    default: T
    default_text: str  # the default as the docs show it
    accepted: str  # the accepted values, for the docs and error messages
    meaning: str  # one line
    from_text: Callable[[str], T]  # raises KeyError or ValueError on a bad value
    types: tuple[type, ...]  # the Python types a non-text value must have

    def parse(self, raw: str, label: str | None = None) -> T:
        """Parse the text `raw`; blank means unset (the default). `label` names it in errors."""
        if not raw.strip():
            return self.default
        try:
            return self.from_text(raw.strip())
        except (KeyError, ValueError):
            raise ConfigError(
                f"{label or self.env}={raw!r} is not valid; accepted: {self.accepted}"
            ) from None

    def coerce(self, value: object) -> object:
        """Parse text; check that anything else already has the setting's type."""
        if isinstance(value, str):
            return self.parse(value, label=self.name)
        if not isinstance(value, self.types) or (
            isinstance(value, bool) and bool not in self.types
        ):
            raise ConfigError(f"{self.name}={value!r} is not valid; accepted: {self.accepted}")
        return value


def _choice(name: str, env: str, default: E, meaning: str) -> Setting[E]:
    kind = type(default)
    return Setting(
        name=name,
        env=env,
        type_name="choice",
        default=default,
        default_text=str(default.value),
        accepted=", ".join(str(member.value) for member in kind),
        meaning=meaning,
        from_text=lambda raw: kind(raw.lower()),
        types=(kind,),
    )


_BOOLEAN_WORDS = {
    "1": True, "true": True, "yes": True, "on": True,
    "0": False, "false": False, "no": False, "off": False,
}  # fmt: skip


def _boolean(name: str, env: str, default: bool, meaning: str) -> Setting[bool]:
    return Setting(
        name=name,
        env=env,
        type_name="boolean",
        default=default,
        default_text="true" if default else "false",
        accepted=", ".join(_BOOLEAN_WORDS),
        meaning=meaning,
        from_text=lambda raw: _BOOLEAN_WORDS[raw.lower()],
        types=(bool,),
    )


DEVICE = _choice(
    "device",
    "STENCILCHAIN_DEVICE",
    _default("device"),
    "Where compiled programs run and their data lives.",
)
BUILD_TYPE = _choice(
    "build_type",
    "STENCILCHAIN_BUILD_TYPE",
    _default("build_type"),
    "CMake build type of compiled programs.",
)
CACHE_LIFETIME = _choice(
    "cache_lifetime",
    "STENCILCHAIN_CACHE_LIFETIME",
    _default("cache_lifetime"),
    "`persistent` keeps builds in the cache dir between runs; `session` builds in a temporary folder removed at exit.",
)
CACHE_DIR: Setting[Path | None] = Setting(
    name="cache_dir",
    env="STENCILCHAIN_CACHE_DIR",
    type_name="path",
    default=_default("cache_dir"),
    default_text="unset",
    accepted="a directory path (`~` is expanded)",
    meaning='Folder of the persistent caches; unset means `platformdirs.user_cache_dir("stencilchain")`.',
    from_text=lambda raw: Path(raw).expanduser(),
    types=(Path, type(None)),
)
DATA_LAYOUT = _choice(
    "data_layout",
    "STENCILCHAIN_DATA_LAYOUT",
    _default("data_layout"),
    "Array layouts compiled programs accept: any strides, or unit stride in the innermost dimension.",
)
CACHED_TRANSLATION = _boolean(
    "cached_translation",
    "STENCILCHAIN_CACHED_TRANSLATION",
    _default("cached_translation"),
    "Keep translated programs in the persistent translation cache.",
)
METRICS = _boolean(
    "metrics",
    "STENCILCHAIN_METRICS",
    _default("metrics"),
    "Collect runtime metrics of compiled programs.",
)


def _positive_int(raw: str) -> int:
    value = int(raw)  # ValueError for text that is not an integer
    if value < 1:
        raise ValueError(raw)
    return value


BUILD_JOBS: Setting[int] = Setting(
    name="build_jobs",
    env="STENCILCHAIN_BUILD_JOBS",
    type_name="integer",
    default=default_build_jobs(),
    default_text="the number of CPUs",
    accepted="a positive integer",
    meaning="How many programs `Toolchain.compile_many` (and `stencilchain compile` of several "
    "programs) builds at once; each build then runs about CPUs / jobs compiler processes. "
    "Changes no output: not part of any cache key.",
    from_text=_positive_int,
    types=(int,),
)
_SIZE_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_size(text: str) -> int:
    """Bytes of `500M`, `1.5G`, `2GiB`, `100k` or `4096` (K, M, G, T are powers of 1024);
    ValueError if `text` is not a size."""
    import re  # only when a size is parsed, to keep `import stencilchain` fast

    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", text, re.IGNORECASE)
    if match is None:
        raise ValueError(
            f"size {text!r} is not valid: expected a number with K, M, G or T (e.g. 500M, 2G)"
        )
    return int(float(match[1]) * _SIZE_UNITS[match[2].lower()])


CACHE_MAX_SIZE: Setting[int | None] = Setting(
    name="cache_max_size",
    env="STENCILCHAIN_CACHE_MAX_SIZE",
    type_name="size",
    default=_default("cache_max_size"),
    default_text="unset",
    accepted="a size in bytes, with K, M, G or T for powers of 1024 (e.g. 500M, 2G)",
    meaning="Size limit of the persistent caches: after a new build, the least recently used "
    "entries are removed (never one another process is building, nor the new build) until "
    "they fit; `stencilchain cache prune` applies the same limit. Unset means unlimited. "
    "Changes no output: not part of any cache key.",
    from_text=parse_size,
    types=(int, type(None)),
)
CACHE_SALT: Setting[str] = Setting(
    name="cache_salt",
    env="STENCILCHAIN_CACHE_SALT",
    type_name="text",
    default=_default("cache_salt"),
    default_text="empty",
    accepted="any text",
    meaning="Mixed into every cache key (translations, builds and their support folders): "
    "another salt builds afresh without deleting anything, and the same salt again finds "
    "its entries. Empty means no salt.",
    from_text=str,
    types=(str,),
)
DACE_AUTO_OPTIMIZE = _boolean(
    "auto_optimize",
    "STENCILCHAIN_DACE_AUTO_OPTIMIZE",
    _default("auto_optimize"),
    "Run DaCe's auto-optimization on translated SDFGs.",
)
DACE_EXTERNAL_WORKSPACE = _boolean(
    "external_workspace",
    "STENCILCHAIN_DACE_EXTERNAL_WORKSPACE",
    _default("external_workspace"),
    "Keep programs' temporaries in a buffer the caller provides (`workspace_size(*args)`, "
    "`set_workspace(buffer)` on the bound program) instead of memory DaCe allocates.",
)

SETTINGS: tuple[Setting[Any], ...] = (
    DEVICE,
    BUILD_TYPE,
    CACHE_LIFETIME,
    CACHE_DIR,
    DATA_LAYOUT,
    CACHED_TRANSLATION,
    METRICS,
    BUILD_JOBS,
    CACHE_MAX_SIZE,
    CACHE_SALT,
    DACE_AUTO_OPTIMIZE,
    DACE_EXTERNAL_WORKSPACE,
)
# Not a setting of the configs: where more settings come from (environment.py reads it).
CONFIG_FILE: Setting[Path | None] = Setting(
    name="config_file",
    env="STENCILCHAIN_CONFIG",
    type_name="path",
    default=None,
    default_text="unset",
    accepted="a TOML file path (`~` is expanded; needs Python 3.11+)",
    meaning='A TOML file of settings (`build_type = "debug"`, keys are the settings\' names), '
    "layered under the environment: a variable that is set wins over the file.",
    from_text=lambda raw: Path(raw).expanduser(),
    types=(Path, type(None)),
)
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _log_level(raw: str) -> str:
    level = raw.upper()
    if level not in LOG_LEVELS:
        raise ValueError(raw)
    return level


# Not a setting of the configs either: the level of the `stencilchain` logger, applied when
# a container is built (containers/log_level.py); it changes no output of a toolchain.
LOG_LEVEL: Setting[str | None] = Setting(
    name="log_level",
    env="STENCILCHAIN_LOG_LEVEL",
    type_name="choice",
    default=None,
    default_text="unset",
    accepted=", ".join(LOG_LEVELS),
    meaning="Level of the `stencilchain` logger; if nothing else handles its records (no "
    "handler on it or on the root logger), they go to stderr. Unset leaves logging as the "
    "application configured it. Read from the environment only, not from the config file.",
    from_text=_log_level,
    types=(str, type(None)),
)
# Not a setting of the configs: a trace file, started when a container is built and written
# at exit (containers/trace_file.py); it changes no output of a toolchain.
TRACE: Setting[Path | None] = Setting(
    name="trace",
    env="STENCILCHAIN_TRACE",
    type_name="path",
    default=None,
    default_text="unset",
    accepted="a file path (`~` is expanded; `{pid}` is replaced by the process id)",
    meaning="Record a timeline of translations, builds (with the cache's answer), loads and "
    "every program call, written at exit as Chrome trace-event JSON (Perfetto, "
    "chrome://tracing, `stencilchain trace render`). Environment only, not the config file.",
    from_text=lambda raw: Path(raw).expanduser(),
    types=(Path, type(None)),
)
# Test-only: read by no container and by no code of the package, only by
# tests/compat/test_gt4py_cross_check.py; known here so that setting it is no error.
GT4PY_PYTHON: Setting[Path | None] = Setting(
    name="gt4py_python",
    env="STENCILCHAIN_GT4PY_PYTHON",
    type_name="path",
    default=None,
    default_text="unset",
    accepted="the path of a Python interpreter with gt4py.next installed (e.g. 1.2.3)",
    meaning="Test-only: tests/compat/test_gt4py_cross_check.py runs the same gt4py source "
    "under that interpreter's gt4py and under `stencilchain.compat.gt4py` and compares "
    "the results; unset, those tests skip. Read by no container.",
    from_text=lambda raw: Path(raw).expanduser(),
    types=(Path, type(None)),
)
# Test-only, like GT4PY_PYTHON: read by tests/compat/test_icon4py_coverage.py alone.
ICON4PY_SRC: Setting[Path | None] = Setting(
    name="icon4py_src",
    env="STENCILCHAIN_ICON4PY_SRC",
    type_name="path",
    default=None,
    default_text="unset",
    accepted="the path of an icon4py source tree (a checkout, or `git archive` of its model/)",
    meaning="Test-only: tests/compat/test_icon4py_coverage.py runs "
    "scripts/icon4py_coverage.py on that tree and requires no disagreement between the "
    "embedded executor and run_gtfn_cpu; unset, that test skips. Read by no container.",
    from_text=lambda raw: Path(raw).expanduser(),
    types=(Path, type(None)),
)
# every STENCILCHAIN_* variable
VARIABLES: tuple[Setting[Any], ...] = (
    *SETTINGS,
    CONFIG_FILE,
    LOG_LEVEL,
    TRACE,
    GT4PY_PYTHON,
    ICON4PY_SRC,
)

SETTINGS_BY_NAME: Mapping[str, Setting[Any]] = {s.name: s for s in SETTINGS}
SETTINGS_BY_ENV: Mapping[str, Setting[Any]] = {s.env: s for s in VARIABLES}


def suggest(name: str, known: Iterable[str], prefix: str = "") -> str:
    """'did you mean X?' for the closest known name, else the list of known names.

    Names are compared without `prefix`, which every name shares and which would make all close.
    """
    import difflib  # only on this error path, to keep `import stencilchain` fast

    known = list(known)
    stems = {k.removeprefix(prefix): k for k in known}
    close = difflib.get_close_matches(name.removeprefix(prefix), stems, n=1)
    return f"did you mean {stems[close[0]]}?" if close else f"known: {', '.join(known)}"


def config_from(cls: type[C], values: Mapping[str, object] | None) -> C:
    """Build `cls` from setting values (typed, or text parsed like the environment).

    Settings `cls` has no field for (another family's) are ignored; unknown names are errors.
    """
    fields = {f.name for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    for name, value in (values or {}).items():  # an empty config section gives defaults
        setting = SETTINGS_BY_NAME.get(name)
        if setting is None:
            raise ConfigError(f"unknown setting {name!r}; {suggest(name, SETTINGS_BY_NAME)}")
        if name in fields:
            kwargs[name] = setting.coerce(value)
    return cls(**kwargs)


def gtfn_config_from(values: Mapping[str, object] | None) -> GTFNConfig:
    """The GTFN config of `values` (e.g. `settings_from_environ(...)` or a Configuration's dict)."""
    return config_from(GTFNConfig, values)


def dace_config_from(values: Mapping[str, object] | None) -> DaCeConfig:
    """The DaCe config of `values` (e.g. `settings_from_environ(...)` or a Configuration's dict)."""
    return config_from(DaCeConfig, values)


_DACE_ONLY = frozenset(f.name for f in dataclasses.fields(DaCeConfig)) - frozenset(
    f.name for f in dataclasses.fields(ToolchainConfig)
)


def render_configuration_reference() -> str:
    """The text of docs/configuration.md, derived from `SETTINGS`."""
    rows = [
        f"| `{s.env}` | {'DaCe' if s.name in _DACE_ONLY else 'all'} | {s.type_name} "
        f"| `{s.default_text}` | {s.accepted} | {s.meaning} |"
        for s in VARIABLES
    ]
    return "\n".join(
        [
            "<!-- Generated by stencilchain.containers.config.render_configuration_reference; "
            "regenerate: python -m stencilchain.containers.config > docs/configuration.md -->",
            "# Configuration reference",
            "",
            "stencilchain reads these environment variables once, when a container is built",
            "(`build_container()`), never at import.",
            "",
            "| Variable | Applies to | Type | Default | Accepted values | Meaning |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
            "- Choices are case-insensitive; booleans accept "
            f"{', '.join(_BOOLEAN_WORDS)} in any case.",
            "- An empty value means the variable is unset: the config file's value or the default applies.",
            "- A bad value is an error that names the variable, the value and the accepted values.",
            "- An unknown `STENCILCHAIN_*` variable is an error suggesting the closest known one,",
            "  so a misspelled setting is never silently ignored.",
            f"- `{CONFIG_FILE.env}` names a TOML file whose top-level keys are the settings' names",
            "  (`device`, `build_type`, `cache_dir`, `auto_optimize`, ...); values are strings as in",
            "  the environment, or TOML booleans and integers. A relative `cache_dir` is relative to",
            "  the file.",
            "  A variable that is set overrides the file; an unknown key or a bad value is an error",
            "  naming the file. `stencilchain config` shows each value and where it came from.",
            "",
        ]
    )


if __name__ == "__main__":
    print(render_configuration_reference(), end="")
