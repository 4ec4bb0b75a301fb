"""Printing results: plain tables for people, JSON for scripts."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from typing import Any


def print_json(value: Any) -> None:
    """`value` as indented JSON on stdout (paths and other objects as text)."""
    print(json.dumps(_finite(value), indent=2, default=str))


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: such floats become the text "nan", "inf", "-inf"."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell."""
    lines = [tuple(header), *(tuple(r) for r in rows)]
    widths = [max(len(line[k]) for line in lines) for k in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines)


def note(text: str, *, quiet: bool) -> None:
    """Informational text for a person, on stderr; nothing with --quiet."""
    if not quiet:
        print(text, file=sys.stderr)
