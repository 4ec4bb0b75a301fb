"""`@field_operator`: a pointwise stencil traced into a FieldOperatorDef."""

from __future__ import annotations

import contextlib
import contextvars
import inspect
from collections.abc import Callable, Iterator
from typing import Any

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.branches import trace_branches
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.program_args import ProgramArg
from stencilchain.program.scalar_functions import ScalarResults, scalar_results
from stencilchain.program.scan_annotations import scalar_overrides
from stencilchain.program.trace_context import (
    declared_dims,
    dims_being_traced,
    scan_being_traced,
)
from stencilchain.program.tracing import Symbol, as_expr, unify_dtype
from stencilchain.program.transforms import substitute
from stencilchain.program.tuple_params import (
    Tree,
    annotation_tree,
    fill,
    flatten,
    has_empty_tuple,
    is_collection,
    leaf_params,
    leaves,
    rebuild,
    tree_repr,
    value_tree,
)
from stencilchain.program.types import parameter_types


class FieldOperator:
    """A traced field operator. Call it from a @program (with `out=`, or without to make a
    temporary) or from another field operator."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.signature = inspect.signature(fn)
        self.location = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
        tuples: dict[str, Tree] = {}
        params, returns = parameter_types(
            fn, "field operator", tuples=tuples, overrides=scalar_overrides(fn)
        )
        # per parameter as written: its tree where it is a tuple (flattened to its leaves
        # in the IR: program/tuple_params.py); each leaf's name as written, by IR name
        self.arg_trees = tuple((n, tuples.get(n)) for n in self.signature.parameters)
        self.shown = {
            leaf.name: shown for n, t in tuples.items() for leaf, shown in leaf_params(n, t)
        }
        # the nesting of a tuple result (its leaves are the IR's flat tuple), or None
        self.result_tree: object = None
        self.callees: dict[str, FieldOperator] = {}
        # the scan operators it calls itself, by name (those of its callees: scans())
        self.scan_callees: dict[str, ir.ScanOperatorDef] = {}
        token = _callees_of_current_trace.set(self.callees)
        scan_token = _scans_of_current_trace.set(self.scan_callees)
        dims_token = dims_being_traced.set(declared_dims(params))
        try:
            flat = iter([Symbol(ir.Ref(p.name, p.type)) for p in params])
            symbols = [next(flat) if t is None else rebuild(t, flat) for _, t in self.arg_trees]
            result = trace_branches(fn, symbols, f"field operator {self.name}")
        finally:
            dims_being_traced.reset(dims_token)
            _scans_of_current_trace.reset(scan_token)
            _callees_of_current_trace.reset(token)
        # a function of scalars only (gt4py's `def add(a: float, b: float) -> float`, or a
        # tuple of scalars): inlined where it is called, in a scan's body or a field
        # operator; never a program's call (program/scalar_functions.py)
        self.inline: ScalarResults | None = scalar_results(
            self.name, params, result, returns, self.location
        )
        if self.inline is not None:
            self.result_tree = self.inline.tree
            exprs = self.inline.exprs
            # never lowered (each call is inlined): only its parameters are read
            body: ir.Expr = exprs[0]
            if self.result_tree is not None:
                types = tuple(e.type for e in exprs)
                body = ir.MakeTuple(exprs, ir.TupleType(types))  # type: ignore[arg-type]
            self.definition = ir.FieldOperatorDef(self.name, params, body)
            return
        body = self._body_of(result)
        got: object = body.type
        if isinstance(body, ir.MakeTuple):
            got = fill(self.result_tree, iter([e.type for e in body.elems]))
        if returns is not None and _return_annotation(returns) != got:
            raise DefinitionError(
                f"field operator {self.name} is annotated to return {tree_repr(returns)} "
                f"but returns {tree_repr(got)}",
                self.location,
            )
        self.definition = ir.FieldOperatorDef(self.name, params, body)

    def _body_of(self, result: object) -> ir.Expr:
        def field_expr(value: object) -> ir.Expr:
            if isinstance(value, Symbol) and isinstance(value.type, ir.FieldType):
                return value.expr
            what = f"a scalar {value.type!r}" if isinstance(value, Symbol) else repr(value)
            raise DefinitionError(
                f"field operator {self.name} returns {what}; it must return a field "
                "or a tuple of fields",
                self.location,
            )

        structured = value_tree(result)
        if is_collection(structured):
            if has_empty_tuple(structured):
                raise DefinitionError(
                    f"field operator {self.name} returns an empty tuple", self.location
                )
            flat = leaves(structured)
            self.result_tree = fill(structured, iter([None] * len(flat)))
            elems = tuple(field_expr(v) for v in flat)
            types = tuple(e.type for e in elems)
            # fields over different dimensions: a program writes each over its own domain
            # (program/tuple_parts.py)
            return ir.MakeTuple(elems, ir.TupleType(types))  # type: ignore[arg-type]
        return field_expr(result)

    def definitions(self) -> dict[str, ir.FieldOperatorDef]:
        """This operator's definition and those of every operator it calls, by name."""
        found: dict[str, ir.FieldOperatorDef] = {}
        _collect(self, found)
        return found

    def scans(self) -> dict[str, ir.ScanOperatorDef]:
        """The scan operators that this operator and every operator it calls call, by name."""
        found: dict[str, ir.ScanOperatorDef] = {}
        for fop in (self, *_all_callees(self)):
            for scan in fop.scan_callees.values():
                _register_scan(found, scan)
        return found

    @property
    def return_type(self) -> ir.FieldType | ir.TupleType:
        return self.definition.return_type

    def bind(self, args: tuple[object, ...], kwargs: dict[str, object]) -> list[object]:
        """Arguments in the IR's parameter order (a tuple argument flattened to its
        leaves); a wrong count, name or tuple structure is a DefinitionError."""
        bound = bind_call(f"field operator {self.name}", self.signature, args, kwargs)
        if not self.shown:
            return bound
        flat: list[object] = []
        where = f"call of field operator {self.name}: argument"
        for (name, tree), arg in zip(self.arg_trees, bound, strict=True):
            if tree is None:
                flat.append(arg)
                continue
            flat += flatten(tree, arg, name, lambda m: DefinitionError(f"{where} {m}"))
        return flat

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.inline is not None and self._in_a_program(args, kwargs):
            raise DefinitionError(
                f"field operator {self.name} computes "
                f"{'a scalar' if self.result_tree is None else 'scalars'} from scalars; call "
                "it inside a field or scan operator (a program's call writes fields)"
            )
        return dispatch_call(
            self,
            f"field operator {self.name}",
            args,
            kwargs,
            "call it inside a field or scan operator (it computes scalars from scalars)"
            if self.inline is not None
            else "call it from a @program with out=..., or from another field operator",
        )

    def _in_a_program(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Whether this is a call in a program's function (outside any operator's trace)."""
        if _program_trace_of(args, kwargs) is not None:
            return True
        outside = _callees_of_current_trace.get() is None and scan_being_traced.get() is None
        return not args and outside and _program_of_current_trace.get() is not None

    def _traced_call(self, args: list[object]) -> Symbol | tuple[Symbol, ...]:
        if self.inline is None and mixed_dims(self.return_type):
            raise DefinitionError(
                f"field operator {self.name} returns fields over different dimensions "
                f"({self.return_type!r}); such a tuple is written by a @program's call "
                "(out=(a, b), each over its own domain), not used inside a field operator"
            )
        exprs = []
        for param, arg in zip(self.definition.params, args):
            shown = self.shown.get(param.name)
            exprs.append(check_argument(self.name, param, arg, shown, zero_dims=True))
        if self.inline is not None:
            bindings = {p.name: e for p, e in zip(self.definition.params, exprs)}
            values = [Symbol(substitute(e, bindings)) for e in self.inline.exprs]
            if self.result_tree is None:
                return values[0]
            return rebuild(self.result_tree, iter(values))  # type: ignore[no-any-return]
        callees = _callees_of_current_trace.get()
        if callees is not None:
            _register(callees, self)
        result = result_symbols(ir.Call(self.name, tuple(exprs), self.return_type))
        if self.result_tree is None or not isinstance(result, tuple):
            return result
        return rebuild(self.result_tree, iter(result))  # type: ignore[no-any-return]


# The callees of the field operator being traced right now (tracing runs one function
# at a time per context; a nested definition gets its own entry).
_callees_of_current_trace: contextvars.ContextVar[dict[str, FieldOperator] | None] = (
    contextvars.ContextVar("callees_of_current_trace", default=None)
)


# The scan operators called by the field operator being traced right now.
_scans_of_current_trace: contextvars.ContextVar[dict[str, ir.ScanOperatorDef] | None] = (
    contextvars.ContextVar("scans_of_current_trace", default=None)
)


# The trace of the program whose function runs right now, outside any field operator's
# trace: where a call with no arguments (`tmp = fill()`) is recorded.
_program_of_current_trace: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "program_of_current_trace", default=None
)


@contextlib.contextmanager
def tracing_program(trace: object) -> Iterator[None]:
    """While a program's function runs: calls without arguments belong to `trace`."""
    token = _program_of_current_trace.set(trace)
    callees_token = _callees_of_current_trace.set(None)
    scans_token = _scans_of_current_trace.set(None)
    try:
        yield
    finally:
        _scans_of_current_trace.reset(scans_token)
        _callees_of_current_trace.reset(callees_token)
        _program_of_current_trace.reset(token)


