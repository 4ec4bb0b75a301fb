"""The scalar types of the DSL and their promotion rules.

Rules (no silent widening, ever):
- Two typed operands must have the same dtype; mixing needs `astype`.
- A Python literal adopts the dtype of the other operand: an int literal fits any
  numeric dtype (it must be representable), a float literal only float dtypes (it is
  rounded to that precision, so `0.5 * f32_field` stays float32), a bool literal only bool.
- A literal with no typed partner (a literal on its own) is int64, float64 or bool.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stencilchain.errors import DefinitionError
from stencilchain.program.records import frozen


@frozen
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

    def __call__(self, value: object) -> Any:
        """`sc.float64(1)`, `sc.int32(3)`: a literal of this dtype (a NumPy scalar, typed
        like a field of the dtype), in field operators and as a program's scalar argument."""
        return typed_literal(self, value)

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


def typed_literal(dtype: ScalarType, value: object) -> Any:
    """`value` as a NumPy scalar of `dtype`, when it keeps its meaning there: a bool for bool,
    an int in range for an integer dtype, a number that stays finite for a float dtype."""
    spelled = "sc.bool_" if dtype.is_bool else f"sc.{dtype}"
    written = f"{spelled}({value!r})"
    if isinstance(value, (bool, np.bool_)):
        ok = dtype.is_bool
    elif isinstance(value, (int, np.integer)):
        ok = dtype.is_numeric and literal_fits(int(value), dtype)
    elif isinstance(value, (float, np.floating)):
        ok = dtype.is_float and is_finite_as(float(value), dtype)
    else:
        raise DefinitionError(
            f"{written}: a dtype called with a value makes a literal of that dtype from a "
            f"Python or NumPy number; a traced field or scalar is converted with "
            f"sc.astype(x, {spelled})"
        )
    if not ok:
        if dtype.is_bool:
            kind = "a bool"
        elif dtype.is_integer:
            info = np.iinfo(dtype.numpy)
            kind = f"an int in [{info.min}, {info.max}] (a float is cast with sc.astype)"
        else:
            kind = "an int or a float that stays finite in that precision"
        raise DefinitionError(
            f"{written}: {type(value).__name__} {value!r} is no {dtype} value; {spelled}() "
            f"takes {kind}, and converts nothing that would change its meaning"
        )
    return dtype.numpy.type(value)
