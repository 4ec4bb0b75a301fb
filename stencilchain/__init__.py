"""stencilchain: stencil programs in a small Python DSL, compiled to native code.

    import stencilchain as sc
    I, J = sc.Dimension("I"), sc.Dimension("J")

    @sc.field_operator
    def lap(f: sc.Field[[I, J], sc.float64]) -> sc.Field[[I, J], sc.float64]:
        return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)

Importing this package imports neither the compilers nor DaCe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stencilchain import errors, math
from stencilchain.errors import (
    ArgumentError,
    BuildsFailedError,
    CacheDirectoryError,
    CacheSecurityError,
    CompilationError,
    ConfigError,
    DecompositionError,
    DefinitionError,
    DistributedError,
    DomainError,
    MissingExtraError,
    StencilchainError,
    UnsupportedError,
    WorkspaceError,
)
from stencilchain.program.connectivity import Connectivity, NeighborSlot
from stencilchain.program.constructs import (
    as_offset,
    astype,
    broadcast,
    concat_where,
    index,
    max_over,
    min_over,
    neighbor_sum,
    where,
)
from stencilchain.program.device import Device
from stencilchain.program.dimensions import HORIZONTAL, LOCAL, VERTICAL, Dimension, Offset, size
from stencilchain.program.dtypes import ScalarType, bool_, float32, float64, int32, int64
from stencilchain.program.field_operator import FieldOperator, field_operator
from stencilchain.program.program import Program, program
from stencilchain.program.scan_operator import ScanOperator, scan_operator
from stencilchain.program.tables import frozen_table
from stencilchain.program.types import Field, Table

if TYPE_CHECKING:
    from stencilchain import backends
    from stencilchain.runtime.tracing import trace

from stencilchain._version import __version__

__all__ = [
    "HORIZONTAL",
    "LOCAL",
    "VERTICAL",
    "ArgumentError",
    "BuildsFailedError",
    "CacheDirectoryError",
    "CacheSecurityError",
    "CompilationError",
    "ConfigError",
    "Connectivity",
    "DecompositionError",
    "DefinitionError",
    "Device",
    "Dimension",
    "DistributedError",
    "DomainError",
    "Field",
    "FieldOperator",
    "MissingExtraError",
    "NeighborSlot",
    "Offset",
    "Program",
    "ScalarType",
    "ScanOperator",
    "StencilchainError",
    "Table",
    "UnsupportedError",
    "WorkspaceError",
    "__version__",
    "as_offset",
    "astype",
    "backends",
    "bool_",
    "broadcast",
    "concat_where",
    "errors",
    "field_operator",
    "float32",
    "float64",
    "frozen_table",
    "index",
    "int32",
    "int64",
    "math",
    "max_over",
    "min_over",
    "neighbor_sum",
    "program",
    "scan_operator",
    "size",
    "trace",
    "where",
]


def __getattr__(name: str) -> object:
    if name == "backends":
        import importlib

        return importlib.import_module("stencilchain.backends")
    if name == "trace":  # a timeline of what stencilchain does (runtime/tracing.py)
        from stencilchain.runtime.tracing import trace

        return trace
    raise AttributeError(f"module 'stencilchain' has no attribute {name!r}")