def register_scan_call(scan: ir.ScanOperatorDef) -> None:
    """Record that the field operator being traced calls `scan`."""
    found = _scans_of_current_trace.get()
    if found is not None:
        _register_scan(found, scan)


def _register_scan(found: dict[str, ir.ScanOperatorDef], scan: ir.ScanOperatorDef) -> None:
    other = found.get(scan.name)
    if other is not None and other != scan:
        raise DefinitionError(f"two different scan operators are named {scan.name}; rename one")
    found[scan.name] = scan


def _all_callees(fop: FieldOperator) -> list[FieldOperator]:
    """Every field operator that `fop` calls, directly or not, each once."""
    seen: dict[int, FieldOperator] = {}
    pending = list(fop.callees.values())
    while pending:
        callee = pending.pop()
        if id(callee) not in seen:
            seen[id(callee)] = callee
            pending += callee.callees.values()
    return list(seen.values())


def _register(found: dict[str, FieldOperator], fop: FieldOperator) -> None:
    other = found.get(fop.name)
    if other is not None and other.definition != fop.definition:
        raise DefinitionError(
            f"two different field operators are named {fop.name} "
            f"(defined at {other.location[0]}:{other.location[1]} and "
            f"{fop.location[0]}:{fop.location[1]}); rename one"
        )
    found[fop.name] = fop


