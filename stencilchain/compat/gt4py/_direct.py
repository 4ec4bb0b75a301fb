"""A gt4py field or scan operator called directly, `fop(a, b, out=c, offset_provider={...},
domain={I: (0, n)})` (gt4py's test-harness style): run as a program of that one call,
traced per set of domain dimensions and of the types of `out=` (a field, a nested tuple or
a named collection of fields) and specialised per call's tables as a program is
(_programs.runner); the domain's bounds are parameters of the program, so another domain
needs no new build. A scan's values take the types of their arguments (gt4py annotates
them `float` and reads a field per level), its state is its own."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from stencilchain.compat.gt4py._offsets import Reads
from stencilchain.compat.gt4py._operators import ScanOperator
from stencilchain.compat.gt4py._programs import runner, trace_program
from stencilchain.compat.gt4py._provider import provider_of, table_array
from stencilchain.compat.gt4py._translate import translated
from stencilchain.compat.gt4py._values import FieldValue
from stencilchain.errors import ArgumentError, DefinitionError
from stencilchain.program import dtypes, ir
from stencilchain.program.tuple_params import is_collection, leaves, value_tree

if TYPE_CHECKING:
    from stencilchain.compat.gt4py._operators import FieldOperator


class DirectCalls:
    """The programs that run direct calls of one field or scan operator."""

    def __init__(self, op: FieldOperator) -> None:
        self.op = op
        signature = inspect.signature(op.definition)
        self.scan = isinstance(op, ScanOperator)
        if self.scan:  # (state, *values): the state is the scan's own, not an argument
            signature = signature.replace(parameters=list(signature.parameters.values())[1:])
        self.signature = signature
        self._runs: dict[tuple[Any, ...], tuple[Any, tuple[str, ...]]] = {}

    def __call__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        name = self.op.__name__
        kwargs = dict(kwargs)
        if "out" not in kwargs:
            raise ArgumentError(
                f"{self._what()} called directly needs out= (the field it writes); "
                "its result is not returned"
            )
        out = kwargs.pop("out")
        provider = provider_of(kwargs.pop("offset_provider", None))
        domain = kwargs.pop("domain", None)
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as err:
            raise ArgumentError(f"{self._what()}: {err}") from None
        values = [bound.arguments[p] for p in self.signature.parameters]
        dims, bounds = _domain(name, domain)
        # a scan's values are typed by their arguments, so their types key its programs
        typed = tuple(_type_key(v) for v in values) if self.scan else ()
        key = (dims, _type_key(out), typed)
        found = self._runs.get(key)
        if found is None:
            found = self._runs[key] = self._trace(dims, out, values)
        run, tables = found
        run(*values, out, *bounds, *(table_array(provider, t) for t in tables))

    def _what(self) -> str:
        return f"{'scan' if self.scan else 'field'} operator {self.op.__name__}"

    def _trace(
        self, dims: object, out_value: object, values: list[Any]
    ) -> tuple[Any, tuple[str, ...]]:
        op = self.op
        fn = op.definition
        # the operator's parameters, the out= field(s) and the domain's bounds
        sc_op = op.traced(Reads())
        if getattr(sc_op, "inline", None) is not None:
            raise ArgumentError(
                f"{self._what()} computes scalars from scalars: call it inside a field or "
                "scan operator (a direct call, like a program's call, writes fields; gt4py's "
                "programs and compiled backends refuse it there too)"
            )
        annotations = dict(translated(fn).__annotations__)
        returns = annotations.pop("return", None)
        params = list(self.signature.parameters.values())
        if self.scan:
            annotations.pop(next(iter(inspect.signature(fn).parameters)), None)
            for p, value in zip(params, values, strict=True):
                annotations[p.name] = _value_annotation(value, annotations.get(p.name))
        out_type = _value_annotation(out_value, None)
        if out_type is None:  # not fields: the operator's result type (the call checks it)
            result = getattr(getattr(sc_op, "definition", None), "return_type", None)
            out_type = result if result is not None else returns
            if isinstance(out_type, ir.TupleType):
                out_type = tuple.__class_getitem__(out_type.elems)
            if out_type is None:
                raise DefinitionError(f"{self._what()}: cannot tell its result type")
        names = {p.name for p in params}
        out_name = _fresh("out", names)
        bound_names = []
        for d in _bound_dims(dims):
            for side in ("start", "stop"):
                bound_names.append(_fresh(f"{d.name.lower()}_{side}", names))
        extra = [out_name, *bound_names]
        annotations[out_name] = out_type
        for b in bound_names:
            annotations[b] = dtypes.int64

        def call_body(*args: Any) -> None:
            n = len(params)
            own, out, limits = args[:n], args[n], args[n + 1 :]
            if dims is None:
                op(*own, out=out)
            else:
                op(*own, out=out, domain=_rebuilt(dims, iter(limits)))

        call_body.__name__ = fn.__name__
        call_body.__qualname__ = fn.__qualname__
        sig_params = params + [
            inspect.Parameter(e, inspect.Parameter.POSITIONAL_OR_KEYWORD) for e in extra
        ]
        call_body.__signature__ = inspect.Signature(sig_params)  # type: ignore[attr-defined]
        location = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
        made, tables, _ = trace_program(call_body, annotations, call_body, location)
        return runner(made, op.backend), tables


def _value_annotation(value: object, declared: object) -> object:
    """The annotation of a program parameter that takes `value`: a field value's type, a
    tuple or named collection of them as one; `declared` for anything else (a scalar, a
    bare array), None where that is None."""
    if isinstance(value, FieldValue):
        dtype = dtypes.from_numpy(np.dtype(value.dtype))
        return declared if dtype is None else ir.FieldType(value.dims, dtype)
    if type(value) is tuple:
        elems = [_value_annotation(v, None) for v in value]
        if any(e is None for e in elems):
            return declared
        return tuple.__class_getitem__(tuple(elems))
    if is_collection(value_tree(value)):  # a dataclass or NamedTuple: its class
        return type(value)
    if isinstance(value, np.generic) and declared is None:
        return dtypes.from_numpy(value.dtype)
    return declared


def _type_key(value: object) -> object:
    """What of `value` its direct call's program depends on: the dimensions and dtype of a
    field value, the nesting and class of a collection, the type of anything else."""
    if isinstance(value, FieldValue):
        return (value.dims, str(value.dtype))
    if isinstance(value, tuple):
        return (type(value), tuple(_type_key(v) for v in value))
    tree = value_tree(value)
    if is_collection(tree):
        return (type(value), _type_key(tuple(leaves(tree))))
    return type(value)


def _fresh(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name


@dataclasses.dataclass(frozen=True)
class _Dims:
    """A dict of a direct call's domain=: its dimensions, in the order of their bounds."""

    dims: tuple[Any, ...]


