"""C++ literals that are exact: the value of the IR literal, in its dtype, bit for bit."""

from __future__ import annotations

import math

from stencilchain.program.dtypes import ScalarType


def literal(value: bool | int | float, dtype: ScalarType, *, decimal: bool = False) -> str:
    """An exact C++ literal of `value` as `dtype`: floats as hex, or with `decimal` in their
    shortest round-trip decimal form (parenthesized when negative); float32 is cast, so that
    it never promotes an operation to double."""
    if dtype.is_bool:
        return "true" if value else "false"
    if dtype.is_integer:
        v = int(value)
        text = "(-9223372036854775807LL - 1)" if v == -(2**63) else f"{v}LL"
        return f"static_cast<{dtype.cpp}>({text})"
    f = float(value)
    # compiler builtins rather than std::numeric_limits: those are host-only constexpr
    # functions that CUDA device code cannot call (without --expt-relaxed-constexpr)
    if math.isnan(f):
        text = '__builtin_nan("")'
    elif math.isinf(f):
        text = ("-" if f < 0 else "") + "__builtin_huge_val()"
    elif decimal:
        text = repr(f)
        text = f"({text})" if text.startswith("-") else text
    else:
        text = f.hex()
    return text if dtype.name == "float64" else f"static_cast<float>({text})"
