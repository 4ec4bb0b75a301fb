"""`if` statements and conditional expressions on traced scalars joined where they end
(stencilchain.program.if_join): the same values as tracing every path (branches.py, the
reference), bit for bit, on many small functions; one trace where the paths would be
too many."""

# ruff: noqa: SIM108 (the statement form of `if` is what this tests)

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import branches, if_join

I, K = sc.Dimension("I"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]
F32 = sc.Field[[I, K], sc.float32]
MODE = "fast"  # a Python constant: `if MODE == ...` stays a Python `if`


def elif_chain(f: F, a: sc.int32, b: sc.int32, flag: sc.bool_) -> F:
    if a > 0:
        if b > 0:
            g = f + 1.0
        else:
            g = f * 2.0
    elif a == b:
        g = f - 3.0
    elif flag:
        g = f / 4.0
    else:
        g = -f
    return g


def one_side_only(f: F, a: sc.int32, b: sc.int32, flag: sc.bool_) -> F:
    g = f
    h = 1.5
    if flag:
        g = f * 3.0  # bound before: joined
    if a > b:
        h = 2.5  # two Python floats: a float64 where
    else:
        pass
    return g * h


class Pair(NamedTuple):
    lo: Any
    hi: Any


def tuples(f: F, a: sc.int32, b: sc.int32, flag: sc.bool_) -> tuple[F, F]:
    p = Pair(f, f + 1.0)
    t = (f, f * 2.0)
    if flag:
        p = Pair(p.hi, p.lo)
        t = (t[1], t[0] + 1.0)
    if a < b:
        p = Pair(p.lo * 2.0, p.hi)
    return p.lo + t[0], p.hi - t[1]


def python_constants(f: F, a: sc.int32, b: sc.int32, flag: sc.bool_) -> F:
    if MODE == "fast":
        g = f + 1.0
    else:
        g = undefined_name  # type: ignore[name-defined]  # noqa: F821 - never traced
    scale = 2.0 if MODE == "fast" else undefined_name  # type: ignore[name-defined]  # noqa: F821
    if flag:
        g = g * scale
    return g


def loops(f: F, a: sc.int32, b: sc.int32, flag: sc.bool_) -> F:
    g = f
    for bit in range(7):  # 7 conditions: 128 paths, one trace joined
        if (a >> bit) & 1 == 1:
            g = g + float(bit)
        elif bit % 2 == 0:  # a Python condition inside the traced one's else
            g = g * 0.5
    return g


def expressions(f: F, a: sc.int32, b: sc.int32, flag: sc.bool_) -> F:
    k = a + 1 if a > b else b - 1  # int32 on both sides
    g = f * 2.0 if flag else (f + 1.0 if a == 0 else f)
    return g + sc.astype(k, sc.float64)


def early_return(f: F, a: sc.int32, b: sc.int32, flag: sc.bool_) -> F:
    g = f
    if flag:
        g = g + 1.0
    if a > b:  # a `return` inside: stays a Python `if`, traced per path
        return g * 2.0
    if a == b:
        g = g - 1.0
    return g


def bound_on_one_side(f: F, a: sc.int32, b: sc.int32, flag: sc.bool_) -> F:
    g = f + 1.0
    if flag:
        extra = f * 2.0  # not bound before: unbound after the `if`
        g = g + extra
    if a > b:
        late = g * 0.5  # bound on both sides: joined
    else:
        late = 0.0
    return late if a > b else g


def float32_literal(f: F32, a: sc.int32, b: sc.int32, flag: sc.bool_) -> F32:
    x = 0.1  # a Python float against a float32 field: not joined (its dtype differs)
    if flag:
        x = f
    return x * 3.0 + f


FUNCTIONS = [
    elif_chain,
    one_side_only,
    tuples,
    python_constants,
    loops,
    expressions,
    early_return,
    bound_on_one_side,
    float32_literal,
]
JOINED = set(FUNCTIONS) - {float32_literal}


def _paths_only(fn: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setattr(branches, "joined", lambda fn: None)
        return sc.field_operator(fn)


def _program(op: Any, fn: Callable[..., Any]) -> Any:
    if fn is tuples:

        @sc.program
        def run2(f: F, a: sc.int32, b: sc.int32, flag: sc.bool_, x: F, y: F) -> None:
            op(f, a, b, flag, out=(x, y))

        return run2
    if fn is float32_literal:

        @sc.program
        def run32(f: F32, a: sc.int32, b: sc.int32, flag: sc.bool_, x: F32) -> None:
            op(f, a, b, flag, out=x)

        return run32

    @sc.program
    def run1(f: F, a: sc.int32, b: sc.int32, flag: sc.bool_, x: F) -> None:
        op(f, a, b, flag, out=x)

    return run1


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda fn: fn.__name__)
def test_joined_matches_the_paths_bit_for_bit(
    fn: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert if_join.joined(fn) is not None  # each has a source and `if`s
    np_dtype = np.float32 if fn is float32_literal else np.float64
    two = fn is tuples
    joined_program = _program(sc.field_operator(fn), fn)
    paths_program = _program(_paths_only(fn, monkeypatch), fn)
    f = np.random.default_rng(3).standard_normal((3, 5)).astype(np_dtype)
    for a, b, flag in itertools.product([-3, 0, 2, 5, 127], [-1, 0, 2], [True, False]):
        outs = []
        for program in (joined_program, paths_program):
            got = [np.empty_like(f) for _ in range(1 + two)]
            program(f, np.int32(a), np.int32(b), flag, *got)
            outs.append(got)
        for j, p in zip(*outs, strict=True):
            np.testing.assert_array_equal(j, p)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda fn: fn.__name__)
