"""A call's `offset_provider`: `{"C2E": table_or_connectivity, "Koff": K}`. A connectivity
(as_connectivity) was checked when it was made and carries its spec; a plain NumPy table is
looked at per call (its width, whether it has -1 entries) and checked by the program, as
stencilchain checks a mutable table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from stencilchain.compat.gt4py._connectivity import Connectivity, _PendingTable
from stencilchain.compat.gt4py._offsets import TableSpec
from stencilchain.errors import ArgumentError
from stencilchain.program.dimensions import Dimension
from stencilchain.program.tables import has_skips

_EMPTY: Mapping[str, Any] = {}


def provider_of(offset_provider: object) -> Mapping[str, Any]:
    if offset_provider is None:
        return _EMPTY
    if not isinstance(offset_provider, Mapping):
        raise ArgumentError(
            f"offset_provider= is a dict {{'C2E': table, 'Koff': K}}, got "
            f"{type(offset_provider).__name__}"
        )
    return offset_provider


def table_array(provider: Mapping[str, Any], name: str) -> Any:
    """The array a program is called with for connectivity `name`."""
    value = provider[name]
    if type(value) is Connectivity:
        return value.table
    if isinstance(value, _PendingTable):
        return value.array
    return value


def spec_of(provider: Mapping[str, Any], name: str) -> TableSpec | None:
    """The spec of the table the provider gives for `name`, or None where it has none."""
    value = provider.get(name)
    if value is None:
        return None
    if isinstance(value, Connectivity):
        return value.spec
    if isinstance(value, _PendingTable):
        array = value.array
        skips = value.skip_value is not None
    elif isinstance(value, Dimension):
        raise ArgumentError(
            f"offset_provider[{name!r}] is the dimension {value.name}, but {name} is a "
            "connectivity (a FieldOffset with target=(entity, local)); give its table"
        )
    else:
        array = value
        shape = getattr(array, "shape", None)
        if shape is None or len(shape) != 2:
            raise ArgumentError(
                f"offset_provider[{name!r}]: a connectivity's table is a 2-D integer array "
                f"or as_connectivity(...), got {type(value).__name__}"
                + (f" of shape {tuple(shape)}" if shape is not None else "")
            )
        skips = has_skips(np.asarray(array))
    dtype = str(np.dtype(array.dtype))
    if dtype not in ("int32", "int64"):
        raise ArgumentError(
            f"offset_provider[{name!r}]: a table's entries are int32 or int64, got {dtype}"
        )
    return TableSpec(int(array.shape[1]), skips, dtype)
