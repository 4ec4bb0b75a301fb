"""Sizes and ages as people write them: 500M, 2G, 7d, 12h (parse errors are argparse's)."""

from __future__ import annotations

import argparse
import re

from stencilchain.containers.config import parse_size as _parse_size

_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_size(text: str) -> int:
    """Bytes of `500M`, `1.5G`, `2GiB`, `100k` or `4096` (K, M, G, T are powers of 1024),
    as `STENCILCHAIN_CACHE_MAX_SIZE` reads them."""
    try:
        return _parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def parse_age(text: str) -> float:
    """Seconds of `7d`, `12h`, `30m`, `45s` or `2w`."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text, re.IGNORECASE)
    if match is None:
        raise argparse.ArgumentTypeError(
            f"age {text!r} is not valid: expected a number with s, m, h, d or w (e.g. 7d, 12h)"
        )
    return float(match[1]) * _AGE_UNITS[match[2].lower()]


def format_size(size: float) -> str:
    """`1.5 MiB`."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def format_age(seconds: float) -> str:
    """`45s`, `12m`, `3h`, `2d`."""
    for unit, length in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= length:
            return f"{seconds / length:.0f}{unit}"
    return f"{max(seconds, 0):.0f}s"


def format_seconds(seconds: float) -> str:
    """A duration with a unit that fits: `1.23 s`, `45 ms`, `12 us`."""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} us"
