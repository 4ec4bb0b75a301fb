"""The DSL's functions on traced values: `sc.where`, `sc.concat_where`, `sc.broadcast`,
`sc.index`, `sc.astype`, the neighbour reductions (`sc.neighbor_sum`, `sc.max_over`,
`sc.min_over`) and the offset field of a data-dependent shift (`sc.as_offset`), each
recording its IR node on the traced operands (program/tracing.py, program/shifts.py)."""

from __future__ import annotations

from typing import Any

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import (
    ScalarType,
    int64,
)
from stencilchain.program.dynamic_offsets import COMPUTED, offset_operand
from stencilchain.program.regions import Joined, Region
from stencilchain.program.shifts import DynamicOffset
from stencilchain.program.staggered import check_dims
from stencilchain.program.trace_context import scan_being_traced
from stencilchain.program.tracing import (
    Symbol,
    as_expr,
    check_operand,
    describe,
    result_type,
    typed_dtype,
    unify_dims,
    unify_dtype,
)
from stencilchain.program.tuple_values import any_tuple, map_leaves


def where(cond: object, true: object, false: object) -> Any:
    """`true` where `cond` holds, else `false`, pointwise; tuple branches element by
    element (a tuple of the same nesting)."""
    if any_tuple(true, false):
        return map_leaves(lambda t, f: where(cond, t, f), "sc.where", true, false)
    if isinstance(cond, (Region, Joined)):
        raise DefinitionError(
            f"sc.where({cond.text}, ...): a condition on a dimension's index selects with "
            f"sc.concat_where({cond.text}, a, b) (each branch evaluated only where it applies)"
        )
    check_operand(cond, "sc.where condition")
    if not isinstance(cond, Symbol):
        raise DefinitionError("sc.where: the condition must be a traced bool value, not a literal")
    if typed_dtype(cond) != ScalarType("bool"):
        raise DefinitionError(f"sc.where: the condition is {describe(cond)}, it must be bool")
    dtype = unify_dtype((true, false), "sc.where")
    dims = unify_dims((cond, true, false), "sc.where")
    return Symbol(
        ir.Where(
            as_expr(cond, ScalarType("bool"), dims),
            as_expr(true, dtype, dims),
            as_expr(false, dtype, dims),
            result_type(dims, dtype),
        )
    )


def concat_where(cond: object, true: object, false: object) -> Any:
    """`true` where the index along a dimension satisfies `cond` (`K == 0`, `K >= sc.size(K)
    - 1`, combined with `&`, `|`, `~`), else `false`. Each branch is evaluated only where it
    is selected, so it may read at offsets that leave the arrays where the other applies.
    Tuple branches combine element by element."""
    if any_tuple(true, false):
        return map_leaves(lambda t, f: concat_where(cond, t, f), "sc.concat_where", true, false)
    if isinstance(cond, Joined):  # along several dimensions: one concat_where per side
        if cond.op == "&":
            return concat_where(cond.left, concat_where(cond.right, true, false), false)
        return concat_where(cond.left, true, concat_where(cond.right, true, false))
    if not isinstance(cond, Region):
        got = describe(cond) if isinstance(cond, (Symbol, bool, int, float)) else repr(cond)
        raise DefinitionError(
            f"sc.concat_where: the condition must compare a dimension with an index, such as "
            f"K == 0, K < 2 or K >= sc.size(K) - 1 (combined with &, |, ~), got {got}; a "
            "condition on values is sc.where(cond, a, b)"
        )
    scan = scan_being_traced.get()
    if scan is not None:
        raise DefinitionError(
            f"sc.concat_where inside scan operator {scan}: the body of a scan sees only the "
            "current level's values; compute it in a @field_operator into a temporary"
        )
    dtype = unify_dtype((true, false), "sc.concat_where")
    index_field = Symbol(ir.Index(cond.dim, ir.FieldType((cond.dim,), int64)))
    dims = unify_dims((index_field, true, false), f"sc.concat_where({cond.text}, ...)")
    assert dims is not None
    return Symbol(
        ir.ConcatWhere(
            cond.dim,
            cond.intervals,
            as_expr(true, dtype, dims),
            as_expr(false, dtype, dims),
            ir.FieldType(dims, dtype),
        )
    )


