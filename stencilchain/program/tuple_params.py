"""Tuple-typed parameters and nested tuple results (and named collections: dataclasses and
NamedTuples of fields), flattened to their leaves.

A parameter annotated `tuple[Field[...], tuple[Field[...], float64]]` becomes one IR
parameter per leaf, named `<name>_<i>_<j>` (`x_1_0`), so the IR and every backend see only
fields and scalars. The traced function receives the leaves rebuilt as the nested Python
tuple it was annotated with; a call flattens its argument by the same structure, naming
each element as the user wrote it (`x[1][0]`). Nested tuple results flatten the same way.
A dataclass or NamedTuple annotation is a `Record`: its leaves are `state_u` (`state.u`).
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import typing
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any, Union

import numpy as np

from stencilchain.errors import ArgumentError, DefinitionError
from stencilchain.program import ir
from stencilchain.program.dtypes import ScalarType, bool_, float64, from_numpy, int64
from stencilchain.program.records import frozen


@frozen
class Record:
    """A named collection in a tree: a dataclass or `typing.NamedTuple` `cls`, its
    attributes `names` and their subtrees `elems`."""

    cls: type
    names: tuple[str, ...]
    elems: tuple[Any, ...]

    def make(self, values: Sequence[Any]) -> Any:
        """An instance of `cls` holding `values`."""
        if issubclass(self.cls, tuple):
            return self.cls(*values)
        return self.cls(**dict(zip(self.names, values, strict=True)))


# gt4py's annotations of scalars by Python types (as scan_annotations.COLUMN_DTYPES)
_PYTHON_SCALARS: dict[object, ScalarType] = {float: float64, int: int64, bool: bool_}

# A parameter's type as annotated: a leaf type, or a tuple or a record of such trees.
Tree = Union[ir.FieldType, ScalarType, tuple["Tree", ...], Record]


def _is_record_class(annotation: object) -> bool:
    if not isinstance(annotation, type):
        return False
    if issubclass(annotation, tuple):
        return hasattr(annotation, "_fields")  # a NamedTuple
    return dataclasses.is_dataclass(annotation)


def annotation_tree(annotation: object, *, python_scalars: bool = False) -> Tree | None:
    """`tuple[A, tuple[B, C]]` of field and scalar types, or a dataclass or NamedTuple
    whose attributes are annotated with them, as a tree of them; None for an annotation
    that is no such collection. With `python_scalars`, `float`, `int` and `bool` annotate
    float64, int64 and bool scalars, and NumPy's scalar types their dtypes (gt4py's
    spelling)."""
    if _is_record_class(annotation):
        assert isinstance(annotation, type)
        try:
            hints = _attribute_annotations(annotation)
        except Exception:  # an annotation that cannot be evaluated: not a DSL record
            return None
        names = (
            tuple(annotation._fields)  # type: ignore[attr-defined]
            if issubclass(annotation, tuple)
            else tuple(f.name for f in dataclasses.fields(annotation))  # type: ignore[arg-type]
        )
        subs = [_element_tree(hints.get(n), python_scalars) for n in names]
        if not names or any(t is None for t in subs):
            return None
        return Record(annotation, names, tuple(subs))
    if typing.get_origin(annotation) is not tuple:
        return None
    elems = typing.get_args(annotation)
    if not elems or Ellipsis in elems:
        return None
    tree = [_element_tree(e, python_scalars) for e in elems]
    if any(t is None for t in tree):
        return None
    return tuple(tree)  # type: ignore[arg-type]


def annotation_leaves(annotation: object) -> list[object]:
    """The annotations of the leaves of a tuple or record annotation as written, in the
    order of `annotation_tree`'s leaves (`float` where the tree has float64)."""
    if _is_record_class(annotation):
        assert isinstance(annotation, type)
        hints = _attribute_annotations(annotation)
        names = (
            tuple(annotation._fields)  # type: ignore[attr-defined]
            if issubclass(annotation, tuple)
            else tuple(f.name for f in dataclasses.fields(annotation))  # type: ignore[arg-type]
        )
        return [leaf for n in names for leaf in annotation_leaves(hints.get(n))]
    if typing.get_origin(annotation) is tuple:
        return [leaf for e in typing.get_args(annotation) for leaf in annotation_leaves(e)]
    return [annotation]


