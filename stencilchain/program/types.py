"""Annotations of the DSL: `Field[[I, J], float64]` and scalar dtypes."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.connectivity import Connectivity
from stencilchain.program.dimensions import Dimension, counterparts_message
from stencilchain.program.dtypes import ScalarType, int32, int64
from stencilchain.program.tuple_params import (
    Tree,
    annotation_tree,
    check_leaf_names,
    is_collection,
    leaf_params,
)


class Field:
    """Annotation of a field parameter: `Field[[I, J], float64]` (dims in array-axis order)."""

    def __class_getitem__(cls, item: Any) -> ir.FieldType:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise TypeError("write a field type as Field[[I, J], float64]")
        dims, dtype = item
        if isinstance(dims, Dimension):
            dims = [dims]
        if not isinstance(dims, (list, tuple)) or not all(isinstance(d, Dimension) for d in dims):
            raise TypeError(f"Field[...]: expected a list of Dimensions, got {dims!r}")
        if len(set(dims)) != len(dims):
            raise TypeError(f"Field[...]: a dimension appears twice in {list(dims)!r}")
        both = counterparts_message("Field[...]", tuple(dims))
        if both is not None:
            raise TypeError(both)
        if not isinstance(dtype, ScalarType):
            raise TypeError(f"Field[...]: expected a dtype such as float64, got {dtype!r}")
        return ir.FieldType(tuple(dims), dtype)


class Table:
    """Annotation of a program parameter holding a connectivity's neighbour table:
    `Table[C2E]` (int32 entries) or `Table[C2E, int64]`. The array's shape is
    `(n_<entity>, max_neighbors)`, e.g. `(n_cells, 3)` for C2E."""

    def __class_getitem__(cls, item: Any) -> ir.TableType:
        conn, dtype = item if isinstance(item, tuple) and len(item) == 2 else (item, int32)
        if not isinstance(conn, Connectivity):
            raise TypeError(
                f"Table[...]: expected a sc.Connectivity, e.g. Table[C2E], got {conn!r}"
            )
        if dtype not in (int32, int64):
            raise TypeError(
                f"Table[{conn.name}, ...]: a table's entries are int32 or int64, got {dtype!r}"
            )
        return ir.TableType((conn.entity, conn.local), dtype, conn)


def parameter_types(
    fn: Callable[..., Any],
    what: str,
    *,
    untyped: int = 0,
    tuples: dict[str, Tree] | None = None,
    overrides: Mapping[str, ir.FieldType | ScalarType | Tree] | None = None,
) -> tuple[tuple[ir.Param, ...], object]:
    """The typed parameters of a decorated function, and its return annotation (or None).

    The first `untyped` parameters (a scan's state) are plain positional parameters too,
    but take no annotation and are not returned. Where `tuples` is given, a parameter
    annotated with a (nested) tuple of field and scalar types is one parameter per leaf
    (program/tuple_params.py), and its tree is put in `tuples` by its name. `overrides`
    types parameters whatever their annotation (a scan's `a: float`; a tree, with
    `tuples`, for a scan's `a: tuple[float, float]`)."""
    location = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
    try:
        annotations = inspect.get_annotations(fn, eval_str=True)
    except Exception as err:
        raise DefinitionError(
            f"{what} {fn.__name__}: cannot evaluate annotations: {err}", location
        ) from err
    params = []
    for index, p in enumerate(inspect.signature(fn).parameters.values()):
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise DefinitionError(
                f"{what} {fn.__name__}: parameter '{p.name}' must be a plain positional parameter",
                location,
            )
        if p.default is not p.empty:
            raise DefinitionError(
                f"{what} {fn.__name__}: parameter '{p.name}' has a default; defaults are not supported",
                location,
            )
        if index < untyped:
            continue
        ann = annotations.get(p.name)
        if overrides and p.name in overrides:
            ann = overrides[p.name]
        tree = annotation_tree(ann, python_scalars=True) if tuples is not None else None
        if tuples is not None and is_collection(ann):  # an override's tree
            tree = ann
        if tuples is not None and tree is not None:
            tuples[p.name] = tree
            params += [leaf for leaf, _ in leaf_params(p.name, tree)]
            continue
        if not isinstance(ann, (ir.FieldType, ScalarType)):
            raise DefinitionError(
                f"{what} {fn.__name__}: parameter '{p.name}' needs an annotation "
                f"Field[[dims], dtype] or a dtype such as sc.float64"
                + (", or a (nested) tuple of them" if tuples is not None else "")
                + f", got {ann!r}",
                location,
            )
        params.append(ir.Param(p.name, ann))
    if tuples:
        check_leaf_names(params, location)
    return tuple(params), annotations.get("return")
