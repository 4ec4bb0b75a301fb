"""A program takes its arguments by position or by parameter name, bound as Python binds
them; every mistake is an ArgumentError that names the program and its parameters."""

from __future__ import annotations

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program.arguments import bind_arguments

I = sc.Dimension("I")
J = sc.Dimension("J")

F64 = sc.Field[[I, J], sc.float64]


@sc.field_operator
def lap_axpy(f: F64, alpha: sc.float64) -> F64:
    return f + alpha * (-4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1))


@sc.program
def smooth(f: F64, out: F64, alpha: sc.float64):
    lap_axpy(f, alpha, out=out)


@sc.field_operator
def copy(f: F64) -> F64:
    return f


@sc.program
def named_self(self: F64, out: F64):
    copy(self, out=out)


SIGNATURE = "smooth() takes 3 arguments (f, out, alpha)"
INTERNAL_NAMES = ("__call__", "run(", "run_program", "bind_arguments", "executor", "check(")


def _inputs() -> tuple[np.ndarray, float]:
    return np.random.default_rng(3).random((7, 6)), 0.25


def _positional() -> np.ndarray:
    f, alpha = _inputs()
    out = np.zeros_like(f)
    smooth(f, out, alpha)
    return out


@pytest.mark.parametrize(
    "call",
    [
        lambda f, out, alpha: smooth(f, out, alpha=alpha),
        lambda f, out, alpha: smooth(f, out=out, alpha=alpha),
        lambda f, out, alpha: smooth(f=f, out=out, alpha=alpha),
        lambda f, out, alpha: smooth(alpha=alpha, out=out, f=f),
        lambda f, out, alpha: smooth(f, alpha=alpha, out=out),
        lambda f, out, alpha: smooth(*(f,), **{"out": out, "alpha": alpha}),
    ],
    ids=["last", "two", "all", "reordered", "mixed-order", "unpacked"],
)
def test_keywords_give_the_positional_result(call):
    expected = _positional()
    f, alpha = _inputs()
    out = np.zeros_like(f)
    call(f, out, alpha)
    np.testing.assert_array_equal(out, expected, strict=True)
    assert expected[1:-1, 1:-1].any()


def test_a_parameter_named_self():
    f = np.arange(12.0).reshape(3, 4)
    out = np.zeros_like(f)
    named_self(self=f, out=out)
    np.testing.assert_array_equal(out, f)


def _assert_message(err: BaseException, *parts: str) -> None:
    message = str(err)
    for part in (SIGNATURE, *parts):
        assert part in message, f"{part!r} not in {message!r}"
    for internal in INTERNAL_NAMES:
        assert internal not in message, f"{internal!r} in {message!r}"


@pytest.mark.parametrize(
    ("positional", "keywords", "parts"),
    [
        (2, {"beta": 1.0}, ["unknown keyword argument 'beta'"]),
        (2, {"alhpa": 1.0}, ["unknown keyword argument 'alhpa'", "did you mean 'alpha'?"]),
        (3, {"f": None}, ["got 'f' twice", "as argument 1 by position and by keyword"]),
        (2, {"out": None, "alpha": 1.0}, ["got 'out' twice", "as argument 2"]),
        (1, {"out": None}, ["got 1 by position and 1 by keyword", "missing: 'alpha'"]),
        (0, {"alpha": 1.0}, ["got 0 by position and 1 by keyword", "missing: 'f', 'out'"]),
        (3, {"extra": 1.0, "alpha": 1.0}, ["unknown keyword argument 'extra'"]),
    ],
    ids=["unknown", "misspelt", "twice-first", "twice-second", "missing", "missing-two", "extra"],
)
def test_keyword_mistakes(positional, keywords, parts):
    f, alpha = _inputs()
    args = (f, np.zeros_like(f), alpha)[:positional]
    with pytest.raises(sc.ArgumentError) as info:
        smooth(*args, **keywords)
    _assert_message(info.value, *parts)
    assert isinstance(info.value, TypeError)


def test_too_many_positional_arguments_with_keywords():
    f, alpha = _inputs()
    with pytest.raises(sc.ArgumentError) as info:
        smooth(f, np.zeros_like(f), alpha, 1.0, alpha=alpha)
    _assert_message(info.value, "got 4 by position and 1 by keyword")


def test_unknown_keyword_with_no_close_parameter_has_no_suggestion():
    f, alpha = _inputs()
    with pytest.raises(sc.ArgumentError) as info:
        smooth(f, np.zeros_like(f), alpha, zzz=1)
    assert "did you mean" not in str(info.value)


def test_arguments_given_by_keyword_are_checked_like_positional_ones():
    f, _ = _inputs()
    with pytest.raises(sc.ArgumentError) as info:
        smooth(f, out=np.zeros_like(f), alpha=np.float32(0.5))
    assert "argument 'alpha' of smooth()" in str(info.value)
    assert "expected a float64 scalar" in str(info.value)
    with pytest.raises(sc.ArgumentError) as info:
        smooth(out=np.zeros_like(f), f=f.astype(np.float32), alpha=0.5)
    assert "argument 'f' of smooth()" in str(info.value)


def test_a_positional_call_is_not_rebound():
    args = (1, 2, 3)
    assert bind_arguments(smooth.ir, args, {}) is args


def test_binding_orders_by_parameter():
    assert bind_arguments(smooth.ir, (1,), {"alpha": 3, "out": 2}) == (1, 2, 3)
    assert bind_arguments(smooth.ir, (), {"alpha": 3, "f": 1, "out": 2}) == (1, 2, 3)


def test_keywords_through_the_embedded_backend():
    from stencilchain.program.embedded import run_embedded

    expected = _positional()
    f, alpha = _inputs()
    out = np.zeros_like(f)
    smooth.with_backend(run_embedded)(f, alpha=alpha, out=out)
    np.testing.assert_array_equal(out, expected, strict=True)
