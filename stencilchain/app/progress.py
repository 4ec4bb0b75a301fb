"""A one-line progress display on stderr, shown only on a terminal and never with --quiet."""

from __future__ import annotations

import sys
from typing import TextIO


class Progress:
    """`[3/10] compiling hdiff_program with run_gtfn_cpu`, rewritten in place.

    Silent unless `stream` (default: stderr) is a terminal, `enabled` and there is more
    than one step, so pipes, logs and tests see only the results.
    """

    def __init__(self, total: int, *, enabled: bool = True, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = sys.stderr if stream is None else stream
        self.count = 0
        self.active = enabled and total > 1 and _isatty(self.stream)

    def step(self, label: str) -> None:
        """Announce the next step."""
        self.count += 1
        if self.active:
            self.stream.write(f"\r\033[K[{self.count}/{self.total}] {label}")
            self.stream.flush()

    def close(self) -> None:
        """Erase the line, so that the results print on a clean one."""
        if self.active:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream
        return False
