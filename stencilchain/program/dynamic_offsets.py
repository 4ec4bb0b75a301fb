"""The offset fields of data-dependent shifts, `f(sc.as_offset(K, off))`: which program
arguments are read as offsets, and the check that each keeps every read inside the array,
made before anything runs (as the entries of a neighbour table are checked). Over fields
over their own ranges (program/own_ranges.py) the read must stay inside the range of
every field the shift reads: `start + i + off[i]` in each one's `[start, end)`.

An offset may be computed as the entries of such an argument plus or minus scalars
(`off[C2E2CDim(0)] + 1`, `off - k0`: ICON's `zd_vertoffset + 1`): its addends are program
scalars and literals, evaluated once per call, and the check moves each level's lowest
and highest entry by them (docs/adr/0043-computed-dynamic-offsets.md).

A read inside a branch of `sc.where` is checked only where its value is used: where the
conditions on the way to it are pointwise expressions of the program's arguments (fields
read at the point, scalars, literals) that no call writes, each entry is checked only at
the points where they select the read (ICON's `where(zd_diffcoef != 0, ...)` over levels
whose `zd_vertoffset + 1` leaves the column; docs/adr/0051-offsets-checked-where-used.md).
The executors never read outside the array at the other points: the embedded one clips
the index, the C++ reads in such a branch only where it is selected."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from stencilchain.errors import ArgumentError, DefinitionError
from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.field_values import FieldValue, host_array
from stencilchain.program.offset_conditions import (
    Condition,
    Guard,
    Scope,
    checkable,
    pointwise,
    where_used,
)
from stencilchain.program.semantics import literal_value, operate

# A scalar added to an offset's entries: its sign (+1, -1), the expression of the
# program's scalar parameters and literals it is, and whether a missing neighbour's
# offset gets it too (it is added after a read through a table that may skip: `off(C2E[1])
# + 1` is 1 there, `(off + 1)(C2E[1])` is 0).
Addend = tuple[int, ir.Expr, bool]
# (position, name and axis of the shifted dimension) of a field parameter that a shift reads
ShiftedField = tuple[int, str, int]


class OffsetArgument(NamedTuple):
    """A program parameter that shifts read as an offset along one dimension, with the
    same addends."""

    position: int  # its position among the program's parameters
    name: str
    axis: int  # the axis of `dim` in it
    dim: str  # the name of the dimension it shifts along
    fields: tuple[ShiftedField, ...]  # the field parameters the shifts read along `dim`
    addends: tuple[Addend, ...] = ()
    scalars: tuple[tuple[str, int], ...] = ()  # the position of each program parameter
    # the tables that may skip, read below an addend applied at a missing neighbour: each
    # one's position and the slot read (None: every slot)
    tables: tuple[tuple[int, int | None], ...] = ()
    # where the reads are used (() everywhere), and the offset field's dimensions, in its
    # axis order, that the conditions' fields are laid along
    guard: Guard = ()
    dims: tuple[Dimension, ...] = ()


_Scope = Scope


def offset_arguments(program: ir.Program) -> tuple[OffsetArgument, ...]:
    """The program parameters that some call reads as the offset of an `sc.as_offset`.
    Each must be passed as the program's own argument that no call writes: a
    DefinitionError otherwise (its entries are checked before anything runs)."""
    params = {p.name: (k, p) for k, p in enumerate(program.params)}
    written = {name for call in program.calls for name in call.outs}
    # by offset, dimension and addends: one field may be the offset along several
    # dimensions, and with several addends (`off` and `off + 1`)
    Key = tuple[str, Dimension, tuple[Addend, ...]]
    found: dict[Key, tuple[int, str, int, str]] = {}
    shifted: dict[Key, dict[str, ShiftedField]] = {}
    skipping_tables: dict[Key, set[tuple[str, int | None]]] = {}
    used: dict[Key, list[tuple[Condition, ...]]] = {}
    for call, (name, addends, tables), dim, read, conditions in _shifts(program):
        if name not in params or name in written:
            what = "a temporary" if name not in params else "written by a call"
            raise DefinitionError(
                f"program {program.name}: {call.callee} reads '{name}' as the offset of "
                f"sc.as_offset({dim.name}, ...), but it is {what}; an offset field is "
                "an argument of the program that no call writes (its entries are "
                "checked before anything runs)"
            )
        index, param = params[name]
        assert isinstance(param.type, ir.FieldType)
        key = (name, dim, addends)
        found[key] = (index, name, param.type.dims.index(dim), dim.name)
        skipping_tables.setdefault(key, set()).update(tables)
        used.setdefault(key, []).append(checkable(conditions, params, written, param.type))
        fields = shifted.setdefault(key, {})
        for field in sorted(read):
            if field in params and field not in fields:
                k, fparam = params[field]
                ftype = fparam.type
                table = isinstance(ftype, ir.TableType)
                if isinstance(ftype, ir.FieldType) and not table and dim in ftype.dims:
                    fields[field] = (k, field, ftype.dims.index(dim))
    positions = tuple((name, k) for name, (k, _) in params.items())
    out = []
    for key, entry in found.items():
        addends = key[2]
        skipping = {
            (params[p.name][0], slot)
            for p in program.params
            if isinstance(p.type, ir.TableType)
            for conn, slot in skipping_tables.get(key, set())
            if p.type.connectivity.name == conn
        }
        conjunctions = used[key]
        guard: Guard = () if not all(conjunctions) else tuple(dict.fromkeys(conjunctions))
        param_type = params[key[0]][1].type
        assert isinstance(param_type, ir.FieldType)
        out.append(
            OffsetArgument(
                *entry,
                tuple(shifted[key].values()),
                addends,
                positions if addends or guard else (),
                tuple(sorted(skipping, key=str)),
                guard,
                param_type.dims if guard else (),
            )
        )
    return tuple(out)


def shifted_temporaries(program: ir.Program) -> dict[Dimension, str]:
    """The dimensions along which a dynamic offset shifts a temporary of `program` (or a
    value computed from one), each with the first such call and temporary."""
    params = {p.name for p in program.params}
    found: dict[Dimension, str] = {}
    for call, _, dim, read, _ in _shifts(program):
        for name in sorted(read - params):
            found.setdefault(dim, f"{call.callee} reads temporary '{name}' through an offset")
    return found


# an offset's field, its addends, and the connectivities (with the slot read) of the
# tables that may skip read below an addend
_Source = tuple[str, tuple[Addend, ...], frozenset[tuple[str, int | None]]]


_Found = tuple[_Source, Dimension, set[str], tuple[Condition, ...]]
# a `sc.where` condition on the way down, in the scope it is read in, and the branch taken
_Pending = tuple[ir.Expr, "_Scope | None", bool]
# the nodes whose operands are evaluated at the point where they are: the conditions met
# above them still say where the operands' values are used
_AT_THE_POINT = (ir.Binary, ir.Unary, ir.Cast, ir.MathCall, ir.MakeTuple, ir.TupleGet)


def _shifts(
    program: ir.Program,
) -> list[tuple[ir.ProgramCall, _Source, Dimension, set[str], tuple[Condition, ...]]]:
    """Per DynamicShift of each call of `program`: the call, the program-level name of
    its offset field with the addends, the dimension, the program-level names its
    operand reads, and the conditions, as expressions of the program's names, that
    select the read where its offset is read at the point (else none)."""
    fops = {f.name: f for f in program.field_operators}
    out = []
    for call in program.calls:
        fop = fops.get(call.callee)
        if fop is None:
            continue  # a scan: its body reads no field
        scope = {p.name: (arg, None) for p, arg in zip(fop.params, call.args)}
        for source, dim, read, conditions in _offsets_in(fop.body, scope, fops, call.callee, ()):
            out.append((call, source, dim, read, conditions))
    return out


def _offsets_in(
    expr: ir.Expr,
    scope: _Scope,
    fops: Mapping[str, ir.FieldOperatorDef],
    where: str,
    pending: tuple[_Pending, ...],
) -> list[_Found]:
    """(program-level name and addends, dimension, the program-level names the shifted
    operand reads, the conditions that select it) of the offset of every DynamicShift in
    `expr`, its parameters bound in `scope` (None: the program's names), below the
    `pending` conditions of the `sc.where`s above it at the same point. A shared
    sub-expression is walked once per scope and conditions, and not at all where it holds
    no DynamicShift."""
    out: list[_Found] = []
    walked: dict[tuple[int, int, tuple[tuple[int, int, bool], ...]], tuple[Any, ...]] = {}
    names: dict[tuple[int, int], tuple[ir.Expr, _Scope | None, set[str]]] = {}
    shifts: dict[int, tuple[ir.Expr, bool]] = {}

    def walk(expr: ir.Expr, scope: _Scope, where: str, pending: tuple[_Pending, ...]) -> None:
        if not _holds_shift(expr, fops, shifts):
            return
        key = (id(expr), id(scope), tuple((id(c), id(s), t) for c, s, t in pending))
        if key in walked:
            return
        walked[key] = (expr, scope, pending)  # kept alive: their ids stay theirs
        if isinstance(expr, ir.DynamicShift):
            source = _entry_source(expr.offset, scope, expr.dim)
            if source is None:
                raise DefinitionError(
                    f"{where}: the offset of sc.as_offset({expr.dim.name}, ...) is passed a "
                    f"computed field; pass a field argument of the program, {COMPUTED}"
                )
            conditions: tuple[Condition, ...] = ()
            if _read_at_the_point(expr.offset, scope, expr.dim):
                conditions = tuple(
                    (cond, taken)
                    for cond, taken in ((pointwise(c, s), taken) for c, s, taken in pending)
                    if cond is not None
                )
            read = set(_names_read(expr.expr, scope, fops, names))
            out.append((source, expr.dim, read, conditions))
            walk(expr.offset, scope, where, pending)
            walk(expr.expr, scope, where, ())
            return
        if isinstance(expr, ir.Call):
            callee = fops[expr.callee]
            inner = {p.name: (arg, scope) for p, arg in zip(callee.params, expr.args)}
            walk(callee.body, inner, expr.callee, pending)
            for arg in expr.args:
                walk(arg, scope, where, ())
            return
        if isinstance(expr, ir.Where):
            walk(expr.cond, scope, where, pending)
            walk(expr.true, scope, where, (*pending, (expr.cond, scope, True)))
            walk(expr.false, scope, where, (*pending, (expr.cond, scope, False)))
            return
        kept = pending if isinstance(expr, _AT_THE_POINT) else ()
        for child in ir.children(expr):
            walk(child, scope, where, kept)

    walk(expr, scope, where, pending)
    return out


def _holds_shift(
    expr: ir.Expr, fops: Mapping[str, ir.FieldOperatorDef], memo: dict[int, tuple[ir.Expr, bool]]
) -> bool:
    """Whether `expr`, or the body of a field operator it calls, holds a DynamicShift (each
    node looked at once; `memo` keeps them alive by id)."""
    found = memo.get(id(expr))
    if found is not None:
        return found[1]
    holds = isinstance(expr, ir.DynamicShift) or (
        isinstance(expr, ir.Call) and _holds_shift(fops[expr.callee].body, fops, memo)
    )
    if not holds:
        holds = any(_holds_shift(child, fops, memo) for child in ir.children(expr))
    memo[id(expr)] = (expr, holds)
    return holds


def _read_at_the_point(expr: ir.Expr, scope: _Scope | None, dim: Dimension) -> bool:
    """Whether the offset `expr` reads its field's entries at the point itself (through
    slots of a local dimension, plus or minus scalars): then a condition evaluated at the
    point says where each entry's read is used."""
    while True:
        if isinstance(expr, ir.Ref):
            if scope is None or expr.name not in scope:
                return True
            expr, scope = scope[expr.name]
            continue
        if isinstance(expr, (ir.Shift, ir.NeighborShift)):
            return False
        step = offset_operand(expr, dim)
        if step is None:
            return False
        expr = step[0]


