"""gt4py's field constructors: `as_field(domain_or_dims, array, origin=)`, `zeros`, `ones`,
`full`, `empty` over a domain `{Cell: n, K: nlev}` (or `{K: (-1, nlev)}`, a range), each a
field value of stencilchain (an array over dimensions with the index it starts at)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from stencilchain.compat.gt4py._dims import scalar_type
from stencilchain.compat.gt4py._values import FieldValue, make_field
from stencilchain.errors import ArgumentError
from stencilchain.program.dimensions import Dimension

DomainLike = Mapping[Dimension, Any] | Sequence[Dimension]


def _dims_and_ranges(
    domain: DomainLike, where: str
) -> tuple[tuple[Dimension, ...], tuple[tuple[int, int], ...] | None]:
    """The dimensions of `domain`, and their ranges where it gives sizes or ranges."""
    if isinstance(domain, Mapping):
        dims = tuple(domain)
        ranges = []
        for d, extent in domain.items():
            if isinstance(extent, (int, np.integer)) and not isinstance(extent, bool):
                ranges.append((0, int(extent)))
            elif (
                isinstance(extent, tuple)
                and len(extent) == 2
                and all(isinstance(v, (int, np.integer)) for v in extent)
            ):
                ranges.append((int(extent[0]), int(extent[1])))
            else:
                raise ArgumentError(
                    f"{where}: the domain gives each dimension a size or a (start, stop) "
                    f"range, got {d!r}: {extent!r}"
                )
        out: tuple[tuple[int, int], ...] | None = tuple(ranges)
    elif isinstance(domain, (list, tuple)):
        dims, out = tuple(domain), None
    else:
        raise ArgumentError(
            f"{where}: the domain is a dict {{Dim: size}} or a sequence of Dimensions, got "
            f"{domain!r}"
        )
    for d in dims:
        if not isinstance(d, Dimension):
            raise ArgumentError(f"{where}: {d!r} is not a Dimension")
    return dims, out


def as_field(
    domain: DomainLike,
    data: Any,
    dtype: Any = None,
    *,
    origin: Mapping[Dimension, int] | None = None,
    allocator: Any = None,
    device: Any = None,
    copy: bool | None = None,
) -> FieldValue:
    """`data` over the dimensions of `domain`; `origin={K: 1}` says that `data[:, 1]` is
    level 0 (gt4py's origin is the array index of field index 0). The array is not copied
    unless `dtype=` asks for another dtype or `copy=True`."""
    where = "as_field"
    if allocator is not None or device is not None:
        raise ArgumentError(f"{where}: allocator= and device= are not supported; pass an array")
    dims, ranges = _dims_and_ranges(domain, where)
    if not hasattr(data, "shape") or not hasattr(data, "dtype"):
        data = np.asarray(data)
    if dtype is not None:
        want = scalar_type(dtype, where).numpy
        if data.dtype != want or copy:
            data = np.array(data, dtype=want)
    elif copy:
        data = np.array(data)
    if len(data.shape) != len(dims):
        raise ArgumentError(
            f"{where}: {len(dims)} dimension(s) for an array of shape {tuple(data.shape)}"
        )
    start = {d: 0 for d in dims}
    if ranges is not None:
        for d, (lo, hi), n in zip(dims, ranges, data.shape):
            if hi - lo != n:
                raise ArgumentError(
                    f"{where}: the domain gives {d.name} {hi - lo} points, the array {n}"
                )
            start[d] = lo
    if origin is not None:
        if ranges is not None:
            raise ArgumentError(f"{where}: give origin= or a domain with ranges, not both")
        for d, o in origin.items():
            if d not in start:
                raise ArgumentError(f"{where}: origin= names {d!r}, not one of {list(dims)}")
            start[d] = -int(o)
    return make_field(dims, data, start)


def _filled(domain: DomainLike, dtype: Any, where: str, fill: Any) -> FieldValue:
    dims, ranges = _dims_and_ranges(domain, where)
    if ranges is None:
        raise ArgumentError(f"{where}: the domain needs sizes, e.g. {{Cell: n, K: nlev}}")
    np_dtype = scalar_type(np.float64 if dtype is None else dtype, where).numpy
    shape = tuple(hi - lo for lo, hi in ranges)
    array = np.empty(shape, dtype=np_dtype) if fill is None else np.full(shape, fill, np_dtype)
    return make_field(dims, array, {d: lo for d, (lo, _) in zip(dims, ranges)})


def zeros(
    domain: DomainLike, dtype: Any = None, *, allocator: Any = None, device: Any = None
) -> FieldValue:
    """A field of zeros over `domain` (float64 unless `dtype=`)."""
    return _filled(domain, dtype, "zeros", 0)


def ones(
    domain: DomainLike, dtype: Any = None, *, allocator: Any = None, device: Any = None
) -> FieldValue:
    """A field of ones over `domain` (float64 unless `dtype=`)."""
    return _filled(domain, dtype, "ones", 1)


def full(
    domain: DomainLike,
    fill_value: Any,
    dtype: Any = None,
    *,
    allocator: Any = None,
    device: Any = None,
) -> FieldValue:
    """A field of `fill_value` over `domain` (its dtype, or `dtype=`)."""
    if dtype is None:
        dtype = np.asarray(fill_value).dtype.type
    return _filled(domain, dtype, "full", fill_value)


def empty(
    domain: DomainLike, dtype: Any = None, *, allocator: Any = None, device: Any = None
) -> FieldValue:
    """A field over `domain` whose values are not set (float64 unless `dtype=`)."""
    return _filled(domain, dtype, "empty", None)
