"""Field operators of scalars (gt4py's `def add(a: float, b: float) -> float`, or icon4py's
microphysics functions that return a tuple of scalars): no parameter is a field and every
value returned is a scalar. They are never a program's call; each call inside a field or
scan operator is replaced by the function's expressions with the call's arguments put in
(field_operator.FieldOperator._traced_call)."""

from __future__ import annotations

import typing
from typing import Any

import numpy as np

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.dtypes import ScalarType, from_numpy
from stencilchain.program.literal_rules import fixed_literal, fixed_literal_dtypes
from stencilchain.program.scan_annotations import COLUMN_DTYPES
from stencilchain.program.tracing import Symbol, as_expr
from stencilchain.program.tuple_params import (
    annotation_tree,
    fill,
    has_empty_tuple,
    is_collection,
    leaves,
    tree_repr,
    value_tree,
)


class ScalarResults(typing.NamedTuple):
    """The expressions a field operator of scalars returns (one per leaf of its result),
    and the nesting of a tuple or named-collection result (None for one scalar)."""

    exprs: tuple[ir.Expr, ...]
    tree: object


def scalar_results(
    name: str,
    params: tuple[ir.Param, ...],
    result: object,
    returns: object,
    location: tuple[str, int],
) -> ScalarResults | None:
    """What a field operator over `params` that returned `result` (traced) computes, where
    it is a function of scalars; None where a parameter or a returned value is a field. A
    returned literal takes the dtype of its NumPy type, of gt4py's rules for literals, or of
    the return annotation; the annotation must say what is returned."""
    if any(isinstance(p.type, ir.FieldType) for p in params):
        return None
    structured = value_tree(result)
    flat = leaves(structured) if is_collection(structured) else [result]
    if not flat or has_empty_tuple(structured):
        return None
    for value in flat:
        if isinstance(value, Symbol):
            if not isinstance(value.type, ScalarType):
                return None
        elif not isinstance(value, (bool, int, float, np.generic)):
            return None
    declared = _declared(returns)
    declared_leaves = leaves(declared) if is_collection(declared) else [declared]
    if len(declared_leaves) != len(flat):
        declared_leaves = [None] * len(flat)
    exprs = []
    for value, want in zip(flat, declared_leaves, strict=True):
        if isinstance(value, Symbol):
            exprs.append(value.expr)
            continue
        dtype = _literal_dtype(value, want)
        if dtype is None:
            raise DefinitionError(
                f"field operator {name} returns the literal {value!r}; annotate its return "
                "type (e.g. -> sc.float64) so that its dtype is known",
                location,
            )
        exprs.append(as_expr(value, dtype))
    tree = fill(structured, iter([None] * len(flat))) if is_collection(structured) else None
    got: object = exprs[0].type
    if tree is not None:
        got = fill(tree, iter([e.type for e in exprs]))
    if returns is not None and declared != got:
        raise DefinitionError(
            f"field operator {name} is annotated to return {tree_repr(declared)} "
            f"but returns {tree_repr(got)}",
            location,
        )
    return ScalarResults(tuple(exprs), tree)


def _declared(returns: object) -> object:
    """A return annotation as a tree of dtypes (`float`, `int`, `bool` as float64, int64,
    bool, as gt4py writes them), or as it is where it is none."""
    if returns in COLUMN_DTYPES:
        return COLUMN_DTYPES[returns]
    tree = annotation_tree(returns, python_scalars=True)
    return returns if tree is None else tree


def _literal_dtype(value: Any, declared: object) -> ScalarType | None:
    if isinstance(value, np.generic):
        return from_numpy(value.dtype)
    if fixed_literal_dtypes():
        return from_numpy(np.asarray(fixed_literal(value)).dtype)
    return declared if isinstance(declared, ScalarType) else None