def _attribute_annotations(cls: type) -> dict[str, object]:
    """The evaluated annotations of `cls` and its bases. Not `typing.get_type_hints`: on
    Python 3.10 it refuses the DSL's annotations, which are values, not types."""
    hints: dict[str, object] = {}
    for base in reversed(cls.__mro__):
        if base is object:
            continue
        scope = vars(sys.modules[base.__module__])
        for name, hint in inspect.get_annotations(base, eval_str=True).items():
            if isinstance(hint, typing.ForwardRef):  # a NamedTuple's, on Python 3.10
                hint = eval(hint.__forward_arg__, scope)
            hints[name] = hint
    return hints


def _element_tree(annotation: object, python_scalars: bool) -> Tree | None:
    if isinstance(annotation, (ir.FieldType, ScalarType)):
        return annotation
    if python_scalars and annotation in _PYTHON_SCALARS:
        return _PYTHON_SCALARS[annotation]
    if python_scalars and isinstance(annotation, type) and issubclass(annotation, np.generic):
        return from_numpy(np.dtype(annotation))  # gt4py's `value: gtx.float32` (np.float32)
    return annotation_tree(annotation, python_scalars=python_scalars)


def value_tree(value: object) -> Any:
    """`value` as a tree: its tuples as they are, each dataclass or NamedTuple instance a
    Record of its attributes' values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = tuple(f.name for f in dataclasses.fields(value))
        elems = tuple(value_tree(getattr(value, n)) for n in names)
        return Record(type(value), names, elems)
    if isinstance(value, tuple):
        elems = tuple(value_tree(v) for v in value)
        if hasattr(type(value), "_fields"):
            return Record(type(value), tuple(type(value)._fields), elems)  # type: ignore[attr-defined]
        return elems
    return value


def is_collection(tree: object) -> bool:
    """Whether `tree` is a tuple or a record (not a leaf)."""
    return isinstance(tree, (tuple, Record))


def _children(tree: object) -> tuple[Any, ...]:
    return tree.elems if isinstance(tree, Record) else tree  # type: ignore[return-value]


def leaves(tree: object) -> list[Any]:
    """The leaves of a nested tuple or record, in order."""
    if is_collection(tree):
        return [leaf for elem in _children(tree) for leaf in leaves(elem)]
    return [tree]


def has_empty_tuple(value: object) -> bool:
    """Whether `value` is or holds an empty tuple or record."""
    if not is_collection(value):
        return False
    elems = _children(value)
    return not elems or any(map(has_empty_tuple, elems))


def leaf_paths(tree: Tree, name: str) -> list[tuple[str, str]]:
    """Per leaf of `tree` (a parameter `name`'s): its IR name and its name as written,
    e.g. `('x_1_0', 'x[1][0]')`, `('state_u', 'state.u')`."""
    if not is_collection(tree):
        return [(name, "")]
    found = []
    if isinstance(tree, Record):
        steps = [(f"_{n}", f".{n}") for n in tree.names]
    else:
        steps = [(f"_{i}", f"[{i}]") for i in range(len(_children(tree)))]
    for (suffix, step), elem in zip(steps, _children(tree), strict=True):
        for ir_name, shown in leaf_paths(elem, name + suffix):
            found.append((ir_name, step + shown))
    return found


def leaf_params(name: str, tree: Tree) -> list[tuple[ir.Param, str]]:
    """The IR parameters of the leaves of parameter `name` of type `tree`, each with its
    name as written."""
    types = leaves(tree)
    return [
        (ir.Param(ir_name, t), name + shown)
        for (ir_name, shown), t in zip(leaf_paths(tree, name), types, strict=True)
    ]


def rebuild(tree: object, values: Iterator[Any]) -> Any:
    """The next values of `values` nested as `tree` is, each record an instance of its
    class."""
    if isinstance(tree, Record):
        return tree.make([rebuild(elem, values) for elem in tree.elems])
    if isinstance(tree, tuple):
        return tuple(rebuild(elem, values) for elem in tree)
    return next(values)


def fill(tree: object, values: Iterator[Any]) -> Any:
    """`tree` with its leaves replaced by the next values of `values` (records stay
    Records: a tree of types to compare with an annotation's)."""
    if isinstance(tree, Record):
        return dataclasses.replace(tree, elems=tuple(fill(e, values) for e in tree.elems))
    if isinstance(tree, tuple):
        return tuple(fill(elem, values) for elem in tree)
    return next(values)


def tree_repr(tree: object) -> str:
    """A type tree (or an annotation) as written: `tuple[Field[[I], float64], float64]`."""
    if isinstance(tree, Record):
        inner = ", ".join(f"{n}: {tree_repr(e)}" for n, e in zip(tree.names, tree.elems))
        return f"{tree.cls.__name__}({inner})"
    if isinstance(tree, tuple):
        return f"tuple[{', '.join(tree_repr(t) for t in tree)}]"
    if isinstance(tree, (ir.FieldType, ScalarType, ir.TupleType)):
        return repr(tree)
    sub = annotation_tree(tree)
    return repr(tree) if sub is None else tree_repr(sub)


def shape(tree: object) -> str:
    """The nesting of `tree` in words, e.g. `(field, (field, scalar))`."""
    if isinstance(tree, Record):
        inner = ", ".join(f"{n}={shape(e)}" for n, e in zip(tree.names, tree.elems))
        return f"{tree.cls.__name__}({inner})"
    if isinstance(tree, tuple):
        return "(" + ", ".join(shape(e) for e in tree) + ("," if len(tree) == 1 else "") + ")"
    if isinstance(tree, ScalarType):
        return "scalar"
    return "field"  # a field type, or a leaf of a result (always a field)


def _described(value: object) -> str:
    if isinstance(value, tuple) and not hasattr(type(value), "_fields"):
        return f"a tuple of {len(value)}"
    return type(value).__name__


def flatten(
    tree: object, value: object, shown: str, error: Callable[[str], Exception]
) -> list[Any]:
    """The leaves of `value`, which must be nested as `tree` is (a record: an instance of
    its class, or for a NamedTuple also a plain tuple); else `error` of what is wrong,
    naming the element as written (`shown`, e.g. "x[1]", "state.u")."""
    if isinstance(tree, Record):
        if isinstance(value, tree.cls):
            parts = [getattr(value, n) for n in tree.names]
        elif issubclass(tree.cls, tuple) and type(value) is tuple and len(value) == len(tree.names):
            parts = list(value)
        else:
            raise error(f"'{shown}' must be a {shape(tree)}, got {_described(value)}")
        found = []
        for n, sub, v in zip(tree.names, tree.elems, parts, strict=True):
            found += flatten(sub, v, f"{shown}.{n}", error)
        return found
    if not isinstance(tree, tuple):
        if is_collection(value_tree(value)):
            raise error(f"'{shown}' must be one value, got {_described(value)}")
        return [value]
    if type(value) is not tuple or len(value) != len(tree):
        raise error(f"'{shown}' must be a tuple {shape(tree)}, got {_described(value)}")
    found = []
    for i, (sub, v) in enumerate(zip(tree, value, strict=True)):
        found += flatten(sub, v, f"{shown}[{i}]", error)
    return found


def check_leaf_names(params: Sequence[ir.Param], location: tuple[str, int] | None) -> None:
    """A DefinitionError if a parameter has the IR name of a tuple parameter's leaf."""
    names = [p.name for p in params]
    for name in names:
        if names.count(name) > 1:
            raise DefinitionError(
                f"parameter '{name}' has the name that an element of a tuple parameter "
                "takes in the generated code (`<tuple>_<index>`); rename it",
                location,
            )


def nest_arguments(fn: Callable[..., Any], tuples: dict[str, Tree], flat: list[Any]) -> list[Any]:
    """The arguments of `fn` made of the values `flat` of its IR parameters: a tuple
    parameter's leaves nested as it is annotated."""
    values = iter(flat)
    return [
        rebuild(tuples[name], values) if name in tuples else next(values)
        for name in inspect.signature(fn).parameters
    ]


def tuple_arguments(
    fn: Callable[..., Any], tuples: dict[str, Tree], static: Collection[str] = ()
) -> Callable[[Callable[..., None]], TupleArguments]:
    """What wraps a callable of the program `fn`, whose parameters `tuples` are tuples
    (those `static`, compiled in, are no arguments of it)."""
    params = [
        (name, tuples.get(name)) for name in inspect.signature(fn).parameters if name not in static
    ]
    shown = {leaf.name: s for n, t in tuples.items() for leaf, s in leaf_params(n, t)}
    return lambda run: TupleArguments(run, fn.__name__, params, shown)


Flattener = Callable[[Any, list[Any]], None]


def _flattener(tree: object, shown: str, error: Callable[[str], Exception]) -> Flattener | None:
    """What appends the leaves of a value of `tree` to a list (None for a leaf: append
    it), for the call path: it tests only the collections' types and lengths, and leaves
    a mismatch (or a NamedTuple given as a plain tuple) to `flatten`, which explains it. A
    leaf is checked by the program's own checker, like any argument."""
    if not is_collection(tree):
        return None
    record = tree if isinstance(tree, Record) else None
    elems = _children(tree)
    steps = [f".{n}" for n in record.names] if record else [f"[{i}]" for i in range(len(elems))]
    subs = tuple(_flattener(e, shown + step, error) for e, step in zip(elems, steps))
    size = len(subs)

    def add(value: Any, flat: list[Any]) -> None:
        if record is not None and type(value) is record.cls:
            parts: Any = [getattr(value, n) for n in record.names]
        elif record is None and type(value) is tuple and len(value) == size:
            parts = value
        else:
            flat += flatten(tree, value, shown, error)
            return
        for sub, part in zip(subs, parts):
            if sub is None:
                flat.append(part)
            else:
                sub(part, flat)

    return add


class TupleArguments:
    """A program's callable (embedded or compiled) called with tuple arguments: binds them
    to the program's parameters as written, flattens each by its annotation (ArgumentError
    naming the element) and calls `run` with the leaves. Only a program with a tuple
    parameter is wrapped, so others keep their call path."""

    def __init__(
        self,
        run: Callable[..., None],
        name: str,
        params: Sequence[tuple[str, Tree | None]],
        shown: dict[str, str],
    ) -> None:
        self.run = run
        self.name = name
        self.params = tuple(params)
        self.shown = shown
        self._flatteners = tuple(
            None if tree is None else _flattener(tree, pname, self._error)
            for pname, tree in self.params
        )

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.run, attr)

    def __call__(self, /, *args: Any, **kwargs: Any) -> None:
        values = args if not kwargs and len(args) == len(self.params) else self._bind(args, kwargs)
        flat: list[Any] = []
        for add, value in zip(self._flatteners, values):
            if add is None:
                flat.append(value)
            else:
                add(value, flat)
        try:
            self.run(*flat)
        except ArgumentError as err:
            raise ArgumentError(self._rename(str(err))) from None

    def _error(self, message: str) -> ArgumentError:
        return ArgumentError(f"{self.name}(): argument {message}")

    def _rename(self, message: str) -> str:
        for ir_name, written in sorted(self.shown.items(), key=lambda kv: -len(kv[0])):
            message = message.replace(f"'{ir_name}'", f"'{written}'")
        return message

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        names = [n for n, _ in self.params]
        takes = f"{self.name}() takes {len(names)} arguments ({', '.join(names)})"
        if len(args) > len(names):
            raise ArgumentError(f"{takes}, got {len(args)} by position")
        bound: dict[str, Any] = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names or key in bound:
                what = "an unknown keyword" if key not in names else "twice the"
                raise ArgumentError(f"{takes}, got {what} argument '{key}'")
            bound[key] = value
        missing = [f"'{n}'" for n in names if n not in bound]
        if missing:
            raise ArgumentError(f"{takes}; missing: {', '.join(missing)}")
        return [bound[n] for n in names]
