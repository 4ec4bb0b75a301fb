"""IR transforms: inlining of field-operator calls and constant folding.

Both keep the meaning exactly (program/semantics.py: the embedded executor gives the same
result before and after); translations apply them when `enable_transforms` is on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import numpy as np

from stencilchain.program import ir
from stencilchain.program.call_bounds import substitute_intervals
from stencilchain.program.ir_walk import rewrite
from stencilchain.program.node_traits import traits_of
from stencilchain.program.semantics import scalar

# Each transform rewrites a shared sub-expression once (ir_walk.rewrite), so that it costs
# the DAG's size and its result shares what its input shares (docs/adr/0056).


def substitute(expr: ir.Expr, bindings: Mapping[str, ir.Expr]) -> ir.Expr:
    """`expr` with each Ref to a bound name replaced by its binding."""

    def step(expr: ir.Expr, again: Callable[[ir.Expr], ir.Expr]) -> ir.Expr:
        if isinstance(expr, ir.Ref):
            return bindings.get(expr.name, expr)
        if isinstance(expr, ir.ConcatWhere) and any(
            b.param is not None for i in expr.intervals for b in (*i.starts, *i.stops)
        ):  # a condition on a scalar (`K < k_start`) names it in its bounds
            intervals = substitute_intervals(expr.intervals, bindings)
            expr = dataclasses.replace(expr, intervals=intervals)
        return ir.map_children(expr, again)

    return rewrite(expr, step)


def inline_calls(expr: ir.Expr, fops: Mapping[str, ir.FieldOperatorDef]) -> ir.Expr:
    """`expr` with every call of a field operator replaced by the callee's body."""

    def step(expr: ir.Expr, again: Callable[[ir.Expr], ir.Expr]) -> ir.Expr:
        expr = ir.map_children(expr, again)
        if isinstance(expr, ir.Call):
            callee = fops[expr.callee]
            bindings = {p.name: a for p, a in zip(callee.params, expr.args)}
            return again(substitute(callee.body, bindings))
        if isinstance(expr, ir.TupleGet) and isinstance(expr.expr, ir.MakeTuple):
            return expr.expr.elems[expr.index]
        if isinstance(expr, ir.Shift):
            return _push_shift(expr)
        return expr

    return rewrite(expr, step)


def _push_shift(expr: ir.Shift) -> ir.Expr:
    """Merge nested shifts and drop shifts of literals (they have no position)."""
    inner = expr.expr
    if isinstance(inner, ir.Shift):
        amounts = dict(inner.offsets)
        for dim, amount in expr.offsets:
            amounts[dim] = amounts.get(dim, 0) + amount
        offsets = tuple((d, amounts[d]) for d in expr.type.dims if amounts.get(d, 0) != 0)
        return ir.Shift(inner.expr, offsets, expr.type) if offsets else inner.expr
    return expr


def fold_constants(expr: ir.Expr) -> ir.Expr:
    """`expr` with operations on literals only replaced by their value (NumPy semantics):
    those of the nodes whose traits say `foldable`."""

    def step(expr: ir.Expr, again: Callable[[ir.Expr], ir.Expr]) -> ir.Expr:
        expr = ir.map_children(expr, again)
        if traits_of(expr).foldable:
            kids = ir.children(expr)
            if kids and all(isinstance(k, ir.Literal) for k in kids):
                assert not isinstance(expr.type, (ir.FieldType, ir.TupleType))
                with np.errstate(all="ignore"):
                    value = scalar(expr)
                return ir.Literal(value, expr.type)
        return expr

    return rewrite(expr, step)


def transform_program(program: ir.Program) -> ir.Program:
    """Inline every call and fold constants in every program call.

    The result's calls name one field operator per call, each with a flat body
    taking the call's arguments directly; calls of scan operators stay as they are.
    """
    fops = {f.name: f for f in program.field_operators}
    new_fops: list[ir.FieldOperatorDef] = []
    calls: list[ir.ProgramCall] = []
    for index, call in enumerate(program.calls):
        if program.scan_operator(call.callee) is not None:
            calls.append(call)  # a scan's body is flat scalar arithmetic already
            continue
        fop = fops[call.callee]
        body = fold_constants(inline_calls(fop.body, fops))
        name = f"{fop.name}_inlined{index}"
        new_fops.append(ir.FieldOperatorDef(name, fop.params, body))
        calls.append(dataclasses.replace(call, callee=name))
    return dataclasses.replace(program, field_operators=tuple(new_fops), calls=tuple(calls))


def unread_temporaries(program: ir.Program) -> frozenset[str]:
    """The temporaries whose values no call needs: never read, or read only by calls
    whose own outputs are all such temporaries (found from the last call backwards)."""
    needed: set[str] = set()
    for call in reversed(program.calls):
        if any(not program.is_temporary(o) or o in needed for o in call.outs):
            needed.update(a.name for a in call.args if isinstance(a, ir.Ref))
    return frozenset(t.name for t in program.temporaries if t.name not in needed)