def _names_read(
    expr: ir.Expr,
    scope: _Scope | None,
    fops: Mapping[str, ir.FieldOperatorDef],
    known: dict[tuple[int, int], tuple[ir.Expr, _Scope | None, set[str]]],
) -> set[str]:
    """The program-level names that `expr` reads, followed through the calls' arguments
    (`known`: what sub-expressions in their scopes read, each found once)."""
    key = (id(expr), id(scope))
    found = known.get(key)
    if found is not None:
        return found[2]
    if isinstance(expr, ir.Ref):
        if scope is None or expr.name not in scope:
            names = {expr.name}
        else:
            bound, outer = scope[expr.name]
            names = _names_read(bound, outer, fops, known)
    elif isinstance(expr, ir.Call):
        callee = fops[expr.callee]
        inner = {p.name: (arg, scope) for p, arg in zip(callee.params, expr.args)}
        names = _names_read(callee.body, inner, fops, known)
    else:
        names = set()
        for child in ir.children(expr):
            names |= _names_read(child, scope, fops, known)
    known[key] = (expr, scope, names)
    return names


def _entry_source(expr: ir.Expr, scope: _Scope | None, dim: Dimension) -> _Source | None:
    """The program-level name of the one field whose entries `expr` reads at the point's
    index along `dim` (`offset_operand`, followed through the calls' arguments), with the
    scalars added to them as expressions of the program's parameters, or None."""
    addends: list[Addend] = []
    # the tables that may skip read below an addend (and the slot read): a missing
    # neighbour's offset is the addends met before it, walking down (checked as those met
    # before the last such table: the largest set)
    tables: set[tuple[str, int | None]] = set()
    while True:
        if isinstance(expr, ir.Ref):
            if scope is None or expr.name not in scope:
                return expr.name, tuple(sorted(addends, key=_addend_order)), frozenset(tables)
            expr, scope = scope[expr.name]
            continue
        step = offset_operand(expr, dim)
        if step is None:
            return None
        inner, addend = step
        if addend is not None:
            sign, scalar = addend
            addends.append((sign, _program_scalar(scalar, scope), False))
        elif (
            addends
            and isinstance(expr, ir.NeighborShift)
            and expr.connectivity.skip_values is not False
        ):
            tables.add((expr.connectivity.name, expr.slot))
            addends = [(sign, e, True) for sign, e, _ in addends]
        expr = inner