def _collect(fop: FieldOperator, found: dict[str, ir.FieldOperatorDef]) -> None:
    existing = found.get(fop.name)
    if existing is not None:
        if existing != fop.definition:
            raise DefinitionError(
                f"two different field operators are named {fop.name} "
                f"(one defined at {fop.location[0]}:{fop.location[1]}); rename one"
            )
        return
    found[fop.name] = fop.definition
    for callee in fop.callees.values():
        _collect(callee, found)


def check_argument(
    callee: str,
    param: ir.Param,
    arg: object,
    shown: str | None = None,
    *,
    zero_dims: bool = False,
) -> ir.Expr:
    """The IR of `arg` passed for `param` (an element of a tuple parameter is named
    `shown`, as written), after checking that its type matches exactly. With `zero_dims`
    (a call inside a field operator), a scalar of the field's dtype is a zero-dimensional
    field parameter's value, as gt4py promotes it."""
    where = f"argument '{shown or param.name}' of {callee}"
    zero_dim = zero_dims and isinstance(param.type, ir.FieldType) and not param.type.dims
    if zero_dim and not (isinstance(arg, Symbol) and isinstance(arg.type, ir.FieldType)):
        assert isinstance(param.type, ir.FieldType)
        scalar = check_argument(callee, ir.Param(param.name, param.type.dtype), arg, shown)
        return ir.Broadcast(scalar, param.type)
    if isinstance(param.type, ir.FieldType):
        if not (isinstance(arg, Symbol) and arg.type == param.type):
            got = f"{arg.type!r}" if isinstance(arg, Symbol) else repr(arg)
            hint = ""
            if isinstance(arg, Symbol) and _broadcastable(arg.type, param.type):
                dims = ", ".join(d.name for d in param.type.dims)
                hint = f"; an argument is not broadcast implicitly: pass sc.broadcast(x, ({dims}))"
            raise DefinitionError(f"{where}: expected {param.type!r}, got {got}{hint}")
        return arg.expr
    dtype: ScalarType = param.type
    if isinstance(arg, Symbol) and isinstance(arg.type, ir.FieldType):
        raise DefinitionError(f"{where}: expected a {dtype} scalar, got {arg.type!r}")
    if unify_dtype((dtype_probe(dtype), arg), where) != dtype:
        raise DefinitionError(f"{where}: expected {dtype}")
    return as_expr(arg, dtype)


