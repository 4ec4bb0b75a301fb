"""Shifts of traced fields, each checked and recorded as its IR node: by offsets along
dimensions, `f(I + 1, J - 1)` (half offsets of staggered dimensions too), through a
neighbour table, `f(C2E)` and `f(C2E[0])`, to one slot of a local field, `w[C2EDim(0)]`, and
by a data-dependent offset field, `f(sc.as_offset(K, off))`. A traced field's call and
index (tracing.Symbol) come here; they return the node, which the Symbol wraps."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.connectivity import Connectivity, NeighborSlot
from stencilchain.program.dimensions import Dimension, Offset, Slot
from stencilchain.program.ir_walk import nodes
from stencilchain.program.operator_hints import describe_traced
from stencilchain.program.staggered import half_shift, staggered_hint
from stencilchain.program.trace_context import scan_being_traced

if TYPE_CHECKING:
    from stencilchain.program.tracing import Symbol


def _foreign_offset(offset: object) -> object:
    """An offset object with a `_stencilchain_shift_` method as the Offset, Connectivity or
    NeighborSlot it stands for; anything else as it is."""
    hook = getattr(type(offset), "_stencilchain_shift_", None)
    return offset if hook is None else hook(offset)


def _offsets_text(offsets: tuple[object, ...]) -> str:
    """The offsets of a shift as the user wrote them, `K - 1` for one they did not."""
    texts = []
    for off in offsets:
        if isinstance(off, Offset):
            texts.append(repr(off))
        elif isinstance(off, Dimension):
            texts.append(off.name)
    return ", ".join(texts) or "K - 1"


def _alone(offsets: tuple[object, ...], rule: str, example: str) -> None:
    """A DefinitionError saying `rule` unless `offsets` is one offset: a shift of this kind
    takes no other offset with it (`example` shows one at a time)."""
    if len(offsets) != 1:
        written = ", ".join(map(repr, offsets))
        raise DefinitionError(f"{rule}, got ({written}); shift one at a time, e.g. {example}")


def shift(value: Symbol, offsets: tuple[object, ...]) -> ir.Expr:
    # an offset of another front end (compat/gt4py's FieldOffset) says what it is here
    offsets = tuple(_foreign_offset(off) for off in offsets)
    scan = scan_being_traced.get()
    if scan is not None:
        raise DefinitionError(
            f"a shift inside scan operator {scan}: the body of a scan sees only the current "
            "level's values; shift the argument before calling the scan, in the field "
            f"operator that calls it (`{scan}(f({_offsets_text(offsets)}))`)"
        )
    t = value.type
    if not isinstance(t, ir.FieldType):
        raise DefinitionError(
            f"cannot shift a scalar ({describe_traced(value.type)}); only fields have neighbours"
        )
    if any(isinstance(off, DynamicOffset) for off in offsets):
        _alone(
            offsets, "a shift by sc.as_offset takes nothing else", "f(I + 1)(sc.as_offset(K, off))"
        )
        return dynamic_shift(value, offsets[0])  # type: ignore[arg-type]
    if any(isinstance(off, (Connectivity, NeighborSlot)) for off in offsets):
        _alone(offsets, "a neighbour read takes one connectivity and nothing else", "f(K + 1)(C2E)")
        return neighbor_shift(value, offsets[0])  # type: ignore[arg-type]
    amounts: dict[Dimension, int] = {}
    onto: dict[Dimension, Dimension] = {}  # half shifts: the field's dimension, the result's
    for off in offsets:
        if isinstance(off, Dimension):
            off = Offset(off, 0)
        if not isinstance(off, Offset):
            raise DefinitionError(f"a shift takes offsets like `I + 1`, got {off!r}")
        if off.dim.is_local:
            raise DefinitionError(
                f"a shift along the local dimension {off.dim.name} of {t!r}: neighbour slots "
                "have no order to shift along; reduce over them (sc.neighbor_sum) or read "
                "one slot through the connectivity, f(C2E[0])"
            )
        along, amount = half_shift(off, t) if off.half else (off.dim, off.amount)
        if along not in t.dims:
            raise DefinitionError(
                f"unknown dimension {off.dim.name} in a shift of {t!r}; "
                f"the field has {', '.join(d.name for d in t.dims)}"
                + staggered_hint(off.dim, t.dims)
            )
        if along in amounts:
            raise DefinitionError(f"dimension {along.name} appears twice in one shift")
        amounts[along] = amount
        if off.half:
            onto[along] = off.dim
    inner = value.expr
    if onto:  # the field's type changes: one node of its own (program/staggered.py)
        dims = tuple(onto.get(d, d) for d in t.dims)
        moved = tuple((d, amounts[d]) for d in t.dims if d in amounts)
        return ir.Shift(inner, moved, ir.FieldType(dims, t.dtype))
    if isinstance(inner, ir.Shift) and inner.type.dims == inner.expr.type.dims:  # type: ignore[union-attr]
        for dim, amount in inner.offsets:
            amounts[dim] = amounts.get(dim, 0) + amount
        inner = inner.expr
    canonical = tuple((d, amounts[d]) for d in t.dims if amounts.get(d, 0) != 0)
    if not canonical:
        return inner
    return ir.Shift(inner, canonical, t)


# --- unstructured meshes ------------------------------------------------------------


def neighbor_shift(value: Symbol, offset: Connectivity | NeighborSlot) -> ir.Expr:
    """`value(C2E)` (a local field) or `value(C2E[slot])`: `value` read at the neighbours
    that the connectivity's table lists."""
    conn, slot = (
        (offset, None)
        if isinstance(offset, Connectivity)
        else (
            offset.connectivity,
            offset.slot,
        )
    )
    t = value.type
    assert isinstance(t, ir.FieldType)
    written = f"{describe_traced(value.type)}({offset!r})"
    if conn.source not in t.dims:
        raise DefinitionError(
            f"{written}: {conn.name} reads {conn.source.name} entities, but the field is "
            f"over {', '.join(d.name for d in t.dims)}; shift a field over {conn.source.name}"
        )
    if conn.entity in t.dims and conn.entity != conn.source:
        raise DefinitionError(
            f"{written}: the field is already over {conn.entity.name}, the dimension that "
            f"{conn.name} leads to"
        )
    if slot is None and conn.local in t.dims:
        raise DefinitionError(
            f"{written}: the field is already over {conn.local.name}; reduce it first "
            f"(sc.neighbor_sum(x, axis={conn.local.name}))"
        )
    dims = tuple(conn.entity if d == conn.source else d for d in t.dims)
    if slot is None:
        dims += (conn.local,)
    return ir.NeighborShift(value.expr, conn, slot, ir.FieldType(dims, t.dtype))


