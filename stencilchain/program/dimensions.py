"""Dimensions and the offsets written as `I + 1`."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Dimension:
    """A named axis of the grid; fields declare theirs as `Field[[I, J], float64]`."""

    name: str

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"a dimension name must be an identifier, got {self.name!r}")

    def __add__(self, offset: int) -> Offset:
        return Offset(self, _as_offset(offset))

    def __sub__(self, offset: int) -> Offset:
        return Offset(self, -_as_offset(offset))

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


@dataclasses.dataclass(frozen=True)
class Offset:
    """A shift of `amount` grid points along `dim`."""

    dim: Dimension
    amount: int

    def __repr__(self) -> str:
        if self.amount < 0:
            return f"{self.dim.name} - {-self.amount}"
        return f"{self.dim.name} + {self.amount}"


def _as_offset(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"a shift offset must be an int, got {value!r}")
    return value