def _addend_order(addend: Addend) -> str:
    sign, expr, missing = addend
    return f"{sign}{missing}{ir.canonical_json(expr)}"


def _program_scalar(expr: ir.Expr, scope: _Scope | None) -> ir.Expr:
    """`expr` (a scalar of the field operator whose parameters `scope` binds) as an
    expression of the program's scalar parameters and literals."""
    if isinstance(expr, ir.Ref) and scope is not None and expr.name in scope:
        bound, outer = scope[expr.name]
        return _program_scalar(bound, outer)
    return ir.map_children(expr, lambda e: _program_scalar(e, scope))


def entry_operand(expr: ir.Expr, dim: Dimension) -> ir.Expr | None:
    """The operand of `expr` where `expr`'s values are its operand's entries at the same
    index along `dim` (a shift along other dimensions, a neighbour read, a slot), else
    None."""
    if isinstance(expr, ir.Shift) and all(d != dim for d, _ in expr.offsets):
        return expr.expr
    if isinstance(expr, (ir.NeighborShift, ir.LocalSlot)):
        return expr.expr
    return None


# What a refused offset's message says may be computed.
COMPUTED = (
    "read through neighbour tables or slots or shifted along other dimensions, plus or minus "
    "scalars (off + 1, off[C2EDim(0)] - k0); compute any other offset in the program's caller"
)


