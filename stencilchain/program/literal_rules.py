"""Which dtype a Python literal takes in a field operator: stencilchain's rule (a literal
adopts the dtype of the values it meets, docs/dsl.md) or gt4py's (a literal has a dtype of
its own, int32 for an int, float64 for a float, and meets only values of that dtype), which
the gt4py-compatible front end (stencilchain/compat/gt4py) switches on while it traces."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

import numpy as np

# True while a field or scan operator is traced under gt4py's literal rules.
_fixed_literal_dtypes: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "fixed_literal_dtypes", default=False
)


@contextlib.contextmanager
def gt4py_literals() -> Iterator[None]:
    """Trace under gt4py's rules for literals while the block runs."""
    token = _fixed_literal_dtypes.set(True)
    try:
        yield
    finally:
        _fixed_literal_dtypes.reset(token)


def fixed_literal_dtypes() -> bool:
    """Whether literals keep their own dtype (gt4py's rules) in the trace running now."""
    return _fixed_literal_dtypes.get()


def fixed_literal(value: object) -> object:
    """A Python literal as the NumPy scalar of the dtype gt4py gives it (an int that does not
    fit int32 is int64, as there); anything else as it is."""
    if isinstance(value, bool):
        return np.bool_(value)
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return np.int32(value)
        return np.int64(value)
    if isinstance(value, float):
        return np.float64(value)
    return value


FIXED_LITERALS_HINT = (
    "under gt4py's rules a Python int literal is int32 and a float literal float64, and "
    "neither takes another dtype: write the literal in the dtype of the other operand "
    "(e.g. float32(0.5), int64(1)) or convert with astype"
)
