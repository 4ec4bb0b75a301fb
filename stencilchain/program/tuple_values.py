"""Tuples as values inside field operators: a traced tuple is a Python tuple of traced
values (nested as the user wrote it), and a DSL function of tuples (`sc.astype`, the
branches of `sc.where` and `sc.concat_where`) applies element by element, so the IR sees
only the functions of single values that every backend already handles."""

from __future__ import annotations

from collections.abc import Callable

from stencilchain.errors import DefinitionError


def any_tuple(*values: object) -> bool:
    """Whether one of `values` is a (traced) tuple."""
    return any(isinstance(v, tuple) for v in values)


def structure(value: object) -> str:
    """The nesting of `value` in words: `one value`, `a tuple (value, (value, value))`."""
    if isinstance(value, tuple):
        return f"a tuple {_shape(value)}"
    return "one value"


def _shape(value: object) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_shape(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return "value"


def map_leaves(fn: Callable[..., object], where: str, *values: object) -> object:
    """`fn` of the elements of `values` at each position of their common nesting, with that
    nesting; values of different nestings are a DefinitionError that names both (`where`,
    e.g. "sc.where", says what was called)."""
    if not any_tuple(*values):
        return fn(*values)
    shapes = {_shape(v) for v in values}
    if len(shapes) > 1:
        raise DefinitionError(
            f"{where}: the branches have different tuple structures "
            f"({' and '.join(structure(v) for v in values)}); each branch must be a value or "
            "a tuple of the same nesting, combined element by element"
        )
    tuples = [v for v in values if isinstance(v, tuple)]  # all of them, by their shapes
    return tuple(map_leaves(fn, where, *elems) for elems in zip(*tuples, strict=True))
