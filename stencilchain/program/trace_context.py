"""What the trace under way is tracing: the scan operator whose body it is in, and the
dimensions of the field operator's parameters (the order a message names them in). Set by
field_operator.py and scan_operator.py around a trace, read by the rules of expressions."""

from __future__ import annotations

import contextvars
from collections.abc import Collection

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension

# The name of the scan operator whose body is being traced, if any: its values are the
# current level's scalars, and a shift there gets a message saying where shifts belong.
scan_being_traced: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "scan_being_traced", default=None
)


# The dimensions of the field parameters of the field operator being traced, in the order
# they are declared: a message that suggests dimensions names them in that order.
dims_being_traced: contextvars.ContextVar[tuple[Dimension, ...]] = contextvars.ContextVar(
    "dims_being_traced", default=()
)


def declared_dims(params: Collection[ir.Param]) -> tuple[Dimension, ...]:
    """The dimensions of the field parameters `params`, each once, in declaration order."""
    found: list[Dimension] = []
    for p in params:
        if isinstance(p.type, ir.FieldType):
            found += [d for d in p.type.dims if d not in found]
    return tuple(found)
