"""The field value type that gt4py's constructors make: stencilchain's own (sc.FieldValue,
an array over dimensions with the index it starts at along each)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stencilchain.program.dimensions import Dimension
from stencilchain.program.field_values import FieldValue, as_field


def make_field(
    dims: tuple[Dimension, ...], array: Any, start: Mapping[Dimension, int]
) -> FieldValue:
    return as_field(dims, array, start={d: s for d, s in start.items() if s})


__all__ = ["FieldValue", "make_field"]