def broadcast(value: object, dims: object) -> Symbol:
    """`value` (a field over a subset of `dims`, a scalar or a literal) as a field over
    `dims`, in that order: its value at each point is `value`'s at that point's indices along
    its own dimensions."""
    if not isinstance(dims, (tuple, list)) or not all(isinstance(d, Dimension) for d in dims):
        raise DefinitionError(
            f"sc.broadcast: the dimensions must be a tuple of sc.Dimension, got {dims!r}"
        )
    target = tuple(dims)
    if not target or len(set(target)) != len(target):
        raise DefinitionError(
            "sc.broadcast: the dimensions must be distinct and at least one, got "
            f"({', '.join(d.name for d in target)})"
        )
    check_dims("sc.broadcast", target)
    check_operand(value, "sc.broadcast")
    if isinstance(value, Symbol):
        t = value.type
        if isinstance(t, ir.FieldType) and not set(t.dims) <= set(target):
            missing = ", ".join(d.name for d in t.dims if d not in target)
            raise DefinitionError(
                f"sc.broadcast of {describe(value)} to ({', '.join(d.name for d in target)}): "
                f"the target lacks {missing}; a field is broadcast to a superset of its "
                "dimensions"
            )
        dtype = typed_dtype(value)
        if isinstance(t, ir.FieldType) and t.dims == target:
            return value
        return Symbol(ir.Broadcast(value.expr, ir.FieldType(target, dtype)))
    dtype = unify_dtype((value,), "sc.broadcast")
    return Symbol(ir.Broadcast(as_expr(value, dtype), ir.FieldType(target, dtype)))


def index(dim: object) -> Symbol:
    """The index along `dim` at each point: an int64 field over `(dim,)`, broadcast like any
    field over fewer dimensions (`sc.where(sc.index(K) == 0, a, b)`)."""
    if not isinstance(dim, Dimension):
        raise DefinitionError(f"sc.index takes a sc.Dimension, got {dim!r}")
    scan = scan_being_traced.get()
    if scan is not None:
        raise DefinitionError(
            f"sc.index inside scan operator {scan}: the body of a scan sees only the current "
            f"level's values; pass sc.index({dim.name}) to the scan as an argument from the "
            "field operator that calls it (a field over the scan's dimensions: "
            f"sc.broadcast(sc.index({dim.name}), dims))"
        )
    return Symbol(ir.Index(dim, ir.FieldType((dim,), int64)))


def astype(value: object, dtype: ScalarType) -> Any:
    """`value` converted to `dtype` (the one explicit conversion of the DSL); a tuple
    (nested or not) element by element."""
    if not isinstance(dtype, ScalarType):
        raise DefinitionError(f"sc.astype: {dtype!r} is not a dtype; use e.g. sc.float32")
    if any_tuple(value):
        return map_leaves(lambda v: astype(v, dtype), "sc.astype", value)
    if not isinstance(value, Symbol):
        raise DefinitionError(
            f"sc.astype takes a traced field or scalar, or a tuple of them, got {value!r}; "
            "write a literal directly (it takes the dtype of the values it meets)"
        )
    t = value.type
    if (t.dtype if isinstance(t, ir.FieldType) else t) == dtype:
        return value
    new_type = ir.FieldType(t.dims, dtype) if isinstance(t, ir.FieldType) else dtype
    return Symbol(ir.Cast(value.expr, new_type))


