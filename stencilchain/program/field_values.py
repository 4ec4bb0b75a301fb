"""A field value: an array, the dimensions it is over and the index where it starts along each.

NumPy arrays have no origin: a plain array passed for a field starts at index 0 along every
dimension. `sc.as_field((Cell, K), a, start={K: -1})` says that `a[:, 0]` is level -1, so a
domain `{K: (0, n)}` of a call reads `a[:, 1:n + 1]`. The array is never copied."""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from stencilchain.errors import ArgumentError
from stencilchain.program.dimensions import Dimension, counterparts_message, non_staggered


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class FieldValue:
    """The data of a field (`array`, never copied) over `dims`, `array[0, 0, ...]` sitting at
    index `start` of the field's index space. Made by `sc.as_field`; accepted wherever an
    array is."""

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
    def dtype(self) -> np.dtype[Any]:
        dtype: np.dtype[Any] = np.dtype(self.array.dtype)
        return dtype

    @property
    def ndim(self) -> int:
        return len(self.dims)

    @property
    def domain(self) -> dict[Dimension, tuple[int, int]]:
        """The index range of the field along each dimension: `{dim: (start, start + n)}`."""
        return {
            d: (s, s + n) for d, s, n in zip(self.dims, self.start, self.array.shape, strict=True)
        }

    def asnumpy(self) -> np.ndarray[Any, Any]:
        """The data as a NumPy array (copied from the device for a GPU array)."""
        return host_array(self.array)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __getitem__(self, key: object) -> FieldValue:
        """`field[1:]`, `field[:, 2:5]`: the field over part of its domain, the slices
        counted from its first point as NumPy counts them in an array (gt4py's relative
        slicing); a view of the same data, starting where the slice starts. Slices of step
        1 only: an integer or another step would drop or skip points of a dimension."""
        keys = key if isinstance(key, tuple) else (key,)
        if len(keys) > len(self.dims):
            raise IndexError(
                f"{len(keys)} slices for a field over {len(self.dims)} dimensions "
                f"({', '.join(d.name for d in self.dims)})"
            )
        starts, parts = list(self.start), []
        for axis, part in enumerate(keys):
            if not isinstance(part, slice) or part.step not in (None, 1):
                raise TypeError(
                    f"a field value is sliced along {self.dims[axis].name} by {part!r}: slice "
                    "it with slices of step 1 (field[1:], field[:, 2:5]), which keep every "
                    "dimension; an index or another step would drop or skip points"
                )
            lo, hi, _ = part.indices(int(self.array.shape[axis]))
            starts[axis] += lo
            parts.append(slice(lo, max(lo, hi)))
        return dataclasses.replace(self, array=self.array[tuple(parts)], start=tuple(starts))

    def __repr__(self) -> str:
        dims = ", ".join(f"{d.name}[{lo}:{hi}]" for d, (lo, hi) in self.domain.items())
        return f"FieldValue({dims}; {self.dtype})"


def host_array(array: Any) -> np.ndarray[Any, Any]:
    """`array` as a NumPy array: itself, or a GPU array (cupy) copied to the host."""
    if isinstance(array, np.ndarray):
        return array
    get = getattr(array, "get", None)  # cupy
    return np.asarray(get() if callable(get) else array)


def as_field(
    dims: Sequence[Dimension], array: Any, *, start: Mapping[Dimension, int] | None = None
) -> FieldValue:
    """`sc.as_field((Cell, K), a, start={K: -1})`: `a` over (Cell, K), its first level being
    index -1. A dimension not named in `start` starts at 0. The array is not copied."""
    dims_t = tuple(dims)
    for d in dims_t:
        if not isinstance(d, Dimension):
            raise TypeError(f"sc.as_field: dims must be sc.Dimension objects, got {d!r}")
    if len(set(dims_t)) != len(dims_t):
        raise ValueError(f"sc.as_field: a dimension appears twice in {list(dims_t)}")
    both = counterparts_message("sc.as_field", dims_t)
    if both is not None:
        raise ValueError(both)
    shape = getattr(array, "shape", None)
    if shape is None or not hasattr(array, "dtype"):
        raise TypeError(
            f"sc.as_field: the data must be an array (numpy or cupy), got {type(array).__name__}"
        )
    if len(shape) != len(dims_t):
        raise ValueError(
            f"sc.as_field: {len(dims_t)} dimension(s) {list(dims_t)} for an array of "
            f"{len(shape)} dimension(s) (shape {tuple(shape)})"
        )
    starts = dict(start or {})
    for d, s in starts.items():
        if d not in dims_t:
            raise ValueError(
                f"sc.as_field: start names dimension {d!r}, which is not one of {list(dims_t)}"
            )
        if isinstance(s, bool) or not isinstance(s, numbers.Integral):
            raise TypeError(f"sc.as_field: start of {d} must be an integer, got {s!r}")
    return FieldValue(array, dims_t, tuple(int(starts.get(d, 0)) for d in dims_t))


def check_field_dims(where: str, dims: tuple[Dimension, ...], value: FieldValue) -> None:
    """A field value passed for a field over `dims` (`where` names the argument) must be
    over those dimensions, in that order (a field value is never transposed or copied)."""
    if value.dims != dims and tuple(map(non_staggered, value.dims)) != dims:
        raise ArgumentError(
            f"{where}: a field value over ({', '.join(d.name for d in value.dims)}) for a "
            f"field over ({', '.join(d.name for d in dims)}); pass one over those "
            "dimensions in that order (nothing is transposed implicitly)"
        )


def unwrap_field(where: str, dims: tuple[Dimension, ...], value: FieldValue) -> Any:
    """The array of a field value passed for a field over `dims` (`where` names the
    argument), checked by `check_field_dims`."""
    check_field_dims(where, dims, value)
    return value.array