def local_slot(value: Symbol, key: object) -> ir.Expr:
    """`value[C2EDim(slot)]`: the local field `value` at one neighbour slot, a field over
    its other dimensions (ir.LocalSlot)."""
    t = value.type
    local = [d for d in t.dims if d.is_local] if isinstance(t, ir.FieldType) else []
    example = f"{local[0].name}(0)" if local else "C2EDim(0)"
    written = f"{describe_traced(value.type)}[{key!r}]"
    if not isinstance(key, Slot):
        if isinstance(key, tuple):
            why = "one slot at a time"
        elif isinstance(key, int) and not isinstance(key, bool):
            why = "a slot is named by its local dimension"
        else:
            why = f"got {type(key).__name__} {key!r}"
        raise DefinitionError(
            f"{written}: a local field is indexed by one slot of its local dimension, "
            f"w[{example}] ({why}); fields are read at other points by shifts, f(I + 1), "
            "and tuples are indexed with ints"
        )
    if not isinstance(t, ir.FieldType) or key.dim not in t.dims:
        over = "a scalar" if not isinstance(t, ir.FieldType) else "not over " + key.dim.name
        raise DefinitionError(
            f"{written}: {over}; a slot reads a local field, such as f(C2E) or a field over "
            f"(Cell, {key.dim.name}), at one neighbour slot"
        )
    conn = _connectivity_over(value.expr, key.dim)
    if conn is not None and conn.max_neighbors is not None and key.slot >= conn.max_neighbors:
        raise DefinitionError(
            f"{written}: slot {key.slot} of {key.dim.name}, but {conn.name} has "
            f"max_neighbors={conn.max_neighbors}: a slot is an int in [0, {conn.max_neighbors})"
        )
    dims = tuple(d for d in t.dims if d != key.dim)
    if not dims:
        raise DefinitionError(f"{written}: the result would have no dimension")
    return ir.LocalSlot(value.expr, key.dim, key.slot, ir.FieldType(dims, t.dtype))


def _connectivity_over(expr: ir.Expr, local: Dimension) -> Connectivity | None:
    """The connectivity whose neighbour read in `expr` makes its local dimension `local`,
    if there is one."""
    for node in nodes(expr):
        if (
            isinstance(node, ir.NeighborShift)
            and node.slot is None
            and node.connectivity.local == local
        ):
            return node.connectivity
    return None


# --- data-dependent offsets -------------------------------------------------------------


class DynamicOffset:
    """`sc.as_offset(K, off)`: a shift along `dim` by the integer field `off` at each point."""

    __slots__ = ("dim", "offset")

    def __init__(self, dim: Dimension, offset: Symbol) -> None:
        self.dim = dim
        self.offset = offset

    def __repr__(self) -> str:
        return f"sc.as_offset({self.dim.name}, {describe_traced(self.offset.type)})"


def dynamic_shift(value: Symbol, offset: DynamicOffset) -> ir.Expr:
    """`value(sc.as_offset(K, off))`: `value` read at `k + off` along K, point by point."""
    t = value.type
    assert isinstance(t, ir.FieldType)
    written = f"{describe_traced(value.type)}({offset!r})"
    off_type = offset.offset.type
    assert isinstance(off_type, ir.FieldType)
    if offset.dim not in t.dims:
        raise DefinitionError(
            f"{written}: the field is not over {offset.dim.name}; the field has "
            f"{', '.join(d.name for d in t.dims)}"
        )
    if not set(off_type.dims) <= set(t.dims):
        raise DefinitionError(
            f"{written}: the offset is over {', '.join(d.name for d in off_type.dims)}, not a "
            f"subset of the shifted field's dimensions ({', '.join(d.name for d in t.dims)})"
        )
    return ir.DynamicShift(value.expr, offset.dim, offset.offset.expr, t)
