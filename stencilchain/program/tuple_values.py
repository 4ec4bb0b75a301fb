"""Tuples as values inside field operators: a traced tuple is a Python tuple of traced
values (nested as the user wrote it), and a DSL function of tuples (`sc.astype`, the
branches of `sc.where` and `sc.concat_where`) applies element by element, so the IR sees
only the functions of single values that every backend already handles."""

from __future__ import annotations

from collections.abc import Callable

from stencilchain.errors import DefinitionError
from stencilchain.program.tuple_params import (
    Record,
    fill,
    is_collection,
    leaves,
    rebuild,
    value_tree,
)


def any_tuple(*values: object) -> bool:
    """Whether one of `values` is a (traced) tuple, dataclass or NamedTuple."""
    return any(is_collection(value_tree(v)) for v in values)


def structure(value: object) -> str:
    """The nesting of `value` in words: `one value`, `a tuple (value, (value, value))`."""
    tree = value_tree(value)
    if isinstance(tree, Record):
        return _shape(tree)
    if isinstance(tree, tuple):
        return f"a tuple {_shape(tree)}"
    return "one value"


def _shape(tree: object) -> str:
    if isinstance(tree, Record):
        inner = ", ".join(f"{n}={_shape(e)}" for n, e in zip(tree.names, tree.elems))
        return f"{tree.cls.__name__}({inner})"
    if isinstance(tree, tuple):
        return "(" + ", ".join(_shape(v) for v in tree) + ("," if len(tree) == 1 else "") + ")"
    return "value"


def map_leaves(fn: Callable[..., object], where: str, *values: object) -> object:
    """`fn` of the elements of `values` at each position of their common nesting (tuples,
    dataclasses, NamedTuples), with that nesting; values of different nestings are a
    DefinitionError that names both (`where`, e.g. "sc.where", says what was called)."""
    trees = [value_tree(v) for v in values]
    if not any(map(is_collection, trees)):
        return fn(*values)
    skeletons = [fill(t, iter([None] * len(leaves(t)))) for t in trees]
    if any(s != skeletons[0] for s in skeletons[1:]):
        raise DefinitionError(
            f"{where}: the branches have different tuple structures "
            f"({' and '.join(structure(v) for v in values)}); each branch must be a value or "
            "a tuple of the same nesting, combined element by element"
        )
    results = [fn(*elems) for elems in zip(*(leaves(t) for t in trees), strict=True)]
    return rebuild(skeletons[0], iter(results))
