"""`@frozen`: the frozen dataclass of the DSL's values, for a fraction of what
`dataclasses.dataclass(frozen=True)` costs to define.

The standard library compiles six functions from source for each frozen dataclass
(`__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__`, `__delattr__`); the IR's
classes are most of what a first stencil definition costs in a fresh process
(docs/adr/0048-records-of-the-dsl.md). Here only `__init__` is compiled: it takes the fields
by name, with their defaults, and it is what tracing and the transforms call most. The
others are closures shared in shape by every class (`operator.attrgetter` gets the fields,
in C), with the standard library's results: the same equality and hash (the tuple of the
compared fields), the same repr. The class is an ordinary dataclass for everything else
(`dataclasses.fields`, `replace`, `asdict`, `is_dataclass`, pickling, a frozen subclass by
either decorator), and mypy reads it as a frozen dataclass (PEP 681).

`@expr_node` is `@frozen` for the IR's expressions, which are DAGs: a value that many joined
`if`s update from itself is shared, and written out as a tree it can be millions of times
larger (docs/adr/0056). Its hash is computed once per instance (kept out of pickles: a
string's hash differs between processes), and equality compares shared nodes once per
pair, so both cost the DAG's size, not the tree's.

Not supported, and refused when the class is made: `field(init=False)`, `kw_only`, and a
class that defines its own `__init__`, `__eq__`, `__hash__`, `__setattr__` or
`__delattr__` (use `dataclasses.dataclass` there). An own `__repr__` is kept.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda decorator: decorator


_C = TypeVar("_C", bound=type)

_OWN_METHODS_REFUSED = ("__init__", "__eq__", "__hash__", "__setattr__", "__delattr__")


class _HasDefaultFactory:
    """The default of a parameter whose field has a default factory (as in dataclasses)."""

    def __repr__(self) -> str:
        return "<factory>"


_HAS_DEFAULT_FACTORY = _HasDefaultFactory()


@dataclasses.dataclass(init=False, repr=False, eq=False)
class _Model:
    """The `__dataclass_params__` of this Python, made without compiling a method (a frozen
    dataclass compiles six); below, made to say what a frozen one's say."""


_PARAMS = copy.copy(_Model.__dataclass_params__)  # type: ignore[attr-defined]
for _setting in ("init", "repr", "eq", "frozen"):
    setattr(_PARAMS, _setting, True)


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: _C) -> _C:
    """`cls` made a frozen dataclass, as `@dataclasses.dataclass(frozen=True)` does."""
    for name in _OWN_METHODS_REFUSED:
        if name in vars(cls) and not (name == "__hash__" and vars(cls)[name] is None):
            raise TypeError(
                f"@frozen class {cls.__qualname__} defines {name}: use "
                "@dataclasses.dataclass(frozen=True) for it"
            )
    # a subclass of a frozen dataclass must say frozen to the standard library, which then
    # compiles __setattr__ and __delattr__ itself
    inherits = any("__dataclass_fields__" in vars(base) for base in cls.__mro__[1:])
    had_doc = cls.__doc__ is not None
    # fields, inheritance, __match_args__, with no method compiled
    dataclasses.dataclass(init=False, repr=False, eq=False, frozen=inherits)(cls)
    fields = dataclasses.fields(cls)
    for field in fields:
        if not field.init or field.kw_only is True:
            raise TypeError(
                f"@frozen class {cls.__qualname__}: field {field.name!r} is init=False or "
                "kw_only, which @frozen does not support; use @dataclasses.dataclass(frozen=True)"
            )
    cls.__init__ = _LazyInit(cls, fields)  # type: ignore[misc]
    if "__repr__" not in vars(cls):
        cls.__repr__ = _repr(tuple(f.name for f in fields if f.repr))  # type: ignore[assignment]
    compared = _getter(tuple(f.name for f in fields if f.compare))
    cls.__eq__ = _eq(compared)  # type: ignore[assignment]
    hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
    cls.__hash__ = _hash(_getter(hashed))  # type: ignore[assignment]
    if not inherits:
        names = frozenset(f.name for f in fields)
        cls.__setattr__, cls.__delattr__ = _frozen_setters(cls, names)  # type: ignore[assignment]
    cls.__dataclass_params__ = _PARAMS  # type: ignore[attr-defined]
    if not had_doc:  # the standard library's text, without its inspect.signature
        cls.__doc__ = f"{cls.__name__}({', '.join(f.name for f in fields)})"
    return cls