def offset_operand(
    expr: ir.Expr, dim: Dimension
) -> tuple[ir.Expr, tuple[int, ir.Expr] | None] | None:
    """One step from an offset down to the field whose entries it reads: the operand of
    `entry_operand` (no addend), or the field of a scalar added to or subtracted from it
    (`off + 1`, `1 + off`, `off - k0`), with the sign and the scalar; None for anything
    else (`k0 - off`, `2 * off`, a sum of two fields, a call)."""
    inner = entry_operand(expr, dim)
    if inner is not None:
        return inner, None
    if isinstance(expr, ir.Binary) and expr.op in ("add", "sub"):
        left = isinstance(getattr(expr.left, "type", None), ir.FieldType)
        right = isinstance(getattr(expr.right, "type", None), ir.FieldType)
        if left and not right:
            return expr.left, (1 if expr.op == "add" else -1, expr.right)
        if right and not left and expr.op == "add":
            return expr.right, (1, expr.left)
    return None


def addend_value(
    addends: tuple[Addend, ...], args: Any, params: Mapping[str, int]
) -> tuple[int, int] | None:
    """(the sum of the `addends`, the part of it that a missing neighbour's offset gets)
    for the call's `args` (`params`: each scalar parameter's position), or None where an
    argument is no scalar of its type (the other checks say what is wrong)."""
    total = missing = 0
    for sign, expr, at_missing in addends:
        value = _scalar_value(expr, args, params)
        if value is None:
            return None
        total += sign * value
        if at_missing:
            missing += sign * value
    return total, missing