def _neighbor_reduce(op: str, fn: str, value: object, axis: object) -> Symbol:
    where = f"sc.{fn}"
    if not isinstance(axis, Dimension) or not axis.is_local:
        raise DefinitionError(
            f"{where}: axis= must be a local dimension (declared with kind=sc.LOCAL), got "
            f"{axis!r}; a reduction runs over the neighbour slots of a connectivity"
        )
    if not (isinstance(value, Symbol) and isinstance(value.type, ir.FieldType)):
        raise DefinitionError(f"{where}: expected a local field over {axis.name}, got {value!r}")
    t = value.type
    if axis not in t.dims:
        raise DefinitionError(
            f"{where}: {describe(value)} is not over {axis.name}; reduce a local field such "
            f"as f(C2E) over its local dimension"
        )
    if t.dtype.is_bool:
        raise DefinitionError(
            f"{where}: {describe(value)} is bool; cast it with sc.astype to count or compare"
        )
    dims = tuple(d for d in t.dims if d != axis)
    if not dims:
        raise DefinitionError(f"{where}: the result would have no dimension")
    return Symbol(ir.NeighborReduce(op, value.expr, axis, ir.FieldType(dims, t.dtype)))


def neighbor_sum(value: object, axis: object) -> Symbol:
    """The sum of a local field over its local dimension `axis`, skipping missing
    neighbours (the sum over none is 0)."""
    return _neighbor_reduce("sum", "neighbor_sum", value, axis)


def max_over(value: object, axis: object) -> Symbol:
    """The maximum over `axis`, skipping missing neighbours; over none it is -inf for
    floats and the dtype's minimum for integers."""
    return _neighbor_reduce("max", "max_over", value, axis)


def min_over(value: object, axis: object) -> Symbol:
    """The minimum over `axis`, skipping missing neighbours; over none it is +inf for
    floats and the dtype's maximum for integers."""
    return _neighbor_reduce("min", "min_over", value, axis)


def as_offset(dim: object, offset: object) -> DynamicOffset:
    """`f(sc.as_offset(K, off))` reads `f` at `k + off[point]` along K: a data-dependent
    shift by an integer field parameter over K, or its entries plus or minus scalars
    (`off + 1`; checked to stay in the array at the call), read through tables, slots or
    shifts along other dimensions."""
    written = f"sc.as_offset({dim!r}, {describe(offset)})"
    if not isinstance(dim, Dimension) or dim.is_local:
        raise DefinitionError(
            f"{written}: the first argument is the dimension to shift along (not a local "
            "one), e.g. sc.as_offset(K, k_offset)"
        )
    if not (isinstance(offset, Symbol) and isinstance(offset.type, ir.FieldType)):
        raise DefinitionError(
            f"{written}: the offset is an integer field (a field parameter); for a fixed "
            f"offset write f({dim.name} + 1)"
        )
    t = offset.type
    if not t.dtype.is_integer:
        raise DefinitionError(
            f"{written}: the offset must be int32 or int64, got {t.dtype}; cast it with "
            "sc.astype before passing it in, or pass an integer field"
        )
    if dim not in t.dims:
        raise DefinitionError(
            f"{written}: the offset field is not over {dim.name}; an offset along "
            f"{dim.name} is given for each level, a field over {dim.name} and the other "
            "dimensions of the shifted field"
        )
    if not reads_entries(offset.expr, dim):
        raise DefinitionError(
            f"{written}: the offset must be a field parameter as it is passed in, or "
            f"{COMPUTED.replace('dimensions', f'dimensions than {dim.name}', 1)} (its "
            "entries are checked against the array before anything runs, like a table's)"
        )
    return DynamicOffset(dim, offset)


def reads_entries(expr: ir.Expr, dim: Dimension) -> bool:
    """Whether every value of `expr` is an entry of one field parameter at the same index
    along `dim` (or 0, for a missing neighbour), plus or minus scalars: the parameter
    itself, shifted along other dimensions, read through neighbour tables, or one slot of
    such a local field, with scalars added or subtracted at any step (`off + 1`)."""
    inner: ir.Expr = expr
    while not isinstance(inner, ir.Ref):
        step = offset_operand(inner, dim)
        if step is None:
            return False
        inner = step[0]
    return True
