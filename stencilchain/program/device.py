"""The device a program runs on."""

from __future__ import annotations

import enum


class Device(enum.Enum):
    """Where the data lives and the code runs."""

    CPU = "cpu"
    GPU = "gpu"

    def __str__(self) -> str:
        return self.value
