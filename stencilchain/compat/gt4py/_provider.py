"""A call's `offset_provider`: `{"C2E": table_or_connectivity, "Koff": K}`. A connectivity
(as_connectivity) was checked when it was made and its array is a frozen table; a plain
NumPy table is checked by the program, as stencilchain checks a mutable table. Which
specialisation a call runs is chosen by the program's TableDispatch from the arrays
(program/table_specialisation.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from stencilchain.compat.gt4py._connectivity import Connectivity, _PendingTable
from stencilchain.errors import ArgumentError, DefinitionError
from stencilchain.program.dimensions import Dimension
from stencilchain.program.table_specialisation import TABLE_DTYPES

_EMPTY: Mapping[str, Any] = {}
_TABLE_DTYPES = frozenset(np.dtype(d) for d in TABLE_DTYPES)


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
    """The array a program is called with for connectivity `name`: 2-D, int32 or int64."""
    value = provider.get(name)
    if type(value) is Connectivity:
        return value.table  # checked when it was made
    if value is None:
        raise DefinitionError(
            f"the field operator reads through {name}, but offset_provider has no entry "
            f"{name!r}; pass offset_provider={{{name!r}: table}} with a table of shape "
            "(n_entities, max_neighbors)"
        )
    if isinstance(value, _PendingTable):
        value = value.array
    elif isinstance(value, Dimension):
        raise ArgumentError(
            f"offset_provider[{name!r}] is the dimension {value.name}, but {name} is a "
            "connectivity (a FieldOffset with target=(entity, local)); give its table"
        )
    shape = getattr(value, "shape", None)
    if shape is None or len(shape) != 2:
        raise ArgumentError(
            f"offset_provider[{name!r}]: a connectivity's table is a 2-D integer array "
            f"or as_connectivity(...), got {type(value).__name__}"
            + (f" of shape {tuple(shape)}" if shape is not None else "")
        )
    if getattr(value, "dtype", None) not in _TABLE_DTYPES:
        raise ArgumentError(
            f"offset_provider[{name!r}]: a table's entries are int32 or int64, got "
            f"{getattr(value, 'dtype', None)}"
        )
    return value


def declared_key(provider: Mapping[str, Any], name: str) -> tuple[int, bool, str] | None:
    """The specialisation key that a connectivity of `provider` declares (as gt4py's
    offset-provider type: its declared skip value, not what its table holds), or None for
    a plain table (whose key its entries give)."""
    value = provider.get(name)
    if type(value) is Connectivity:
        return value.spec.key
    if isinstance(value, _PendingTable):
        table = value.array
        return int(table.shape[1]), value.skip_value is not None, str(np.dtype(table.dtype))
    return None