def _scalar_value(expr: ir.Expr, args: Any, params: Mapping[str, int]) -> int | None:
    """The integer value of an expression of the program's scalars and literals."""
    try:
        value = _scalar(expr, args, params)
        return int(value)
    except (TypeError, ValueError, OverflowError, IndexError):
        return None  # too few arguments, or one that is no scalar of its type


def _scalar(expr: ir.Expr, args: Any, params: Mapping[str, int]) -> Any:
    if isinstance(expr, ir.Literal):
        return literal_value(expr)
    if isinstance(expr, ir.Ref):
        assert not isinstance(expr.type, ir.FieldType)
        return expr.type.numpy.type(args[params[expr.name]])
    return operate(expr, [_scalar(e, args, params) for e in ir.children(expr)])


def check_offsets(
    program_name: str,
    offsets: tuple[OffsetArgument, ...],
    args: Any,
    ranges: Mapping[str, tuple[tuple[int, int], ...]] | None = None,
) -> None:
    """Every entry `off[p]` of each offset argument, plus its addends `c`, keeps `p[dim] +
    off[p] + c` inside the fields the shifts by it read, along its dimension: `[0, size)`,
    or in a program specialised for its arguments' ranges (`ranges`,
    `ir.Program.ranges`: per field its (start, gap) per axis) inside each field's own
    `[start, start + length)`, `p` counted from the offset field's start; and where a
    table that may skip is read below an addend, the offset of a missing neighbour (0 plus
    the addends above the table) keeps every level's read inside too. An ArgumentError
    naming the argument, the first bad position and its value otherwise. One min and one
    max per level, on the array's own device (NumPy, or a GPU array's module), shared by
    the shifts by one argument with other addends; a wrong kind of array is left to the
    other checks."""
    own = ranges or {}
    extremes: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    for offset in offsets:
        index, name, axis, dim, fields, addends, scalars, tables = offset[:8]
        if index >= len(args):
            return
        off = args[index]
        if type(off) is FieldValue:
            continue  # the native entry rejects it; the call is retried unwrapped
        dtype = getattr(off, "dtype", None)
        if getattr(off, "ndim", 0) <= axis or dtype is None or off.size == 0:
            continue
        if not np.issubdtype(dtype, np.integer):
            continue
        added = addend_value(addends, args, dict(scalars)) if addends else (0, 0)
        if added is None:
            continue  # a wrong scalar argument: the other checks say what is wrong
        plus, missing = added
        size = int(off.shape[axis])
        # the offset field's start, and the size of the index space along its dimension
        start, gap = own[name][axis] if name in own else (0, 0)
        inside = _inside(fields, args, own, start + size + gap)
        if inside is None:
            continue  # fields of other sizes: the plain program's checks refuse them
        lo, hi, whose = inside
        levels = np.arange(start, start + size)
        if (index, axis) not in extremes:
            others = tuple(a for a in range(off.ndim) if a != axis)
            extremes[index, axis] = (
                host_array(off.min(axis=others)).astype(np.int64),
                host_array(off.max(axis=others)).astype(np.int64),
            )
        lowest, highest = extremes[index, axis]
        range_of = f", the range of '{whose}'" if whose else ""
        bad = (levels + missing < lo) | (levels + missing >= hi)
        if missing and bad.any() and any(_skips(args, t, slot) for t, slot in tables):
            level = int(levels[bad][0])
            raise ArgumentError(
                f"argument '{name}' of {program_name}(): it is read through a table that may "
                f"skip, and a missing neighbour's offset is 0 {missing:+d}: level {level} would "
                f"read index {level + missing} along {dim}, outside [{lo}, {hi}){range_of}; "
                "add the scalar to the offset field before reading it through the table "
                "((off + 1)(C2E[0]): a missing neighbour's offset is then 0)"
            )
        if (levels + lowest + plus >= lo).all() and (levels + highest + plus < hi).all():
            continue
        host = host_array(off).astype(np.int64)
        shape = [size if a == axis else 1 for a in range(off.ndim)]
        target = levels.reshape(shape) + host + plus
        outside = (target < lo) | (target >= hi)
        guarded = offset.guard and name not in own
        used = (
            where_used(offset.guard, offset.dims, dict(scalars), host.shape, args, own)
            if guarded
            else None
        )
        if used is not None:
            outside &= used
            if not outside.any():
                continue  # each read that leaves the array is in a branch not taken
        position = tuple(int(i) for i in np.argwhere(outside)[0])
        with_addends = f" {plus:+d}" if addends else ""
        raise ArgumentError(
            f"argument '{name}' of {program_name}(): offset {host[position]}{with_addends} at "
            f"{position} reads index {int(target[position])} along {dim}, outside "
            f"[{lo}, {hi}){range_of}"
            + (" where the sc.where branch of the read is taken" if used is not None else "")
            + "; every entry of an sc.as_offset field must keep its read inside the array "
            "where the read is used"
        )


