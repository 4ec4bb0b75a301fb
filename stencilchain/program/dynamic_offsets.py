"""The offset fields of data-dependent shifts, `f(sc.as_offset(K, off))`: which program
arguments are read as offsets, and the check that each keeps every read inside the array,
made before anything runs (as the entries of a neighbour table are checked)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from stencilchain.errors import ArgumentError, DefinitionError
from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.field_values import FieldValue

# (position of the program parameter, its name, the axis of the shifted dimension in it,
# that dimension's name)
OffsetArgument = tuple[int, str, int, str]
_Scope = Mapping[str, tuple[ir.Expr, "_Scope | None"]]


def offset_arguments(program: ir.Program) -> tuple[OffsetArgument, ...]:
    """The program parameters that some call reads as the offset of an `sc.as_offset`.
    Each must be passed as the program's own argument that no call writes: a
    DefinitionError otherwise (its entries are checked before anything runs)."""
    fops = {f.name: f for f in program.field_operators}
    params = {p.name: (k, p) for k, p in enumerate(program.params)}
    written = {name for call in program.calls for name in call.outs}
    found: dict[str, OffsetArgument] = {}
    for call in program.calls:
        fop = fops.get(call.callee)
        if fop is None:
            continue  # a scan: its body reads no field
        scope = {p.name: (arg, None) for p, arg in zip(fop.params, call.args)}
        for name, dim in _offsets_in(fop.body, scope, fops, call.callee):
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
            found[name] = (index, name, param.type.dims.index(dim), dim.name)
    return tuple(found.values())


def _offsets_in(
    expr: ir.Expr, scope: _Scope, fops: Mapping[str, ir.FieldOperatorDef], where: str
) -> list[tuple[str, Dimension]]:
    """(program-level name, dimension) of the offset of every DynamicShift in `expr`, its
    parameters bound in `scope` (None: the program's names)."""
    out: list[tuple[str, Dimension]] = []
    if isinstance(expr, ir.DynamicShift):
        name = _entry_source(expr.offset, scope, expr.dim)
        if name is None:
            raise DefinitionError(
                f"{where}: the offset of sc.as_offset({expr.dim.name}, ...) is passed a "
                "computed field; pass a field argument of the program as it is"
            )
        out.append((name, expr.dim))
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


def check_offsets(program_name: str, offsets: tuple[OffsetArgument, ...], args: Any) -> None:
    """Every entry `off[p]` of each offset argument keeps `p[dim] + off[p]` inside
    `[0, size)` along its dimension: an ArgumentError naming the argument, the first bad
    position and its value otherwise. One min and one max per level, on the array's own
    device (NumPy, or a GPU array's module); a wrong kind of array is left to the other
    checks."""
    for index, name, axis, dim in offsets:
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
        others = tuple(a for a in range(off.ndim) if a != axis)
        levels = np.arange(size)
        lowest = _host(off.min(axis=others)).astype(np.int64)
        highest = _host(off.max(axis=others)).astype(np.int64)
        if (levels + lowest >= 0).all() and (levels + highest < size).all():
            continue
        host = _host(off).astype(np.int64)
        shape = [size if a == axis else 1 for a in range(off.ndim)]
        target = levels.reshape(shape) + host
        position = tuple(int(i) for i in np.argwhere((target < 0) | (target >= size))[0])
        raise ArgumentError(
            f"argument '{name}' of {program_name}(): offset {host[position]} at {position} "
            f"reads index {int(target[position])} along {dim}, outside [0, {size}); "
            "every entry of an sc.as_offset field must keep its read inside the array"
        )


def _host(array: Any) -> np.ndarray:
    """`array` as a NumPy array (a GPU array copied to the host)."""
    if isinstance(array, np.ndarray):
        return array
    get = getattr(array, "get", None)
    return np.asarray(get() if callable(get) else array)


__all__ = ["OffsetArgument", "check_offsets", "entry_operand", "offset_arguments"]
