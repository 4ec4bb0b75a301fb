"""gt4py.next's spelling over stencilchain: `import stencilchain.compat.gt4py as gtx` in
place of `import gt4py.next as gtx`, and the same field operators, programs, fields and
offset providers run on every stencilchain toolchain (docs/guide/coming-from-gt4py.md).

Nothing of gt4py is imported. Field operators are traced by stencilchain's tracer under
gt4py's rules for literals, once per specialization of the tables their `offset_provider`
gives (ADR 0028)."""

from __future__ import annotations

import builtins as _py
from typing import Any

import numpy as _np

from stencilchain.compat.gt4py import constructors, experimental
from stencilchain.compat.gt4py._connectivity import (
    Connectivity,
    NeighborTableOffsetProvider,
    as_connectivity,
)
from stencilchain.compat.gt4py._dims import (
    Dimension,
    DimensionKind,
    Dims,
    Field,
    GridType,
    as_non_staggered,
    flip_staggered,
    is_staggered,
)
from stencilchain.compat.gt4py._fields import as_field, empty, full, ones, zeros
from stencilchain.compat.gt4py._functions import (
    abs,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctanh,
    astype,
    broadcast,
    cbrt,
    ceil,
    concat_where,
    cos,
    cosh,
    exp,
    floor,
    fmod,
    gamma,
    isfinite,
    isinf,
    isnan,
    log,
    max_over,
    maximum,
    min_over,
    minimum,
    neg,
    neighbor_sum,
    power,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    trunc,
    where,
)
from stencilchain.compat.gt4py._offsets import FieldOffset
from stencilchain.compat.gt4py._operators import (
    FieldOperator,
    ScanOperator,
    field_operator,
    scan_operator,
)
from stencilchain.compat.gt4py._programs import Program, program
from stencilchain.compat.gt4py._unsupported import UNSUPPORTED, wait_for_compilation
from stencilchain.compat.gt4py._values import FieldValue
from stencilchain.errors import ArgumentError, DefinitionError

# gt4py's scalar types are NumPy's (and Python's own bool, int, float)
float32 = _np.float32
float64 = _np.float64
int32 = _np.int32
int64 = _np.int64
int8, int16 = _np.int8, _np.int16  # named for imports; refused in a Field (no such dtype)
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
bool = _py.bool
int = _py.int
float = _py.float
tuple = _py.tuple  # type: ignore[type-arg]
IndexType = _np.int32

_BACKENDS = {"gtfn_cpu": "run_gtfn_cpu", "gtfn_gpu": "run_gtfn_gpu", "itir_python": "run_embedded"}


def __getattr__(name: str) -> Any:
    """gt4py's backend names, as stencilchain's toolchains (imported when first asked)."""
    if name in _BACKENDS:
        from stencilchain import backends

        return getattr(backends, _BACKENDS[name])
    if name in UNSUPPORTED:
        return UNSUPPORTED[name]
    raise AttributeError(f"module 'stencilchain.compat.gt4py' has no attribute {name!r}")


__all__ = [
    "ArgumentError",
    "Connectivity",
    "DefinitionError",
    "Dimension",
    "DimensionKind",
    "Dims",
    "Field",
    "FieldOffset",
    "FieldOperator",
    "FieldValue",
    "GridType",
    "IndexType",
    "NeighborTableOffsetProvider",
    "Program",
    "ScanOperator",
    "abs",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
    "as_connectivity",
    "as_field",
    "as_non_staggered",
    "astype",
    "bool",
    "broadcast",
    "cbrt",
    "ceil",
    "concat_where",
    "constructors",
    "cos",
    "cosh",
    "empty",
    "exp",
    "experimental",
    "field_operator",
    "flip_staggered",
    "float",
    "float32",
    "float64",
    "floor",
    "fmod",
    "full",
    "gamma",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_staggered",
    "isfinite",
    "isinf",
    "isnan",
    "log",
    "max_over",
    "maximum",
    "min_over",
    "minimum",
    "neg",
    "neighbor_sum",
    "ones",
    "power",
    "program",
    "scan_operator",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "trunc",
    "tuple",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "wait_for_compilation",
    "where",
    "zeros",
]