def test_which_functions_are_traced_once(
    fn: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The joined functions are traced in one run (early_return: a run stopped at its `if`
    with a `return`, then one per side); the other falls back to the paths."""
    runs: list[str] = []
    explore = branches._explore

    def counted(run: Callable[[], object], what: str) -> object:
        def counting() -> object:
            runs.append(what)
            return run()

        return explore(counting, what)

    monkeypatch.setattr(branches, "_explore", counted)
    sc.field_operator(fn)
    if fn in JOINED:
        assert len(runs) == (3 if fn is early_return else 1), runs
    else:
        assert len(runs) > 2, runs  # a failed joined run, then every path


def test_a_field_condition_is_still_the_error() -> None:
    with pytest.raises(sc.DefinitionError, match="on a field"):

        @sc.field_operator
        def bad(f: F, flag: sc.bool_) -> F:
            g = f
            if flag:
                g = g + 1.0
            if f > 0.0:
                g = g * 2.0
            return g


def test_the_rewrite_keeps_the_users_lines() -> None:
    """An error inside a joined branch points at the user's line."""
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def bad(f: F, flag: sc.bool_) -> F:
            g = f
            if flag:
                g = g + 1.0
            else:
                g = g // 2.0  # L:floor
            return g

    assert info.value.location is not None
    assert info.value.location[0] == __file__
    with open(__file__) as source:
        line = source.read().splitlines()[info.value.location[1] - 1]
    assert "L:floor" in line


def test_no_source_falls_back_to_the_paths() -> None:
    namespace: dict[str, Any] = {"sc": sc, "F": F}
    exec(  # a function without a source file
        "def made(f: F, flag: sc.bool_) -> F:\n"
        "    if flag:\n"
        "        return f + 1.0\n"
        "    return f\n",
        namespace,
    )
    assert if_join.joined(namespace["made"]) is None
    op = sc.field_operator(namespace["made"])

    @sc.program
    def run(f: F, flag: sc.bool_, out: F) -> None:
        op(f, flag, out=out)

    f, out = np.ones((2, 3)), np.empty((2, 3))
    run(f, True, out)
    np.testing.assert_array_equal(out, f + 1.0)


def test_a_variable_bound_on_one_side_and_used_after_is_the_paths_error() -> None:
    """Unbound after the joined `if`; its use fails, and the paths give their error."""
    with pytest.raises(NameError, match="extra"):

        @sc.field_operator
        def bad(f: F, flag: sc.bool_) -> F:
            if flag:
                extra = f * 2.0
            return f + extra


def _comprehension_ifexp(f: F, flag: sc.bool_) -> F:
    return next(g if flag else -g for g in (f,))


def _no_if(f: F, a: sc.float64) -> F:
    return f * 2.0 + f(I + 1) - a


@pytest.mark.parametrize(
    ("fn", "reads_source"),
    [(_no_if, False), (elif_chain, True), (one_side_only, True), (_comprehension_ifexp, True)],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_only_a_function_with_a_condition_has_its_source_read(
    fn: Callable[..., Any], reads_source: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading a source (inspect.findsource looks at the file of every loaded module on its
    first use) is left out where the code has no conditional jump, hence no `if` to join;
    a conditional expression inside a comprehension is still found and joined."""
    read: list[str] = []
    findsource = if_join.inspect.findsource

    def counted(code: Any) -> Any:
        read.append(code.co_name)
        return findsource(code)

    if_join._maker.cache_clear()
    monkeypatch.setattr(if_join.inspect, "findsource", counted)
    joined = if_join.joined(fn)
    assert bool(read) is reads_source
    assert (joined is not None) is reads_source  # each with an `if` is rewritten
    sc.field_operator(fn)  # traced: the source read only where the code can branch
    assert bool(read) is reads_source


def test_a_comprehensions_condition_is_joined_as_the_paths_give_it() -> None:
    op = sc.field_operator(_comprehension_ifexp)

    @sc.program
    def run(f: F, flag: sc.bool_, out: F) -> None:
        op(f, flag, out=out)

    f = np.arange(6.0).reshape(2, 3)
    for flag in (True, False):
        out = np.empty_like(f)
        run(f, flag, out)
        np.testing.assert_array_equal(out, f if flag else -f)
