"""stencilchain: stencil programs in a small Python DSL, compiled to native code.

    import stencilchain as sc
    I, J = sc.Dimension("I"), sc.Dimension("J")

    @sc.field_operator
    def lap(f: sc.Field[[I, J], sc.float64]) -> sc.Field[[I, J], sc.float64]:
        return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)

Importing this package imports neither the compilers nor DaCe.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING

from stencilchain import errors
from stencilchain._version import __version__
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

if TYPE_CHECKING:
    from stencilchain import backends, math
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
    from stencilchain.program.dimensions import (
        HORIZONTAL,
        LOCAL,
        VERTICAL,
        Dimension,
        Offset,
        size,
        staggered,
    )
    from stencilchain.program.dtypes import ScalarType, bool_, float32, float64, int32, int64
    from stencilchain.program.field_bounds import end_of, start_of
    from stencilchain.program.field_operator import FieldOperator, field_operator
    from stencilchain.program.field_values import FieldValue, as_field
    from stencilchain.program.program import Program, program
    from stencilchain.program.scan_operator import ScanOperator, scan_operator
    from stencilchain.program.tables import frozen_table
    from stencilchain.program.types import Field, Table
    from stencilchain.runtime.tracing import trace

# The public names imported on first use (PEP 562), each from its module: `import
# stencilchain` costs little more than `import numpy`, and the DSL's modules load when a
# program first needs them. A new public name is one row here and one import above.
_LAZY = {
    "backends": "stencilchain.backends",
    "math": "stencilchain.math",
    "frozen_table": "stencilchain.program.tables",
    "Connectivity": "stencilchain.program.connectivity",
    "NeighborSlot": "stencilchain.program.connectivity",
    **dict.fromkeys(
        (
            "as_offset",
            "astype",
            "broadcast",
            "concat_where",
            "index",
            "max_over",
            "min_over",
            "neighbor_sum",
            "where",
        ),
        "stencilchain.program.constructs",
    ),
    "Device": "stencilchain.program.device",
    **dict.fromkeys(
        ("HORIZONTAL", "LOCAL", "VERTICAL", "Dimension", "Offset", "size", "staggered"),
        "stencilchain.program.dimensions",
    ),
    **dict.fromkeys(
        ("ScalarType", "bool_", "float32", "float64", "int32", "int64"),
        "stencilchain.program.dtypes",
    ),
    "end_of": "stencilchain.program.field_bounds",
    "start_of": "stencilchain.program.field_bounds",
    "FieldOperator": "stencilchain.program.field_operator",
    "field_operator": "stencilchain.program.field_operator",
    "FieldValue": "stencilchain.program.field_values",
    "as_field": "stencilchain.program.field_values",
    "Program": "stencilchain.program.program",
    "program": "stencilchain.program.program",
    "ScanOperator": "stencilchain.program.scan_operator",
    "scan_operator": "stencilchain.program.scan_operator",
    "Field": "stencilchain.program.types",
    "Table": "stencilchain.program.types",
    "trace": "stencilchain.runtime.tracing",  # a timeline of what stencilchain does
}

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
    "FieldValue",
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
    "as_field",
    "as_offset",
    "astype",
    "backends",
    "bool_",
    "broadcast",
    "concat_where",
    "end_of",
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
    "staggered",
    "start_of",
    "trace",
    "where",
]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'stencilchain' has no attribute {name!r}")
    if module == f"{__name__}.{name}":  # a subpackage or submodule
        value: object = importlib.import_module(module)
    else:
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups find it without this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """This package: importing its subpackage `stencilchain.program` (which the import
    system records as the attribute `program`) leaves `stencilchain.program` the decorator,
    as the eager imports did."""

    def __setattr__(self, name: str, value: object) -> None:
        if name == "program" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