def _skips(args: Any, index: int, slot: int | None) -> bool:
    """Whether the table argument at `index` has a missing neighbour (a -1 entry) in `slot`
    (None: in any slot)."""
    try:
        table = args[index]
        return bool(((table if slot is None else table[:, slot]) < 0).any())
    except (TypeError, ValueError, AttributeError, IndexError):
        return False  # a wrong kind of argument: the other checks say what is wrong


def _inside(
    fields: tuple[ShiftedField, ...],
    args: Any,
    own: Mapping[str, tuple[tuple[int, int], ...]],
    space: int,
) -> tuple[int, int, str] | None:
    """Where the reads of a shift must stay along its dimension: the index space `[0,
    space)` (where a temporary and every field spanning it lie) narrowed to the range of
    each of the `fields` over its own range in `own` (`[start, start + length)` of its
    argument, from 0 on for an input starting below 0), with the name of the field that
    narrowed it last ("" if none did). None where a field of the plain program (no `own`)
    has another length than the offset field (the plain program refuses the call; a call
    over own ranges is checked by its specialisation) or where an argument is a field
    value (the call is retried unwrapped)."""
    lo, hi, whose = 0, space, ""
    for k, field, axis in fields:
        arg = args[k] if k < len(args) else None
        if type(arg) is FieldValue:
            return None
        shape = getattr(arg, "shape", None)
        if shape is None or len(shape) <= axis:
            continue  # a wrong kind of argument: the other checks say what is wrong
        if field not in own:
            if not own and int(shape[axis]) != space:
                return None
            continue
        start = own[field][axis][0]
        end = start + int(shape[axis])
        # an input's points below 0 are read by static shifts only: a dynamic one reads
        # inside the index space, the same on every toolchain
        start = max(start, 0)
        if start > lo or end < hi:
            lo, hi, whose = max(lo, start), min(hi, end), field
    return lo, hi, whose


__all__ = [
    "COMPUTED",
    "Addend",
    "OffsetArgument",
    "ShiftedField",
    "check_offsets",
    "entry_operand",
    "offset_arguments",
    "offset_operand",
]