def _domain(name: str, domain: object) -> tuple[object, list[int]]:
    """The shape of a direct call's domain= (None, the _Dims of a dict, or a tuple of
    shapes: gt4py's one domain per field of out=, nested as out= is), and its bounds in
    the order of that shape."""
    if domain is None:
        return None, []
    if isinstance(domain, tuple):
        shapes, bounds = [], []
        for each in domain:
            shape, more = _domain(name, each)
            shapes.append(shape)
            bounds += more
        return tuple(shapes), bounds
    if not isinstance(domain, dict):
        raise ArgumentError(
            f"field operator {name}: domain= is a dict {{Dim: (start, stop)}} or a tuple of "
            f"one per field of out=, got {domain!r}"
        )
    dims = tuple(sorted(domain, key=lambda d: d.name))
    bounds = []
    for d in dims:
        r = domain[d]
        if not (isinstance(r, tuple) and len(r) == 2 and all(type(v) is int for v in r)):
            raise ArgumentError(
                f"field operator {name}: domain of {d!r} is a (start, stop) of ints, got {r!r}"
            )
        bounds += [r[0], r[1]]
    return _Dims(dims), bounds


def _bound_dims(shape: object) -> list[Any]:
    """The dimension of each (start, stop) pair of a domain of `shape`, in order."""
    if isinstance(shape, _Dims):
        return list(shape.dims)
    if isinstance(shape, tuple):
        return [d for each in shape for d in _bound_dims(each)]
    return []


def _rebuilt(shape: object, limits: Iterator[Any]) -> object:
    """The domain of `shape` with its bounds taken from `limits` (the program's bound
    parameters)."""
    if isinstance(shape, _Dims):
        return {d: (next(limits), next(limits)) for d in shape.dims}
    if isinstance(shape, tuple):
        return tuple(_rebuilt(each, limits) for each in shape)
    return None
