"""Where the reads of an `sc.as_offset` are used: the conditions of the `sc.where`s above
them, as expressions of the program's own arguments, and their values on a call's
arguments. The check of the offsets (program/dynamic_offsets.py) refuses an entry only
where a read by it is used (docs/adr/0051-offsets-checked-where-used.md): a condition it
cannot evaluate before anything runs is left out, so the check covers more points, never
fewer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.field_values import FieldValue, host_array
from stencilchain.program.semantics import literal_value, operate

# A condition on the way to a read: an expression of the program's parameters evaluated at
# the point, and whether the read is in its true branch.
Condition = tuple[ir.Expr, bool]
# Where the reads by one offset are used: at the points where one of the conjunctions holds
# (one per read); () where some read is used everywhere.
Guard = tuple[tuple[Condition, ...], ...]
# a field operator's parameters bound to what its caller passes, in the caller's scope
# (None: the program's names)
Scope = Mapping[str, tuple[ir.Expr, "Scope | None"]]

_POINTWISE = (ir.Literal, ir.Binary, ir.Unary, ir.Cast, ir.MathCall, ir.Where)


def pointwise(expr: ir.Expr, scope: Scope | None) -> ir.Expr | None:
    """`expr` as an expression of the program's names, where it reads them at the point
    only (fields unshifted, scalars, literals and pointwise operations), else None."""
    if isinstance(expr, ir.Ref):
        if scope is not None and expr.name in scope:
            bound, outer = scope[expr.name]
            return pointwise(bound, outer)
        return expr
    if not isinstance(expr, _POINTWISE):
        return None
    operands = [pointwise(child, scope) for child in ir.children(expr)]
    if any(o is None for o in operands):
        return None
    given = iter(operands)
    return ir.map_children(expr, lambda _: next(given))  # type: ignore[arg-type,return-value]


def checkable(
    conditions: tuple[Condition, ...],
    params: Mapping[str, tuple[int, ir.Param]],
    written: set[str],
    offset: ir.Type,
) -> tuple[Condition, ...]:
    """The `conditions` that the check can evaluate before anything runs: those that read
    only the program's parameters that no call writes, its fields along the offset's own
    dimensions. Leaving one out checks more points, never fewer."""
    assert isinstance(offset, ir.FieldType)
    kept = []
    for cond, polarity in conditions:
        refs = _refs(cond)
        if all(
            r.name in params
            and r.name not in written
            and (not isinstance(r.type, ir.FieldType) or set(r.type.dims) <= set(offset.dims))
            for r in refs
        ):
            kept.append((cond, polarity))
    return tuple(kept)


def _refs(expr: ir.Expr) -> list[ir.Ref]:
    if isinstance(expr, ir.Ref):
        return [expr]
    return [r for child in ir.children(expr) for r in _refs(child)]


class _Unknown(Exception):
    """A condition the check cannot evaluate on these arguments."""


def where_used(
    guard: Guard,
    dims: tuple[Dimension, ...],
    params: Mapping[str, int],
    shape: tuple[int, ...],
    args: Any,
    own: Mapping[str, tuple[tuple[int, int], ...]],
) -> np.ndarray | None:
    """Where the reads by an offset field over `dims` are used, over its `shape`: the
    `guard`'s conditions evaluated on the call's `args` (`params`: each parameter's
    position), or None where one cannot be (a field value, a field over its own range in
    `own`, fields of other sizes, a wrong kind of argument: the check then covers every
    point)."""
    try:
        used = np.zeros(shape, bool)
        for conjunction in guard:
            holds = np.ones(shape, bool)
            for cond, taken in conjunction:
                value = np.broadcast_to(
                    np.asarray(_value_at(cond, dims, args, params, own), bool), shape
                )
                holds &= value if taken else ~value
            used |= holds
    except (_Unknown, TypeError, ValueError, IndexError, KeyError, AttributeError):
        return None
    return used


def _value_at(
    expr: ir.Expr,
    dims: tuple[Dimension, ...],
    args: Any,
    params: Mapping[str, int],
    own: Mapping[str, tuple[tuple[int, int], ...]],
) -> Any:
    """The value of a pointwise expression of the program's parameters, each field laid
    along `dims` (size 1 along those it lacks)."""
    if isinstance(expr, ir.Literal):
        return literal_value(expr)
    if isinstance(expr, ir.Ref):
        arg = args[params[expr.name]]
        if not isinstance(expr.type, ir.FieldType):
            return expr.type.numpy.type(arg)
        if type(arg) is FieldValue or expr.name in own:
            raise _Unknown(expr.name)
        array = host_array(arg)
        field_dims = expr.type.dims
        if array.ndim != len(field_dims):
            raise _Unknown(expr.name)
        kept = [d for d in dims if d in field_dims]
        array = np.transpose(array, [field_dims.index(d) for d in kept])
        return array.reshape([array.shape[kept.index(d)] if d in kept else 1 for d in dims])
    return operate(expr, [_value_at(e, dims, args, params, own) for e in ir.children(expr)])


__all__ = ["Condition", "Guard", "Scope", "checkable", "pointwise", "where_used"]
