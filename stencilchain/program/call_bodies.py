"""The body of a called field operator with the call's arguments in place of its parameters:
one home for the substitution every translation and the tracing of a program perform."""

from __future__ import annotations

from collections.abc import Sequence

from stencilchain.program import ir
from stencilchain.program.transforms import substitute


def bind_arguments(body: ir.Expr, params: Sequence[ir.Param], args: Sequence[ir.Expr]) -> ir.Expr:
    """`body` (an expression over `params`) with each parameter replaced by its argument."""
    return substitute(body, {p.name: arg for p, arg in zip(params, args)})


def call_body(fop: ir.FieldOperatorDef, args: Sequence[ir.Expr]) -> ir.Expr:
    """The body of `fop` with `args` in place of its parameters."""
    return bind_arguments(fop.body, fop.params, args)
