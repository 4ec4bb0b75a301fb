"""Checks of step settings: every step of both families validates every field in its
`__post_init__`, so a step built directly is checked like one a container builds.

Each error names the setting as `<Step>.<field>`, the value given and what is accepted: a
value of the wrong type is a TypeError, a value of the right type that cannot be used a
ConfigError (a ValueError).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from stencilchain.errors import ConfigError


def _where(step: object, field: str) -> str:
    return f"{type(step).__name__}.{field}"


def require_type(
    step: object,
    field: str,
    expected: type,
    accepted: str | None = None,
    *,
    optional: bool = False,
) -> None:
    """TypeError naming `Step.field`, the value given and what is accepted, unless the
    field's value is an `expected` (or None if `optional`; a bool is no int here)."""
    value = getattr(step, field)
    if optional and value is None:
        return
    ok = isinstance(value, expected) and not (isinstance(value, bool) and expected is not bool)
    if not ok:
        if accepted is None:
            accepted = f"a {expected.__name__}"
            if issubclass(expected, enum.Enum):
                accepted += f" ({', '.join(f'{expected.__name__}.{m.name}' for m in expected)})"
        raise TypeError(
            f"{_where(step, field)} must be {accepted}, got {type(value).__name__} {value!r}"
        )


def require_non_negative_int(step: object, field: str) -> None:
    """TypeError unless the field is an int (not a bool); ValueError if it is negative."""
    require_type(step, field, int, "a non-negative int")
    value = getattr(step, field)
    if value < 0:
        raise ConfigError(f"{_where(step, field)} must be a non-negative int, got {value!r}")


def require_choice(step: object, field: str, choices: Sequence[str]) -> None:
    """TypeError unless the field is a str; ValueError unless it is one of `choices`."""
    accepted = f"one of {', '.join(repr(c) for c in choices)}"
    require_type(step, field, str, accepted)
    value = getattr(step, field)
    if value not in choices:
        raise ConfigError(f"{_where(step, field)} must be {accepted}, got {value!r}")


def setting_name(step: object, field: str) -> str:
    """`<Step>.<field>`, as errors name a setting."""
    return _where(step, field)
