"""Scans whose values or state are collections in the DSL: a value annotated with a
(nested) tuple or a named collection of per-level values, fields (over fewer dimensions:
broadcast) and scalars; a NamedTuple or frozen dataclass state, its result a named
collection written to out=. Each flattened to scalar leaves at trace time, so every
toolchain runs them; checked against NumPy loops written here, in C and F layouts, and
misuse is a DefinitionError at the user's line."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.errors import DefinitionError

I, K = sc.Dimension("I"), sc.Dimension("K", kind=sc.VERTICAL)
F = sc.Field[[I, K], sc.float64]
SHAPE = (4, 7)
TOOLCHAINS = ["embedded", "gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu"]


def runner(fixture: str, request: pytest.FixtureRequest) -> Callable[[sc.Program], Any]:
    if fixture == "embedded":
        return lambda prog: prog.with_backend(sc.backends.run_embedded)
    toolchain = request.getfixturevalue(fixture)
    return lambda prog: prog.with_backend(toolchain)


class Pair(NamedTuple):
    a: float  # read per level
    w: sc.float64  # a scalar


@sc.scan_operator(axis=K, init=1.0)
def weighted(carry, v: tuple[float, tuple[Pair, sc.float64]]):  # type: ignore[no-untyped-def]
    first, (pair, scale) = v
    return carry * scale + first + pair.a * pair.w


@sc.field_operator
def weighted_op(x: F, column: sc.Field[[K], sc.float64], w: sc.float64, s: sc.float64) -> F:
    return weighted((x, (Pair(column, w), s)))


class Running(NamedTuple):
    total: float
    count: sc.int64
    first: bool


@sc.scan_operator(axis=K, init=Running(0.0, 0, True))
def running(state: Running, x: float) -> Running:
    if state.first:
        return Running(x, np.int64(1), False)
    return Running(state.total + x, state.count + 1, False)


@dataclasses.dataclass(frozen=True)
class Extremes:
    low: sc.float32
    high: sc.float32


@sc.scan_operator(axis=K, forward=False, init=(np.inf, -np.inf))
def extremes(state: Extremes, x: sc.Field[[I, K], sc.float32]) -> Extremes:
    return Extremes(sc.where(x < state.low, x, state.low), sc.where(x > state.high, x, state.high))


@sc.field_operator
def spread(x: sc.Field[[I, K], sc.float32]) -> sc.Field[[I, K], sc.float32]:
    e = extremes(x)
    return e.high - e.low


@sc.program
def collections(
    x: F,
    column: sc.Field[[K], sc.float64],
    w: sc.float64,
    s: sc.float64,
    y: sc.Field[[I, K], sc.float32],
    out: F,
    total: F,
    count: sc.Field[[I, K], sc.int64],
    first: sc.Field[[I, K], sc.bool_],
    low: sc.Field[[I, K], sc.float32],
    high: sc.Field[[I, K], sc.float32],
    width: sc.Field[[I, K], sc.float32],
) -> None:
    weighted_op(x, column, w, s, out=out)
    running(x, out=Running(total, count, first))  # a named collection of outs
    extremes(y, out=Extremes(low, high))
    spread(y, out=width)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_collections_of_values_and_states(
    name: str, order: str, request: pytest.FixtureRequest
) -> None:
    rng = np.random.default_rng(21)
    x = np.asarray(rng.random(SHAPE), order=order)
    column = rng.random(SHAPE[1])
    y = np.asarray(rng.random(SHAPE), np.float32, order=order)
    w, s = 0.5, 0.75
    outs = [np.zeros(SHAPE, order=order) for _ in range(2)]
    count = np.zeros(SHAPE, np.int64, order=order)
    first = np.ones(SHAPE, bool, order=order)
    f32s = [np.zeros(SHAPE, np.float32, order=order) for _ in range(3)]
    runner(name, request)(collections)(x, column, w, s, y, outs[0], outs[1], count, first, *f32s)

    want = np.zeros(SHAPE)
    carry = np.ones(SHAPE[0])
    for k in range(SHAPE[1]):
        carry = carry * s + x[:, k] + column[k] * w
        want[:, k] = carry
    np.testing.assert_allclose(outs[0], want, rtol=1e-12)
    np.testing.assert_allclose(outs[1], np.cumsum(x, axis=1), rtol=1e-12)
    np.testing.assert_array_equal(count, np.broadcast_to(np.arange(1, SHAPE[1] + 1), SHAPE))
    assert not first.any()
    low = np.minimum.accumulate(y[:, ::-1], axis=1)[:, ::-1]
    high = np.maximum.accumulate(y[:, ::-1], axis=1)[:, ::-1]
    np.testing.assert_array_equal(f32s[0], low)
    np.testing.assert_array_equal(f32s[1], high)
    np.testing.assert_allclose(f32s[2], high - low, rtol=1e-6)


def _line_of(err: DefinitionError) -> str:
    """The line of the user's code that `err` points at."""
    assert err.location is not None
    path, line = err.location
    with open(path, encoding="utf-8") as source:
        return source.read().splitlines()[line - 1]