def _broadcastable(t: ir.FieldType | ScalarType, target: ir.FieldType) -> bool:
    """Whether sc.broadcast makes a value of type `t` one of type `target`."""
    if isinstance(t, ir.FieldType):
        return t.dtype == target.dtype and set(t.dims) < set(target.dims)
    return t == target.dtype


def dtype_probe(dtype: ScalarType) -> Any:
    """A typed value of `dtype` to unify an argument against."""
    return dtype.numpy.type(0)


def bind_call(
    what: str, signature: inspect.Signature, args: tuple[object, ...], kwargs: dict[str, object]
) -> list[object]:
    """The arguments of a call of `what` (e.g. "field operator lap") in parameter order; a
    wrong count or name is a DefinitionError."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as err:
        raise DefinitionError(f"call of {what}: {err}") from None
    return list(bound.arguments.values())


def dispatch_call(
    op: Any, what: str, args: tuple[Any, ...], kwargs: dict[str, Any], elsewhere: str
) -> Any:
    """A call of field or scan operator `op` (`what` names it): recorded by the program
    being traced if an argument is a program's, traced (`op._traced_call`) if one is a
    traced value of a field operator, else a DefinitionError that says `elsewhere`."""
    program_trace = _program_trace_of(args, kwargs)
    in_field_operator = _callees_of_current_trace.get() is not None
    if program_trace is None and not args and not in_field_operator:
        program_trace = _program_of_current_trace.get()  # a call without arguments
    if program_trace is not None:
        return program_trace.record_call(op, args, kwargs)
    values = (*args, *kwargs.values())
    if any(isinstance(a, Symbol) for a in leaves(value_tree(values))) or (
        not values and in_field_operator
    ):
        if "out" in kwargs or "domain" in kwargs:
            raise DefinitionError(
                f"{what} called with out=/domain= inside a field operator; those belong to "
                "calls in a @program"
            )
        return op._traced_call(op.bind(args, kwargs))
    raise DefinitionError(
        f"{what} called with {', '.join(type(a).__name__ for a in args) or 'no arguments'}; "
        f"{elsewhere}"
    )


def mixed_dims(rtype: ir.FieldType | ir.TupleType) -> bool:
    """Whether a result is a tuple of fields over different dimensions."""
    return isinstance(rtype, ir.TupleType) and len({e.dims for e in rtype.elems}) > 1


def result_symbols(call: ir.Call | ir.ScanCall) -> Symbol | tuple[Symbol, ...]:
    """The traced value of a call: a Symbol, or one per element of a tuple result."""
    rt = call.type
    if isinstance(rt, ir.TupleType):
        return tuple(Symbol(ir.TupleGet(call, i, t)) for i, t in enumerate(rt.elems))
    return Symbol(call)


def _program_trace_of(args: tuple[object, ...], kwargs: dict[str, object]) -> Any:
    for value in (*args, *kwargs.values()):
        for v in leaves(value_tree(value)):
            if isinstance(v, ProgramArg):
                return v.trace
    return None


def _return_annotation(annotation: object) -> object:
    """`tuple[F, tuple[G, H]]` of field types as a tree of them; anything else unchanged."""
    tree = annotation_tree(annotation)
    return annotation if tree is None else tree


def field_operator(fn: Callable[..., Any]) -> FieldOperator:
    """Decorator: trace `fn` into a field operator, checking its types now."""
    return FieldOperator(fn)
