"""A scan called in a program with a scalar where it reads a value per level (gt4py's
`testee_scan(qc, scalar, out=qc)` with `scalar: float` a program parameter, a literal or an
expression of them): called through a field operator of its own, in which the scalar is the
same on every level as in any scan called in a field operator (ScanOperator._traced_call);
the program trace lowers that call as it lowers every field operator calling scans."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from stencilchain.program import ir
from stencilchain.program.field_operator import FieldOperator
from stencilchain.program.program_args import ProgramArg
from stencilchain.program.program_scalars import ProgramScalar
from stencilchain.program.scan_operator import ScanOperator


def through_field_operator(
    scan: ScanOperator, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> FieldOperator | None:
    """A field operator that calls `scan` with the same arguments, where a call in a
    program passes a scalar for a value `scan` reads per level; else None. `kwargs` holds
    no out= or domain=."""
    params = scan.definition.params
    scalars, annotations = [], {}
    for param, arg in zip(params, scan.bind(args, kwargs), strict=True):
        t = param.type
        if param.name in scan.columns and isinstance(t, ir.FieldType) and _is_scalar(arg):
            scalars.append(param.name)
            t = t.dtype
        annotations[param.name] = t
    if not scalars:
        return None

    def call(*values: Any) -> Any:
        return scan(*scan.nest(values))

    call.__name__ = call.__qualname__ = f"{scan.name}__scalar_{'_'.join(scalars)}"
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    call.__signature__ = inspect.Signature([inspect.Parameter(p.name, kind) for p in params])  # type: ignore[attr-defined]
    call.__annotations__ = annotations
    # its errors point at the scan
    call.__code__ = call.__code__.replace(
        co_filename=scan.location[0], co_firstlineno=scan.location[1]
    )
    return FieldOperator(call)


def _is_scalar(arg: object) -> bool:
    if isinstance(arg, ProgramArg):
        return not isinstance(arg.ref.type, ir.FieldType)
    return isinstance(arg, (ProgramScalar, bool, int, float, np.generic))
