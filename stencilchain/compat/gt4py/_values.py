"""The field value type that gt4py's constructors make: stencilchain's own (sc.FieldValue),
whose array a program reads at the indices its `start` gives."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from stencilchain.errors import ArgumentError
from stencilchain.program.dimensions import Dimension


# TEMPORARY, until branch `fields` is merged: then stencilchain.program.field_values'
# FieldValue and as_field are imported, and this class and `argument` go.
@dataclasses.dataclass(frozen=True, eq=False)
class FieldValue:
    array: Any
    dims: tuple[Dimension, ...]
    start: tuple[int, ...]

    @property
    def ndarray(self) -> Any:
        return self.array

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.array.shape)

    @property
    def dtype(self) -> Any:
        return self.array.dtype

    @property
    def domain(self) -> dict[Dimension, tuple[int, int]]:
        return {d: (s, s + n) for d, s, n in zip(self.dims, self.start, self.array.shape)}

    def asnumpy(self) -> Any:
        return np.asarray(self.array)


def make_field(
    dims: tuple[Dimension, ...], array: Any, start: Mapping[Dimension, int]
) -> FieldValue:
    return FieldValue(array, dims, tuple(int(start.get(d, 0)) for d in dims))


def argument(value: object) -> object:
    """A field value as a program takes it (its array until `fields` is merged)."""
    if isinstance(value, FieldValue):
        if any(value.start):
            raise ArgumentError("fields with an origin need the field values of branch `fields`")
        return value.array
    return value


__all__ = ["FieldValue", "argument", "make_field"]
