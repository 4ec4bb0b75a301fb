"""The checks of a compiler step's settings, run once, in its `__post_init__`, on top of
the checks every step uses (`stencilchain.steps.checks`)."""

from __future__ import annotations

from stencilchain.errors import ConfigError
from stencilchain.program.device import Device
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.checks import require_type, setting_name
from stencilchain.steps.settings import BuildType


def check_compiler(step: object) -> None:
    """The settings every compiler step has: `device`, `build_type` and `cache`."""
    require_type(step, "device", Device, "a Device")
    require_type(step, "build_type", BuildType, "a BuildType")
    require_type(step, "cache", BuildCache, "a BuildCache")


def check_program(step: object, name: str, what: str) -> None:
    """`step.<name>` names an executable: a non-empty name looked up on PATH, or a path."""
    require_type(step, name, str, f"the name or path of the {what}")
    value = getattr(step, name)
    if not value.strip():
        raise ConfigError(
            f"{setting_name(step, name)} must name the {what} (a name on PATH or a path), got {value!r}"
        )


def check_flags(step: object, name: str) -> None:
    """`step.<name>` is a tuple of compiler flags, each one CMake-safe (see check_word)."""
    value = getattr(step, name)
    if not isinstance(value, tuple) or not all(isinstance(flag, str) for flag in value):
        raise TypeError(f"{setting_name(step, name)} must be a tuple of str, got {value!r}")
    for flag in value:
        _check_word(step, name, flag)


def check_word(step: object, name: str, accepted: str) -> None:
    """`step.<name>` is None or one non-empty string without ';' or a newline (CMake and
    DaCe pass it on in a list that they would split there)."""
    require_type(step, name, str, f"{accepted} or None", optional=True)
    value = getattr(step, name)
    if value is not None:
        _check_word(step, name, value)


def check_positive(step: object, name: str) -> None:
    """`step.<name>` is a positive int or None."""
    require_type(step, name, int, "a positive int or None", optional=True)
    value = getattr(step, name)
    if value is not None and value < 1:
        raise ConfigError(
            f"{setting_name(step, name)} must be a positive int or None, got {value!r}"
        )


def _check_word(step: object, name: str, word: str) -> None:
    if not word or ";" in word or "\n" in word:
        raise ConfigError(
            f"{setting_name(step, name)}: {word!r} is empty or contains ';' or a newline, which "
            "CMake would split; pass each flag as its own non-empty string"
        )
