"""A gt4py field operator called directly, `fop(a, b, out=c, offset_provider={...},
domain={I: (0, n)})` (gt4py's test-harness style): run as a program of that one call,
traced per set of domain dimensions and specialised per call's tables as a program is
(_programs.runner); the domain's bounds are parameters of the program, so another domain
needs no new build."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import numpy as np

from stencilchain.compat.gt4py._offsets import Reads
from stencilchain.compat.gt4py._programs import runner, trace_program
from stencilchain.compat.gt4py._provider import provider_of, table_array
from stencilchain.compat.gt4py._translate import translated
from stencilchain.compat.gt4py._values import FieldValue
from stencilchain.errors import ArgumentError, DefinitionError
from stencilchain.program import dtypes, ir

if TYPE_CHECKING:
    from stencilchain.compat.gt4py._operators import FieldOperator


class DirectCalls:
    """The programs that run direct calls of one field operator."""

    def __init__(self, op: FieldOperator) -> None:
        self.op = op
        self.signature = inspect.signature(op.definition)
        self._runs: dict[tuple[Any, ...], tuple[Any, tuple[str, ...]]] = {}

    def __call__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        name = self.op.__name__
        kwargs = dict(kwargs)
        if "out" not in kwargs:
            raise ArgumentError(
                f"field operator {name} called directly needs out= (the field it writes); "
                "its result is not returned"
            )
        out = kwargs.pop("out")
        provider = provider_of(kwargs.pop("offset_provider", None))
        domain = kwargs.pop("domain", None)
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as err:
            raise ArgumentError(f"field operator {name}: {err}") from None
        values = [bound.arguments[p] for p in self.signature.parameters]
        dims, bounds = _domain(name, domain)
        found = self._runs.get(dims)
        if found is None:
            found = self._runs[dims] = self._trace(dims, out)
        run, tables = found
        out_value = tuple(out) if isinstance(out, tuple) else out
        run(*values, out_value, *bounds, *(table_array(provider, t) for t in tables))

    def _trace(self, dims: tuple[Any, ...], out_value: object) -> tuple[Any, tuple[str, ...]]:
        op = self.op
        fn = op.definition
        name = op.__name__
        # the operator's parameters, the out= field(s) and the domain's bounds
        sc_op = op.traced(Reads())
        annotations = dict(translated(fn).__annotations__)
        returns = annotations.pop("return", None)
        result = getattr(getattr(sc_op, "definition", None), "return_type", None)
        out_type: object = result if result is not None else returns
        if isinstance(out_value, FieldValue):
            out_dtype = dtypes.from_numpy(np.dtype(out_value.dtype))
            if out_dtype is None:
                raise ArgumentError(f"field operator {name}: out= has dtype {out_value.dtype}")
            out_type = ir.FieldType(out_value.dims, out_dtype)
        if isinstance(out_type, ir.TupleType):
            out_type = tuple.__class_getitem__(out_type.elems)
        if isinstance(out_type, ir.TupleType) or out_type is None:
            raise DefinitionError(f"field operator {fn.__name__}: cannot tell its result type")
        params = list(self.signature.parameters.values())
        names = {p.name for p in params}
        out_name = _fresh("out", names)
        bound_names = []
        for d in dims:
            for side in ("start", "stop"):
                bound_names.append(_fresh(f"{d.name.lower()}_{side}", names))
        extra = [out_name, *bound_names]
        annotations[out_name] = out_type
        for b in bound_names:
            annotations[b] = dtypes.int64

        def call_body(*args: Any) -> None:
            n = len(params)
            own, out, limits = args[:n], args[n], args[n + 1 :]
            domain = {d: (limits[2 * i], limits[2 * i + 1]) for i, d in enumerate(dims)}
            op(*own, out=out, domain=domain) if dims else op(*own, out=out)

        call_body.__name__ = fn.__name__
        call_body.__qualname__ = fn.__qualname__
        sig_params = params + [
            inspect.Parameter(e, inspect.Parameter.POSITIONAL_OR_KEYWORD) for e in extra
        ]
        call_body.__signature__ = inspect.Signature(sig_params)  # type: ignore[attr-defined]
        location = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
        made, tables, _ = trace_program(call_body, annotations, call_body, location)
        return runner(made, op.backend), tables


def _fresh(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _domain(name: str, domain: object) -> tuple[tuple[Any, ...], list[int]]:
    """The dimensions a direct call's domain gives, and their bounds in that order."""
    if domain is None:
        return (), []
    if not isinstance(domain, dict):
        raise ArgumentError(
            f"field operator {name}: domain= is a dict {{Dim: (start, stop)}}, got {domain!r}"
        )
    dims = tuple(sorted(domain, key=lambda d: d.name))
    bounds: list[int] = []
    for d in dims:
        r = domain[d]
        if not (isinstance(r, tuple) and len(r) == 2 and all(type(v) is int for v in r)):
            raise ArgumentError(
                f"field operator {name}: domain of {d!r} is a (start, stop) of ints, got {r!r}"
            )
        bounds += [r[0], r[1]]
    return dims, bounds
