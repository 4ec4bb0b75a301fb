"""The offset fields of data-dependent shifts, `f(sc.as_offset(K, off))`: which program
arguments are read as offsets, and the check that each keeps every read inside the array,
made before anything runs (as the entries of a neighbour table are checked). Over fields
over their own ranges (program/own_ranges.py) the read must stay inside the range of
every field the shift reads: `start + i + off[i]` in each one's `[start, end)`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from stencilchain.errors import ArgumentError, DefinitionError
from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.field_values import FieldValue, host_array

# (position of the program parameter, its name, the axis of the shifted dimension in it,
# that dimension's name, and the field parameters the shifts by it read along that
# dimension: per field its position, name and the axis of the dimension in it)
ShiftedField = tuple[int, str, int]
OffsetArgument = tuple[int, str, int, str, tuple[ShiftedField, ...]]
_Scope = Mapping[str, tuple[ir.Expr, "_Scope | None"]]


def offset_arguments(program: ir.Program) -> tuple[OffsetArgument, ...]:
    """The program parameters that some call reads as the offset of an `sc.as_offset`.
    Each must be passed as the program's own argument that no call writes: a
    DefinitionError otherwise (its entries are checked before anything runs)."""
    params = {p.name: (k, p) for k, p in enumerate(program.params)}
    written = {name for call in program.calls for name in call.outs}
    # by offset and dimension: one field may be the offset along several dimensions
    found: dict[tuple[str, Dimension], tuple[int, str, int, str]] = {}
    shifted: dict[tuple[str, Dimension], dict[str, ShiftedField]] = {}
    for call, name, dim, read in _shifts(program):
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
        found[name, dim] = (index, name, param.type.dims.index(dim), dim.name)
        fields = shifted.setdefault((name, dim), {})
        for field in sorted(read):
            if field in params and field not in fields:
                k, fparam = params[field]
                ftype = fparam.type
                table = isinstance(ftype, ir.TableType)
                if isinstance(ftype, ir.FieldType) and not table and dim in ftype.dims:
                    fields[field] = (k, field, ftype.dims.index(dim))
    return tuple((*entry, tuple(shifted[key].values())) for key, entry in found.items())


def shifted_temporaries(program: ir.Program) -> dict[Dimension, str]:
    """The dimensions along which a dynamic offset shifts a temporary of `program` (or a
    value computed from one), each with the first such call and temporary."""
    params = {p.name for p in program.params}
    found: dict[Dimension, str] = {}
    for call, _, dim, read in _shifts(program):
        for name in sorted(read - params):
            found.setdefault(dim, f"{call.callee} reads temporary '{name}' through an offset")
    return found


def _shifts(program: ir.Program) -> list[tuple[ir.ProgramCall, str, Dimension, set[str]]]:
    """Per DynamicShift of each call of `program`: the call, the program-level name of
    its offset, the dimension and the program-level names its operand reads."""
    fops = {f.name: f for f in program.field_operators}
    out = []
    for call in program.calls:
        fop = fops.get(call.callee)
        if fop is None:
            continue  # a scan: its body reads no field
        scope = {p.name: (arg, None) for p, arg in zip(fop.params, call.args)}
        for name, dim, read in _offsets_in(fop.body, scope, fops, call.callee):
            out.append((call, name, dim, read))
    return out


def _offsets_in(
    expr: ir.Expr, scope: _Scope, fops: Mapping[str, ir.FieldOperatorDef], where: str
) -> list[tuple[str, Dimension, set[str]]]:
    """(program-level name, dimension, the program-level names the shifted operand reads)
    of the offset of every DynamicShift in `expr`, its parameters bound in `scope` (None:
    the program's names)."""
    out: list[tuple[str, Dimension, set[str]]] = []
    if isinstance(expr, ir.DynamicShift):
        name = _entry_source(expr.offset, scope, expr.dim)
        if name is None:
            raise DefinitionError(
                f"{where}: the offset of sc.as_offset({expr.dim.name}, ...) is passed a "
                "computed field; pass a field argument of the program as it is"
            )
        out.append((name, expr.dim, _names_read(expr.expr, scope, fops)))
    if isinstance(expr, ir.Call):
        callee = fops[expr.callee]
        inner = {p.name: (arg, scope) for p, arg in zip(callee.params, expr.args)}
        out += _offsets_in(callee.body, inner, fops, expr.callee)
        for arg in expr.args:
            out += _offsets_in(arg, scope, fops, where)
        return out
    for child in ir.children(expr):
        out += _offsets_in(child, scope, fops, where)
    return out


def _names_read(
    expr: ir.Expr, scope: _Scope | None, fops: Mapping[str, ir.FieldOperatorDef]
) -> set[str]:
    """The program-level names that `expr` reads, followed through the calls' arguments."""
    if isinstance(expr, ir.Ref):
        if scope is None or expr.name not in scope:
            return {expr.name}
        bound, outer = scope[expr.name]
        return _names_read(bound, outer, fops)
    names: set[str] = set()
    if isinstance(expr, ir.Call):
        callee = fops[expr.callee]
        inner = {p.name: (arg, scope) for p, arg in zip(callee.params, expr.args)}
        return _names_read(callee.body, inner, fops)
    for child in ir.children(expr):
        names |= _names_read(child, scope, fops)
    return names


def _entry_source(expr: ir.Expr, scope: _Scope | None, dim: Dimension) -> str | None:
    """The program-level name of the one field whose entries `expr` reads at the point's
    index along `dim` (`reads_entries`, followed through the calls' arguments), or None."""
    while True:
        if isinstance(expr, ir.Ref):
            if scope is None or expr.name not in scope:
                return expr.name
            expr, scope = scope[expr.name]
        else:
            inner = entry_operand(expr, dim)
            if inner is None:
                return None
            expr = inner


def entry_operand(expr: ir.Expr, dim: Dimension) -> ir.Expr | None:
    """The operand of `expr` where `expr`'s values are its operand's entries at the same
    index along `dim` (a shift along other dimensions, a neighbour read, a slot), else
    None."""
    if isinstance(expr, ir.Shift) and all(d != dim for d, _ in expr.offsets):
        return expr.expr
    if isinstance(expr, (ir.NeighborShift, ir.LocalSlot)):
        return expr.expr
    return None


def check_offsets(
    program_name: str,
    offsets: tuple[OffsetArgument, ...],
    args: Any,
    ranges: Mapping[str, tuple[tuple[int, int], ...]] | None = None,
) -> None:
    """Every entry `off[p]` of each offset argument keeps `p[dim] + off[p]` inside the
    fields the shifts by it read, along its dimension: `[0, size)`, or in a program
    specialised for its arguments' ranges (`ranges`, `ir.Program.ranges`: per field its
    (start, gap) per axis) inside each field's own `[start, start + length)`, `p` counted
    from the offset field's start. An ArgumentError naming the argument, the first bad
    position and its value otherwise. One min and one max per level, on the array's own
    device (NumPy, or a GPU array's module); a wrong kind of array is left to the other
    checks."""
    own = ranges or {}
    for index, name, axis, dim, fields in offsets:
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
        size = int(off.shape[axis])
        # the offset field's start, and the size of the index space along its dimension
        start, gap = own[name][axis] if name in own else (0, 0)
        inside = _inside(fields, args, own, start + size + gap)
        if inside is None:
            continue  # fields of other sizes: the plain program's checks refuse them
        lo, hi, whose = inside
        others = tuple(a for a in range(off.ndim) if a != axis)
        levels = np.arange(start, start + size)
        lowest = host_array(off.min(axis=others)).astype(np.int64)
        highest = host_array(off.max(axis=others)).astype(np.int64)
        if (levels + lowest >= lo).all() and (levels + highest < hi).all():
            continue
        host = host_array(off).astype(np.int64)
        shape = [size if a == axis else 1 for a in range(off.ndim)]
        target = levels.reshape(shape) + host
        position = tuple(int(i) for i in np.argwhere((target < lo) | (target >= hi))[0])
        range_of = f", the range of '{whose}'" if whose else ""
        raise ArgumentError(
            f"argument '{name}' of {program_name}(): offset {host[position]} at {position} "
            f"reads index {int(target[position])} along {dim}, outside [{lo}, {hi}){range_of}; "
            "every entry of an sc.as_offset field must keep its read inside the array"
        )


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
    "OffsetArgument",
    "ShiftedField",
    "check_offsets",
    "entry_operand",
    "offset_arguments",
]