# Where `@expr_node` keeps an instance's hash, in its `__dict__` (not a field).
_HASH_KEY = "_sc_hash"


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def expr_node(cls: _C) -> _C:
    """`cls` made a frozen dataclass as `@frozen` does, whose hash is cached and whose
    equality walks shared sub-nodes once (an IR expression node)."""
    frozen(cls)
    fields = dataclasses.fields(cls)
    compared = _getter(tuple(f.name for f in fields if f.compare))
    hashed = _getter(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash)))
    cls._sc_compared = staticmethod(compared)  # type: ignore[attr-defined]
    cls.__hash__ = _cached_hash(hashed)  # type: ignore[assignment]
    cls.__eq__ = _dag_eq  # type: ignore[assignment]
    cls.__getstate__ = _state_without_hash  # type: ignore[attr-defined]
    return cls


def _cached_hash(hashed: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        state = self.__dict__
        try:
            return state[_HASH_KEY]  # type: ignore[no-any-return]
        except KeyError:
            value = state[_HASH_KEY] = hash(hashed(self))
            return value

    return __hash__


def _state_without_hash(self: Any) -> dict[str, Any]:
    state = dict(self.__dict__)
    state.pop(_HASH_KEY, None)
    return state


def _dag_eq(self: Any, other: object) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _same(self, other, set())


def _same(a: Any, b: Any, proven: set[tuple[int, int]]) -> bool:
    """`a == b`, each pair of `@expr_node` instances compared once (`proven` holds the pairs
    found equal; both stay alive while the comparison runs, so their ids are theirs)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return bool(a == b)
    if kind is tuple:
        return len(a) == len(b) and all(_same(x, y, proven) for x, y in zip(a, b))
    compared = getattr(kind, "_sc_compared", None)
    if compared is None:
        return bool(a == b)
    key = (id(a), id(b))
    if key in proven:
        return True
    if hash(a) != hash(b):
        return False
    if all(_same(x, y, proven) for x, y in zip(compared(a), compared(b))):
        proven.add(key)
        return True
    return False


class _LazyInit:
    """A class's `__init__` until it is first looked up (to make an instance, or by
    `inspect.signature`): then `_init` compiles it and it replaces this on the class. Most of
    the DSL's classes make no instance in a process that defines a stencil (29 of 45 for a
    Laplacian), and compiling is most of what making one costs."""

    __slots__ = ("cls", "fields")

    def __init__(self, cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> None:
        self.cls = cls
        self.fields = fields

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        init: Any = vars(self.cls)["__init__"]
        if init is self:  # not compiled yet (by another thread either)
            init = _init(self.cls, self.fields)
            self.cls.__init__ = init
        return init.__get__(instance, owner)


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    """`__init__(self, <fields in order, with their defaults>)`, compiled: each field set
    with object.__setattr__, then `__post_init__()` where the class has one."""
    namespace: dict[str, Any] = {
        "__name__": cls.__module__,
        "__set": object.__setattr__,
        "__HAS_DEFAULT_FACTORY": _HAS_DEFAULT_FACTORY,
    }
    params, body = [], []
    for field in fields:
        name = field.name
        if field.default_factory is not dataclasses.MISSING:
            namespace[f"__factory_{name}"] = field.default_factory
            params.append(f"{name}=__HAS_DEFAULT_FACTORY")
            value = f"__factory_{name}() if {name} is __HAS_DEFAULT_FACTORY else {name}"
        elif field.default is not dataclasses.MISSING:
            namespace[f"__default_{name}"] = field.default
            params.append(f"{name}=__default_{name}")
            value = name
        else:
            params.append(name)
            value = name
        body.append(f"    __set(__record, {name!r}, {value})")
    if hasattr(cls, "__post_init__"):
        body.append("    __record.__post_init__()")
    source = f"def __init__(__record, {', '.join(params)}):\n" + ("\n".join(body) or "    pass")
    exec(source, namespace)
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    return init


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of those fields of an instance (a tuple for one field too, as the standard
    library compares and hashes)."""
    if len(names) > 1:
        return attrgetter(*names)
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda self: (one(self),)
    return lambda self: ()


def _eq(compared: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, object], Any]:
    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    return __eq__


def _hash(hashed: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(hashed(self))

    return __hash__


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({fields})"

    return __repr__


def _frozen_setters(
    cls: type[Any], names: frozenset[str]
) -> tuple[Callable[[Any, str, Any], None], Callable[[Any, str], None]]:
    """__setattr__ and __delattr__ that refuse the fields (any attribute, on the class
    itself), as the standard library's do."""

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__
