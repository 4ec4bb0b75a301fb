"""`@frozen` (program/records.py) makes the classes that `@dataclasses.dataclass(frozen=True)`
makes, as far as anything can tell: the same fields, init, equality, hash, repr, frozen
errors, replace/asdict/pickle, subclasses by either decorator; and it refuses what it does
not support, when the class is made."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from typing import Any

import pytest

from stencilchain.program import ir
from stencilchain.program.records import frozen


@frozen
class Ours:
    name: str
    args: tuple[int, ...] = ()
    extra: list[int] = dataclasses.field(default_factory=list, compare=False)
    weight: float = dataclasses.field(default=1.0, repr=False)
    tag: str = dataclasses.field(default="t", hash=False)


@dataclasses.dataclass(frozen=True)
class Theirs:  # the same body
    name: str
    args: tuple[int, ...] = ()
    extra: list[int] = dataclasses.field(default_factory=list, compare=False)
    weight: float = dataclasses.field(default=1.0, repr=False)
    tag: str = dataclasses.field(default="t", hash=False)


def test_a_frozen_record_behaves_as_a_frozen_dataclass() -> None:
    ours: Any = Ours
    theirs: Any = Theirs
    assert dataclasses.is_dataclass(Ours)
    assert [f.name for f in dataclasses.fields(ours)] == [
        f.name for f in dataclasses.fields(theirs)
    ]
    assert ours.__match_args__ == theirs.__match_args__
    assert str(inspect.signature(ours)) == str(inspect.signature(theirs))
    settings = ("init", "repr", "eq", "order", "unsafe_hash", "frozen")
    assert [getattr(ours.__dataclass_params__, s) for s in settings] == [
        getattr(theirs.__dataclass_params__, s) for s in settings
    ]
    for args, kwargs in [(("a",), {}), (("a", (1, 2)), {"weight": 2.0}), ((), {"name": "b"})]:
        a, b = ours(*args, **kwargs), theirs(*args, **kwargs)
        assert repr(a) == repr(b).replace(theirs.__qualname__, ours.__qualname__)
        assert hash(a) == hash(b)  # the hash of the same tuple of fields
        assert a == ours(*args, **kwargs) and a != b  # another class is never equal
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
    a = ours("a", (1,), [5], 2.0, "x")
    assert a == ours("a", (1,), [6], 2.0, "x")  # compare=False: not compared
    assert a != ours("a", (1,), [5], 3.0, "x")
    assert hash(a) == hash(ours("a", (1,), [5], 2.0, "y"))  # hash=False: not hashed
    assert ours("a").extra is not ours("a").extra  # a fresh default per instance
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'name'"):
        a.name = "b"
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'name'"):
        del a.name
    with pytest.raises(AttributeError):
        a.other = 1  # on the class itself, as the standard library's
    changed = dataclasses.replace(a, name="z")
    assert changed.name == "z" and changed.args == (1,) and type(changed) is ours
    assert pickle.loads(pickle.dumps(a)) == a
    assert copy.deepcopy(a) == a
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'name'"):
        ours()


def test_post_init_runs_and_subclasses_mix_with_the_standard_decorator() -> None:
    @frozen
    class Base:
        x: int

        def __post_init__(self) -> None:
            if self.x < 0:
                raise ValueError("x < 0")

    @frozen
    class Ours(Base):
        y: int = 2

    @dataclasses.dataclass(frozen=True)
    class Theirs(Base):
        z: int = 3

    with pytest.raises(ValueError, match="x < 0"):
        Ours(-1)
    assert (Ours(1), Theirs(1)) == (Ours(1, 2), Theirs(1, 3))
    assert (
        repr(Ours(1))
        == "test_post_init_runs_and_subclasses_mix_with_the_standard_decorator.<locals>.Ours(x=1, y=2)"
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        Ours(1).y = 3
    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):

        @dataclasses.dataclass
        class Thawed(Base):
            w: int = 0


def test_an_own_repr_is_kept_and_unsupported_classes_are_refused() -> None:
    @frozen
    class Shown:
        x: int

        def __repr__(self) -> str:
            return f"<{self.x}>"

    assert repr(Shown(1)) == "<1>"
    with pytest.raises(TypeError, match="defines __eq__"):

        @frozen
        class OwnEq:
            x: int

            def __eq__(self, other: object) -> bool:
                return True

    with pytest.raises(TypeError, match="field 'y' is init=False or kw_only"):

        @frozen
        class NoInit:
            x: int
            y: int = dataclasses.field(default=0, init=False)


def test_the_ir_is_made_of_frozen_records() -> None:
    lit = ir.Literal(1.5, ir.ScalarType("float64"))
    assert (
        lit == ir.Literal(1.5, ir.ScalarType("float64"))
        and len({lit, ir.Literal(1.5, lit.type)}) == 1
    )
    assert repr(lit) == "Literal(value=1.5, type=float64)"  # ScalarType's own repr
    with pytest.raises(dataclasses.FrozenInstanceError):
        lit.value = 2.0


def test_init_is_compiled_at_its_first_use() -> None:
    """A class's `__init__` is compiled when first looked up: by its first instance (here
    one of a plain subclass), or by `inspect.signature`; then it is a function on the class."""
    import types

    def make() -> Any:
        @frozen
        class Late:
            x: int
            y: str = "y"

        return Late

    late = make()
    assert not isinstance(vars(late)["__init__"], types.FunctionType)

    class Plain(late):  # type: ignore[misc, valid-type]
        pass

    assert Plain(1).y == "y" and Plain(2, "z") == Plain(2, "z")
    assert isinstance(vars(late)["__init__"], types.FunctionType)
    assert late(1) == late(x=1) and late(1).x == 1
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        late()
    other = make()
    assert str(inspect.signature(other)) == "(x: 'int', y: 'str' = 'y') -> None"
    assert isinstance(vars(other)["__init__"], types.FunctionType)
