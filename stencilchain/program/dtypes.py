"""The scalar types of the DSL and their promotion rules.

Rules (no silent widening, ever):
- Two typed operands must have the same dtype; mixing needs `astype`.
- A Python literal adopts the dtype of the other operand: an int literal fits any
  numeric dtype (it must be representable), a float literal only float dtypes (it is
  rounded to that precision, so `0.5 * f32_field` stays float32), a bool literal only bool.
- A literal with no typed partner (a literal on its own) is int64, float64 or bool.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


@dataclasses.dataclass(frozen=True)
class ScalarType:
    """One of float32, float64, int32, int64, bool."""

    name: str

    @property
    def numpy(self) -> np.dtype[Any]:
        return np.dtype(_NUMPY_NAMES[self.name])

    @property
    def is_float(self) -> bool:
        return self.name in ("float32", "float64")

    @property
    def is_integer(self) -> bool:
        return self.name in ("int32", "int64")

    @property
    def is_bool(self) -> bool:
        return self.name == "bool"

    @property
    def is_numeric(self) -> bool:
        return not self.is_bool

    @property
    def cpp(self) -> str:
        return _CPP_NAMES[self.name]

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


_NUMPY_NAMES = {
    "float32": "float32",
    "float64": "float64",
    "int32": "int32",
    "int64": "int64",
    "bool": "bool",
}
_CPP_NAMES = {
    "float32": "float",
    "float64": "double",
    "int32": "std::int32_t",
    "int64": "std::int64_t",
    "bool": "bool",
}

float32 = ScalarType("float32")
float64 = ScalarType("float64")
int32 = ScalarType("int32")
int64 = ScalarType("int64")
bool_ = ScalarType("bool")

ALL_DTYPES = (float32, float64, int32, int64, bool_)
BY_NAME = {t.name: t for t in ALL_DTYPES}


def from_numpy(dtype: np.dtype[Any]) -> ScalarType | None:
    """The DSL dtype of a NumPy dtype, or None if the DSL has no such type."""
    return BY_NAME.get(dtype.name)


def literal_fits(value: bool | int | float, dtype: ScalarType) -> bool:
    """Whether a Python literal may take `dtype` without changing its meaning."""
    if isinstance(value, bool):
        return dtype.is_bool
    if isinstance(value, int):
        if dtype.is_float:
            return is_finite_as(value, dtype)
        if dtype.is_integer:
            info = np.iinfo(dtype.numpy)
            return int(info.min) <= value <= int(info.max)
        return False
    return dtype.is_float


def is_finite_as(value: int | float, dtype: ScalarType) -> bool:
    """Whether `value` converted to the float `dtype` stays finite (no overflow to inf)."""
    try:
        as_float = float(value)
    except OverflowError:
        return False
    with np.errstate(over="ignore"):
        return bool(np.isfinite(dtype.numpy.type(as_float))) or not np.isfinite(as_float)


def default_literal_dtype(value: bool | int | float) -> ScalarType:
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    return float64
