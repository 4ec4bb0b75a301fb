"""`@scan_operator`: a column scan traced into a ScanOperatorDef.

The function `(state, *values) -> new_state` is called once with symbolic scalars: the
previous state and the arguments' values at the current level. Its body is pointwise
scalar arithmetic; a shift inside it is a DefinitionError (shift the arguments before
the scan: call it from a field operator as `scan(f(K - 1))`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.branches import trace_branches
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import (
    ScalarType,
    default_literal_dtype,
    from_numpy,
    literal_fits,
)
from stencilchain.program.field_operator import (
    bind_call,
    check_argument,
    dispatch_call,
    dtype_probe,
    register_scan_call,
    result_symbols,
)
from stencilchain.program.program_args import ProgramArg
from stencilchain.program.scan_annotations import (
    check_state_annotation,
    column_params,
    dims_of_call,
    field_dims,
    value_trees,
)
from stencilchain.program.trace_context import scan_being_traced
from stencilchain.program.tracing import Symbol, as_expr, unify_dtype
from stencilchain.program.tuple_params import (
    Record,
    Tree,
    annotation_tree,
    fill,
    flatten,
    has_empty_tuple,
    is_collection,
    leaf_params,
    leaves,
    rebuild,
    shape,
    value_tree,
)
from stencilchain.program.types import parameter_types


class ScanOperator:
    """A traced scan operator. Call it like a field operator: from a @program (with `out=`,
    or without to make temporaries), or from a field operator (its result is a field or a
    tuple of fields, which the program trace lowers into program calls)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        axis: Dimension,
        forward: bool,
        init: object,
        column_dims: tuple[Dimension, ...] | None = None,
        narrow: tuple[tuple[str, tuple[Dimension, ...]], ...] = (),
        *,
        dtype_columns: bool = False,
    ) -> None:
        """`column_dims`: the dimensions of one call of a generic scan, and `narrow` the
        values annotated `float` (...) whose arguments are over a subset of them.
        `dtype_columns`: values annotated with a dtype (`sc.float32`) are one per level
        too, as gt4py reads them (stencilchain.compat.gt4py); else they are scalars."""
        self.fn = fn
        self.name = fn.__name__
        if column_dims is not None:  # one of a generic scan's: named for its dimensions
            self.name += "_" + "_".join(d.name for d in column_dims)
            for param, param_dims in narrow:
                self.name += f"__{param}_" + "_".join(d.name for d in param_dims)
        self.location = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
        where = f"scan operator {self.name}"
        if not isinstance(axis, Dimension):
            raise DefinitionError(f"{where}: axis= must be a Dimension, got {axis!r}")
        if not isinstance(forward, bool):
            raise DefinitionError(f"{where}: forward= must be True or False, got {forward!r}")
        self.axis, self.forward, self.init = axis, forward, init
        signature = inspect.signature(fn)
        init = _init_as_annotated(fn, init)
        # values annotated `float`, `int`, `bool` (gt4py's spelling): fields over the scan's
        # dimensions; where no parameter is a field, those of each call (`specialized`)
        self.dtype_columns = dtype_columns
        columns = column_params(fn, dtypes=dtype_columns)
        self.columns = frozenset(columns)
        # values annotated with a (nested) tuple or a named collection: one IR parameter
        # per leaf (program/tuple_params.py); each leaf's name as written, by IR name
        self.arg_trees: dict[str, Tree] = value_trees(fn)
        self.shown = {
            leaf.name: written
            for n, t in self.arg_trees.items()
            for leaf, written in leaf_params(n, t)
        }
        dims_given = column_dims or field_dims(fn)
        self.generic = dims_given is None
        self._specializations: dict[tuple[object, ...], ScanOperator] = {}
        # init= as a tree: a tuple, or a Record of a dataclass or NamedTuple instance
        init_tree = value_tree(init)
        tuple_state = is_collection(init_tree)
        if has_empty_tuple(init_tree):
            raise DefinitionError(f"{where}: init= is an empty tuple", self.location)
        # a nested state (init=(0.0, (0.0, 0.0))) or a named collection (State(...)) is flat
        # in the IR; its nesting, or None
        structured = isinstance(init_tree, Record) or (
            tuple_state and any(map(is_collection, init_tree))
        )
        self.state_tree: object = (
            fill(init_tree, iter([None] * len(leaves(init_tree)))) if structured else None
        )
        # the nesting of a tuple result (the state's), as FieldOperator.result_tree
        self.result_tree = self.state_tree
        init_values = tuple(leaves(init_tree)) if tuple_state else (init,)
        literals = tuple(_init_literal(where, v, self.location) for v in init_values)
        literals = _declared_state(where, init_tree, literals, self.location)
        literals = _annotated_state(fn, where, init, literals, self.location)
        all_params = list(signature.parameters.values())
        if not all_params:
            raise DefinitionError(
                f"{where} takes no parameters; write it as (state, *values) -> new_state",
                self.location,
            )
        state_param, *value_params = all_params
        init_types = [lit.type for lit in literals]
        check_state_annotation(
            fn,
            fill(init_tree, iter(init_types)) if tuple_state else init_types[0],
            where,
            self.location,
        )
        # the columns' fields over the scan's dimensions (a generic scan's checked over its
        # axis alone: it is traced for each call's dimensions, `specialized`)
        over = dims_given or (axis,)
        narrowed = dict(narrow)
        column_types = {n: ir.FieldType(narrowed.get(n, over), t) for n, t in columns.items()}
        overrides: dict[str, ir.FieldType | ScalarType | Tree] = dict(column_types)
        for name, tree in self.arg_trees.items():  # a collection's leaves read per level
            names = (leaf.name for leaf, _ in leaf_params(name, tree))
            overrides[name] = fill(
                tree, (column_types.get(n, t) for n, t in zip(names, leaves(tree)))
            )
        params, _ = parameter_types(fn, "scan operator", untyped=1, tuples={}, overrides=overrides)
        # with their leaves' types (a value read per level a field), as errors show them
        self.arg_trees = {n: overrides[n] for n in self.arg_trees}
        if self.generic:
            self.signature = signature.replace(parameters=value_params)
            return
        fields = [p for p in params if isinstance(p.type, ir.FieldType)]
        if column_dims is not None:  # generic: the call's dimensions
            dims = column_dims
        else:
            assert fields  # a scan without a field is generic
            dims = fields[0].type.dims  # type: ignore[union-attr]
        # the scan's dimensions are those of its widest field; a field over a subset of
        # them is broadcast (a Cell field in a (Cell, K) scan is read at each level)
        widest = max(fields, key=lambda p: len(p.type.dims), default=None)  # type: ignore[union-attr]
        if widest is not None and len(widest.type.dims) > len(dims):  # type: ignore[union-attr]
            dims = widest.type.dims  # type: ignore[union-attr]
        for p in fields:
            if not set(p.type.dims) <= set(dims):  # type: ignore[union-attr]
                other = next(q for q in fields if q.type.dims == dims)  # type: ignore[union-attr]
                raise DefinitionError(
                    f"{where}: parameters '{other.name}' and '{p.name}' are over different "
                    f"dimensions ({other.type!r} and {p.type!r}); the fields of a scan are "
                    f"over its dimensions ({', '.join(d.name for d in dims)}) or a subset of "
                    "them (broadcast)",
                    self.location,
                )
        if axis not in dims:
            raise DefinitionError(
                f"{where}: axis {axis.name} is not a dimension of its fields "
                f"({', '.join(d.name for d in dims)})",
                self.location,
            )
        state_name = state_param.name
        if tuple_state:
            state = tuple(
                ir.Param(f"{state_name}[{k}]", lit.type) for k, lit in enumerate(literals)
            )
        else:
            state = (ir.Param(state_name, literals[0].type),)
        state_symbols = tuple(Symbol(ir.Ref(s.name, s.type)) for s in state)
        flat = iter([Symbol(ir.Ref(p.name, _dtype(p.type))) for p in params])
        values = [
            rebuild(self.arg_trees[p.name], flat) if p.name in self.arg_trees else next(flat)
            for p in value_params
        ]
        token = scan_being_traced.set(self.name)
        try:
            state_value: object = state_symbols if tuple_state else state_symbols[0]
            if self.state_tree is not None:
                state_value = rebuild(self.state_tree, iter(state_symbols))
            result = trace_branches(fn, (state_value, *values), where)
            if self.state_tree is not None:
                types = fill(self.state_tree, iter([lit.type for lit in literals]))
                result = _flat_state(where, types, result, self.location)
        finally:
            scan_being_traced.reset(token)
        body = self._body_of(result, state, tuple_state)
        self.definition = ir.ScanOperatorDef(
            self.name, params, axis, forward, literals, state, body, dims, tuple_state
        )
        self.signature = signature.replace(parameters=value_params)

    def _body_of(
        self, result: object, state: tuple[ir.Param, ...], tuple_state: bool
    ) -> tuple[ir.Expr, ...]:
        where = f"scan operator {self.name}"
        if tuple_state != isinstance(result, tuple) or (
            tuple_state and len(result) != len(state)  # type: ignore[arg-type]
        ):
            expected = (
                f"a tuple of {len(state)} scalars, like its init="
                if tuple_state
                else "one scalar, like its init="
            )
            got = f"a tuple of {len(result)}" if isinstance(result, tuple) else _what(result)
            raise DefinitionError(
                f"{where} returns {got}; the new state must be {expected}", self.location
            )
        results = result if isinstance(result, tuple) else (result,)
        body = []
        for k, (value, s) in enumerate(zip(results, state)):
            slot = f"state element {k}" if tuple_state else "the state"
            if isinstance(value, Symbol) and isinstance(value.type, ir.FieldType):
                raise DefinitionError(
                    f"{where} returns a field for {slot}; the new state is scalars",
                    self.location,
                )
            try:
                dtype = unify_dtype((dtype_probe(s.type), value), f"{where}, {slot}")  # type: ignore[arg-type]
            except DefinitionError as err:
                raise DefinitionError(
                    f"{err.reason} (the state's dtype {s.type} is fixed by init=)",
                    self.location,
                ) from None
            body.append(as_expr(value, dtype))
        return tuple(body)

    @property
    def return_type(self) -> ir.FieldType | ir.TupleType:
        return self.definition.return_type

    def definitions(self) -> dict[str, ir.FieldOperatorDef]:
        """The field operators this scan calls: none."""
        return {}

    def bind(self, args: tuple[object, ...], kwargs: dict[str, object]) -> list[object]:
        """Arguments in the IR's parameter order (a collection argument flattened to its
        leaves); a wrong count, name or nesting is a DefinitionError."""
        bound = bind_call(f"scan operator {self.name}", self.signature, args, kwargs)
        if not self.arg_trees:
            return bound
        flat: list[object] = []
        where = f"call of scan operator {self.name}: argument"
        for name, arg in zip(self.signature.parameters, bound, strict=True):
            tree = self.arg_trees.get(name)
            if tree is None:
                flat.append(arg)
            else:
                arg = _same_names(tree, arg)
                flat += flatten(tree, arg, name, lambda m: DefinitionError(f"{where} {m}"))
        return flat

    def flat_names(self) -> list[str]:
        """The IR names of the values, in `bind`'s order."""
        found: list[str] = []
        for name in self.signature.parameters:
            tree = self.arg_trees.get(name)
            found += [name] if tree is None else [p.name for p, _ in leaf_params(name, tree)]
        return found

    def nest(self, flat: tuple[Any, ...]) -> list[Any]:
        """The arguments as written of the values `flat` in `bind`'s order."""
        values = iter(flat)
        return [
            rebuild(self.arg_trees[n], values) if n in self.arg_trees else next(values)
            for n in self.signature.parameters
        ]

    def specialized(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> ScanOperator:
        """This scan for the dimensions of a call (a scan whose values are all annotated
        `float`, `int` or `bool`: its fields take the call's dimensions)."""
        dims = dims_of_call(args, kwargs, self.axis)
        if dims is None:
            raise DefinitionError(
                f"scan operator {self.name} has no parameter annotated as a field, and this "
                f"call passes no field over {self.axis.name} and no out=, so the dimensions "
                "of its columns are unknown; annotate a parameter as sc.Field[[...], dtype], "
                "or pass a field or out="
            )
        # a value annotated `float` whose argument is over a subset of the dimensions
        # takes that subset (broadcast), as gt4py broadcasts it
        narrow = []
        columns = column_params(self.fn, dtypes=self.dtype_columns)
        bound = self.bind(args, {k: v for k, v in kwargs.items() if k not in ("out", "domain")})
        for param, arg in zip(self.flat_names(), bound, strict=True):
            arg_dims = _field_dims_of(arg)
            if param in columns and arg_dims is not None and set(arg_dims) < set(dims):
                narrow.append((param, arg_dims))
        key = (dims, tuple(narrow))
        made = self._specializations.get(key)
        if made is None:
            made = ScanOperator(
                self.fn,
                self.axis,
                self.forward,
                self.init,
                column_dims=dims,
                narrow=key[1],
                dtype_columns=self.dtype_columns,
            )
            self._specializations[key] = made
        return made

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.generic:
            return self.specialized(args, kwargs)(*args, **kwargs)
        return dispatch_call(
            self,
            f"scan operator {self.name}",
            args,
            kwargs,
            "call it from a @program or from a field operator",
        )

    def _traced_call(self, args: list[object]) -> Symbol | tuple[Symbol, ...]:
        """The call inside a field operator being traced: checked like a field operator's
        call, its result a field (or a tuple of fields) over the scan's dimensions."""
        if scan_being_traced.get() is not None:
            raise DefinitionError(
                f"scan operator {self.name} called inside scan operator "
                f"{scan_being_traced.get()}; call both from a field operator"
            )
        exprs = []
        for param, arg in zip(self.definition.params, args):
            if (
                param.name in self.columns
                and isinstance(param.type, ir.FieldType)
                and _is_scalar(arg)
            ):  # a scalar for a value read per level (gt4py's spelling): the same on each
                scalar = check_argument(self.name, ir.Param(param.name, param.type.dtype), arg)
                arg = Symbol(ir.Broadcast(scalar, param.type))
            expr = check_argument(self.name, param, arg, self.shown.get(param.name))
            if not isinstance(param.type, ir.FieldType) and not isinstance(
                expr, (ir.Ref, ir.Literal)
            ):
                raise DefinitionError(
                    f"argument '{param.name}' of scan operator {self.name} is a scalar "
                    "expression; a scan's scalar arguments are scalar parameters or literals "
                    "(compute the value outside the scan, or pass a field)"
                )
            exprs.append(expr)
        register_scan_call(self.definition)
        definition = self.definition
        result = result_symbols(
            ir.ScanCall(
                self.name, tuple(exprs), definition.axis, definition.forward, self.return_type
            )
        )
        if self.result_tree is None or not isinstance(result, tuple):
            return result
        return rebuild(self.result_tree, iter(result))  # type: ignore[no-any-return]


def _same_names(tree: Tree, value: object) -> object:
    """`value` as an instance of the class of record `tree` where it is a dataclass or
    NamedTuple of another class with the same attributes (gt4py matches a scan's
    collections by their attributes: `inp: ScalarCollection` takes a FieldCollection)."""
    found = value_tree(value)
    if not (isinstance(tree, Record) and isinstance(found, Record)) or found.cls is tree.cls:
        return value
    if found.names != tree.names:
        return value  # flatten explains the mismatch
    return tree.make([getattr(value, n) for n in tree.names])


def _is_scalar(arg: object) -> bool:
    """Whether a traced call's argument is a scalar: a traced scalar or a Python or NumPy
    number."""
    if isinstance(arg, Symbol):
        return not isinstance(arg.type, ir.FieldType)
    return isinstance(arg, (bool, int, float, np.generic))


def _field_dims_of(arg: object) -> tuple[Dimension, ...] | None:
    """The dimensions of a call's argument that is a field (traced or a program's)."""
    t = (
        arg.type
        if isinstance(arg, Symbol)
        else arg.ref.type
        if isinstance(arg, ProgramArg)
        else None
    )
    return t.dims if isinstance(t, ir.FieldType) else None


def _flat_state(
    where: str, tree: object, result: object, location: tuple[str, int]
) -> tuple[object, ...]:
    """The leaves of a nested new state, which must be nested as init= is."""

    def error(message: str) -> DefinitionError:
        return DefinitionError(
            f"{where} returns a new state whose {message}; the new state is nested like "
            f"its init= {shape(tree)}",
            location,
        )

    return tuple(flatten(tree, result, "state", error))


def _what(value: object) -> str:
    if isinstance(value, Symbol):
        return f"a {value.type!r}"
    return f"{type(value).__name__} {value!r}"


def _dtype(t: ir.FieldType | ScalarType) -> ScalarType:
    return t.dtype if isinstance(t, ir.FieldType) else t


def _init_literal(where: str, value: object, location: tuple[str, int]) -> ir.Literal:
    """`value` of init= as a typed literal: a NumPy scalar keeps its dtype, a Python float
    is float64, an int int64, a bool bool."""
    if isinstance(value, np.generic):
        dtype = from_numpy(value.dtype)
        if dtype is None:
            raise DefinitionError(f"{where}: init= value of unsupported dtype {value.dtype}")
        return ir.Literal(value.item(), dtype)
    if isinstance(value, (bool, int, float)):
        dtype = default_literal_dtype(value)
        return ir.Literal(float(value) if dtype.is_float else value, dtype)
    raise DefinitionError(
        f"{where}: init= must be a number (np.float32(0) for a float32 state), a tuple "
        "of numbers or a NamedTuple or dataclass instance of them, got "
        f"{type(value).__name__} {value!r}",
        location,
    )


def _init_as_annotated(fn: Callable[..., Any], init: object) -> object:
    """`init=` given as a plain tuple for a state annotated with a dataclass or NamedTuple
    (`state: State`, `init=(0.0, 0.0, True)`): an instance of that class."""
    try:
        annotations = inspect.get_annotations(fn, eval_str=True)
    except Exception:  # parameter_types reports it
        return init
    state = next(iter(inspect.signature(fn).parameters), None)
    tree = annotation_tree(annotations.get(state or ""), python_scalars=True)
    if isinstance(tree, Record) and type(init) is tuple and len(init) == len(tree.names):
        return tree.make(list(init))
    return init


def _declared_state(
    where: str, tree: object, literals: tuple[ir.Literal, ...], location: tuple[str, int]
) -> tuple[ir.Literal, ...]:
    """The literals of init= where it is (or holds) a dataclass or NamedTuple instance:
    each of its attributes annotated with a dtype (`value: sc.float32`, `flag: bool`)
    has that dtype; a Python number takes it as a literal does, one that cannot (0.5 for
    an int32) or a NumPy scalar of another dtype is a DefinitionError."""
    declared = _declared_leaves(tree)
    if len(declared) != len(literals):
        return literals
    typed = []
    for (shown, dtype), literal, value in zip(declared, literals, leaves(tree), strict=True):
        if dtype is None or literal.type == dtype:
            typed.append(literal)
            continue
        if isinstance(value, np.generic) or not literal_fits(value, dtype):
            raise DefinitionError(
                f"{where}: init= gives {shown} the {literal.type} value {value!r}, but "
                f"{shown} is annotated {dtype}; give a value of that dtype",
                location,
            )
        typed.append(ir.Literal(float(literal.value) if dtype.is_float else value, dtype))
    return tuple(typed)


def _declared_leaves(tree: object, shown: str = "init") -> list[tuple[str, ScalarType | None]]:
    """Per leaf of an init= tree: its name as written and the dtype its dataclass or
    NamedTuple annotates it with (None where none does)."""
    if isinstance(tree, Record):
        annotated = annotation_tree(tree.cls, python_scalars=True)
        elems = annotated.elems if isinstance(annotated, Record) else (None,) * len(tree.names)
        found: list[tuple[str, ScalarType | None]] = []
        for name, sub, ann in zip(tree.names, tree.elems, elems, strict=True):
            where = f"{shown}.{name}"
            if isinstance(ann, ScalarType) and not is_collection(sub):
                found.append((where, ann))
            else:
                found += _declared_leaves(sub, where)
        return found
    if isinstance(tree, tuple):
        return [
            leaf for i, sub in enumerate(tree) for leaf in _declared_leaves(sub, f"{shown}[{i}]")
        ]
    return [(shown, None)]


def _annotated_state(
    fn: Callable[..., Any],
    where: str,
    init: object,
    literals: tuple[ir.Literal, ...],
    location: tuple[str, int],
) -> tuple[ir.Literal, ...]:
    """The state's literals after its annotation, where it is a dtype (`state: sc.float64`):
    that dtype is the state's, a Python number of init= takes it as a literal does
    (`init=0` gives 0.0), and an init= that cannot (0.5 for an int32 state, a NumPy scalar of
    another dtype, a tuple) is a DefinitionError. Other annotations are left as they are."""
    try:
        annotations = inspect.get_annotations(fn, eval_str=True)
    except Exception:  # parameter_types reports it
        return literals
    state = next(iter(inspect.signature(fn).parameters), None)
    dtype = annotations.get(state) if state is not None else None
    if not isinstance(dtype, ScalarType):
        return literals
    problem = None
    if is_collection(value_tree(init)):
        count = len(leaves(value_tree(init)))
        problem = f"init= is a tuple of {count}, the annotation one {dtype} scalar"
    elif isinstance(init, np.generic):
        if literals[0].type != dtype:
            problem = f"init= is a NumPy {literals[0].type}"
    elif not literal_fits(init, dtype):  # type: ignore[arg-type]
        problem = f"init={init!r} is no {dtype} value"
    if problem is not None:
        raise DefinitionError(
            f"{where}: the state is annotated {state}: sc.{dtype} but {problem}; give an "
            f"init= of that dtype (e.g. init={_example(dtype)}) or annotate the state with "
            "the init='s dtype",
            location,
        )
    value = literals[0].value
    return (ir.Literal(float(value) if dtype.is_float else value, dtype),)


def _example(dtype: ScalarType) -> str:
    return "False" if dtype.is_bool else "0.0" if dtype.is_float else "0"


def scan_operator(
    *, axis: Dimension, forward: bool = True, init: object = 0.0
) -> Callable[[Callable[..., Any]], ScanOperator]:
    """Decorator: trace `fn(state, *values) -> new_state` into a scan along `axis`,
    from the first level up (`forward`) or from the last down, starting at `init`."""

    def decorate(fn: Callable[..., Any]) -> ScanOperator:
        return ScanOperator(fn, axis, forward, init)

    return decorate


__all__ = ["ScanOperator", "scan_operator"]
