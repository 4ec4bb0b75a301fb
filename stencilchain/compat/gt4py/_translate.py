"""A gt4py operator's function with its annotations in stencilchain's terms."""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

from stencilchain.compat.gt4py._dims import annotation
from stencilchain.errors import DefinitionError


def translated(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` with its annotations in stencilchain's terms (NumPy dtypes mapped to its own),
    the same code (so errors point at the user's lines)."""
    copy = types.FunctionType(
        fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
    )
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    copy.__module__ = fn.__module__
    try:
        raw = inspect.get_annotations(fn, eval_str=True)
    except DefinitionError as err:  # a gt4py type that stencilchain has not (int8)
        location = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
        raise DefinitionError(f"{fn.__name__}: {err.reason}", location) from None
    except Exception:  # stencilchain reports it, with the reason
        return fn
    where = f"{fn.__name__}: annotation"
    copy.__annotations__ = {name: annotation(value, where) for name, value in raw.items()}
    return copy
