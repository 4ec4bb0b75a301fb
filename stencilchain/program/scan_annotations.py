"""A scan's annotations as gt4py writes them: `state: tuple[float, float]` (checked against
`init=`) and value parameters annotated `float`, `int` or `bool`, each a field of float64,
int64 or bool over the scan's dimensions (those of its other fields, or, where it has none,
of the call: its field arguments or its `out=`)."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import ScalarType, bool_, float64, int64
from stencilchain.program.program_args import ProgramArg
from stencilchain.program.tracing import Symbol
from stencilchain.program.tuple_params import (
    Tree,
    annotation_leaves,
    annotation_tree,
    leaf_paths,
    leaves,
    tree_repr,
    value_tree,
)

# The Python types that annotate a scan's values as gt4py writes them, and their dtypes.
COLUMN_DTYPES: dict[object, ScalarType] = {float: float64, int: int64, bool: bool_}


def _annotations(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return inspect.get_annotations(fn, eval_str=True)
    except Exception:  # parameter_types reports it, with the reason
        return {}


def value_trees(fn: Callable[..., Any]) -> dict[str, Tree]:
    """The value parameters of scan function `fn` annotated with a (nested) tuple or a
    named collection (`a: tuple[float, tuple[float, float]]`), each as its tree (`float`
    a float64 leaf): flattened to one parameter per leaf (program/tuple_params.py)."""
    annotations = _annotations(fn)
    found = {}
    for name in list(inspect.signature(fn).parameters)[1:]:
        tree = annotation_tree(annotations.get(name), python_scalars=True)
        if tree is not None:
            found[name] = tree
    return found


def _value_leaves(fn: Callable[..., Any]) -> list[tuple[str, object, object]]:
    """Each value parameter of scan function `fn`, or each leaf of one annotated with a
    collection, by its IR name (`a_1_0`), with its annotation as written and its type (a
    dtype for `float` or `np.float32` in a collection)."""
    annotations = _annotations(fn)
    trees = value_trees(fn)
    found: list[tuple[str, object, object]] = []
    for name in list(inspect.signature(fn).parameters)[1:]:
        ann = annotations.get(name)
        if name in trees:
            paths = [ir_name for ir_name, _ in leaf_paths(trees[name], name)]
            found += zip(paths, annotation_leaves(ann), leaves(trees[name]), strict=True)
        else:
            found.append((name, ann, ann))
    return found


def column_params(fn: Callable[..., Any], *, dtypes: bool = False) -> dict[str, ScalarType]:
    """The value parameters of scan function `fn` (or leaves of its collection parameters,
    by IR name) annotated `float`, `int` or `bool`, and with `dtypes` (gt4py's rule: every
    value of a scan is one per level) those annotated with a dtype (`sc.float32`) too."""
    found = {}
    for name, ann, leaf in _value_leaves(fn):
        if ann in COLUMN_DTYPES:
            found[name] = COLUMN_DTYPES[ann]
        elif dtypes and isinstance(leaf, ScalarType):
            found[name] = leaf
    return found


def scalar_overrides(fn: Callable[..., Any]) -> dict[str, ir.FieldType | ScalarType]:
    """The parameters of field operator or program `fn` annotated `float`, `int` or `bool`:
    scalars of float64, int64 or bool, as gt4py writes them."""
    annotations = _annotations(fn)
    return {
        n: COLUMN_DTYPES[a] for n, a in annotations.items() if n != "return" and a in COLUMN_DTYPES
    }


def field_dims(fn: Callable[..., Any]) -> tuple[Dimension, ...] | None:
    """The dimensions of the widest value parameter of `fn` annotated as a field (the
    first of them), which the others' are a subset of."""
    found: tuple[Dimension, ...] | None = None
    for _, ann, _ in _value_leaves(fn):
        if isinstance(ann, ir.FieldType) and (found is None or len(ann.dims) > len(found)):
            found = ann.dims
    return found


def _state_tree(annotation: object) -> object:
    """A state annotation as a tree of dtypes; None where it is not one."""
    if isinstance(annotation, ScalarType):
        return annotation
    if annotation in COLUMN_DTYPES:
        return COLUMN_DTYPES[annotation]
    if typing.get_origin(annotation) is tuple:
        elems = [_state_tree(e) for e in typing.get_args(annotation)]
        return None if not elems or None in elems else tuple(elems)
    tree = annotation_tree(annotation, python_scalars=True)  # a dataclass or NamedTuple
    if tree is not None and all(isinstance(t, ScalarType) for t in leaves(tree)):
        return tree
    return None


def check_state_annotation(
    fn: Callable[..., Any], init_types: object, where: str, location: tuple[str, int]
) -> None:
    """The annotation of the state parameter of `fn`, if any, says what `init=` makes
    (`init_types`, a dtype or a tree of them); else a DefinitionError."""
    state = next(iter(inspect.signature(fn).parameters))
    annotation = _annotations(fn).get(state)
    if annotation is None:
        return
    tree = _state_tree(annotation)
    if tree is None:
        raise DefinitionError(
            f"{where}: the state '{state}' is annotated {annotation!r}; annotate it with a "
            "dtype (sc.float64, or float, int, bool), a tuple of them or a dataclass or "
            "NamedTuple of them, or not at all",
            location,
        )
    if tree != init_types:
        raise DefinitionError(
            f"{where}: the state '{state}' is annotated {tree_repr(tree)}, but init= makes "
            f"it {tree_repr(init_types)}; a Python float is float64, an int int64 (write "
            "init=0.0 for a float64 state, np.float32(0) for a float32 one)",
            location,
        )


def dims_of_call(
    args: tuple[Any, ...], kwargs: dict[str, Any], axis: Dimension
) -> tuple[Dimension, ...] | None:
    """The dimensions of the widest field among a call's arguments (those over `axis`),
    else of its `out=`; None where it has neither."""
    found: list[tuple[Dimension, ...]] = []
    out = kwargs.get("out")
    values = (*args, *(v for k, v in kwargs.items() if k not in ("out", "domain")))
    for group in (values, (out,)):
        for leaf in leaves(value_tree(group)):
            t = leaf.type if isinstance(leaf, Symbol) else None
            if isinstance(leaf, ProgramArg):
                t = leaf.ref.type
            if isinstance(t, ir.FieldType) and axis in t.dims:
                found.append(t.dims)
        if found:
            return max(found, key=len)
    return None