def test_init_as_a_tuple_for_a_named_state() -> None:
    """`init=(0.0, 0, True)` for a state annotated Running: an instance of it, so the body
    reads its attributes; `init=` is typed by the class's annotations (0 is int64)."""

    @sc.scan_operator(axis=K, init=(0.0, 0, True))
    def counted(state: Running, x: F) -> Running:
        return Running(state.total + x, state.count + 1, False)

    assert [lit.type for lit in counted.definition.init] == [sc.float64, sc.int64, sc.bool_]


def test_an_init_that_its_class_does_not_allow_is_an_error() -> None:
    with pytest.raises(
        DefinitionError, match=r"init= gives init.count the float64 value 0.5"
    ) as info:

        @sc.scan_operator(axis=K, init=Running(0.0, 0.5, True))  # type: ignore[arg-type]
        def bad(state: Running, x: F) -> Running:
            return state

    assert "@sc.scan_operator(axis=K, init=Running(0.0, 0.5" in _line_of(info.value)


def test_a_new_state_of_another_class_is_an_error() -> None:
    with pytest.raises(DefinitionError, match=r"'state' must be a Running\(total=scalar"):

        @sc.scan_operator(axis=K, init=Running(0.0, 0, True))
        def wrong(state: Running, x: F):  # type: ignore[no-untyped-def]
            return Pair(x, x)


def test_an_argument_of_another_nesting_is_an_error_at_the_call() -> None:
    @sc.scan_operator(axis=K, init=0.0)
    def add(carry, v: tuple[float, float]):  # type: ignore[no-untyped-def]
        return carry + v[0] + v[1]

    with pytest.raises(DefinitionError, match=r"argument 'v' must be a tuple") as info:

        @sc.field_operator
        def three(x: F) -> F:
            return add((x, x, x))

    assert "return add((x, x, x))" in _line_of(info.value)


def test_a_program_scalar_in_a_tuple_value_is_read_per_level() -> None:
    """A program's call `add((x, c), out=out)` with a scalar parameter `c` for a leaf read
    per level: called through a field operator of its own, which takes the leaves."""

    @sc.scan_operator(axis=K, init=1.0)
    def add(carry, v: tuple[float, float], b: F):  # type: ignore[no-untyped-def]
        return carry + v[0] * v[1] + b

    @sc.program
    def scaled(x: F, c: sc.float64, out: F) -> None:
        add((x, c), x, out=out)

    x = np.random.default_rng(3).random(SHAPE)
    out = np.zeros(SHAPE)
    scaled(x, 2.0, out)
    np.testing.assert_allclose(out, 1.0 + np.cumsum(3.0 * x, axis=1), rtol=1e-12)
    with pytest.raises(DefinitionError, match=r"'v' must be a tuple \(field, field\), got a"):

        @sc.program
        def three(x: F, c: sc.float64, out: F) -> None:
            add((x, c, c), x, out=out)
