"""The BoundEntry (stencilchain/steps/cpp/module_entry.h) runs two kinds of calls that its
native check used to hand to Python without a Python frame:

- field values (`sc.as_field`) over the parameter's dimensions, starting where the program
  runs them: each is replaced by its array in C;
- fields over their own ranges of shapes it has run before (up to four sets of shapes):
  the entry of the program specialised for them is called directly.

Every other call still goes to the explain hook and gives what it gave. Each case compares
the results with a NumPy reference, or the error with the embedded executor's."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.runtime.toolchain import BoundProgram, Toolchain

I, J = sc.Dimension("I"), sc.Dimension("J")
IHalf = sc.staggered(I)
F = sc.Field[[I, J], sc.float64]


@sc.field_operator
def add(a: F, b: F) -> F:
    return a + 2.0 * b


@sc.program
def added(a: F, b: F, out: F) -> None:
    add(a, b, out=out)


TOOLCHAINS = ["gtfn_cpu", "dace_cpu"]


def _bound(fixture: str, request: pytest.FixtureRequest) -> BoundProgram:
    toolchain: Toolchain = request.getfixturevalue(fixture)
    run = added.with_backend(toolchain)
    assert isinstance(run, BoundProgram)
    return run


def python_frames(call: Callable[..., Any], *args: Any, **kwargs: Any) -> list[str]:
    """The Python functions that run during `call(*args, **kwargs)`."""
    frames: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            frames.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    sys.setprofile(profile)
    try:
        call(*args, **kwargs)
    finally:
        sys.setprofile(None)
    return frames


def _inputs(n: int, m: int, longer: int = 0) -> Iterator[np.ndarray]:
    rng = np.random.default_rng(n * 31 + m)
    yield rng.random((n + longer, m))
    yield rng.random((n, m))


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_field_values_run_without_a_python_frame(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    run = _bound(fixture, request)
    a, b = _inputs(5, 4)
    out = np.zeros((5, 4))
    run(a, b, out)  # compiled: the BoundEntry's path
    assert type(run.func).__name__ == "BoundEntry"
    out[:] = 0.0
    fa, fb, fout = (sc.as_field((I, J), x) for x in (a, b, out))
    assert python_frames(run, fa, fb, fout) == []
    np.testing.assert_array_equal(out, a + 2.0 * b)
    out[:] = 0.0
    assert python_frames(run, a, b=fb, out=fout) == []  # keywords too
    np.testing.assert_array_equal(out, a + 2.0 * b)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_other_field_values_take_the_explain_hook(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    run = _bound(fixture, request)
    a, b = _inputs(5, 4)
    out = np.zeros((5, 4))
    run(a, b, out)
    # over the staggered counterpart, which the parameter accepts: run by the hook
    staggered = sc.as_field((IHalf, J), a)
    assert python_frames(run, staggered, b, out) != []
    np.testing.assert_array_equal(out, a + 2.0 * b)
    # starting at 1 along I: over its own range, `out` over [1, 5) only
    out[:] = -1.0
    later = sc.as_field((I, J), a[:4], start={I: 1})
    run(later, sc.as_field((I, J), b, start={}), out)
    expected = np.full((5, 4), -1.0)
    expected[1:] = a[:4] + 2.0 * b[1:]
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
@pytest.mark.parametrize(
    "bad",
    [
        lambda a, b, out: (sc.as_field((J, I), a.T.copy()), b, out),  # transposed dims
        lambda a, b, out: (sc.as_field((I, J), a.astype(np.float32)), b, out),  # a dtype
        lambda a, b, out: (a, b, sc.as_field((I,), out[:, 0])),  # too few dims
        lambda a, b, out: (a, b, sc.as_field((I, J), a)),  # an output that is an input
    ],
)
def test_rejected_field_values_say_what_the_embedded_executor_says(
    fixture: str, bad: Callable[..., tuple[Any, ...]], request: pytest.FixtureRequest
) -> None:
    run = _bound(fixture, request)
    a, b = _inputs(5, 4)
    out = np.zeros((5, 4))
    run(a, b, out)
    out[:] = 0.0
    args = bad(a, b, out)
    with pytest.raises(sc.ArgumentError) as embedded:
        added(*args)
    with pytest.raises(sc.ArgumentError) as compiled:
        run(*args)
    assert str(compiled.value) == str(embedded.value)
    np.testing.assert_array_equal(out, 0.0)  # nothing written


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_calls_over_own_ranges_of_remembered_shapes_run_without_a_python_frame(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    run = _bound(fixture, request)
    a, b = _inputs(5, 4)
    run(a, b, np.zeros((5, 4)))
    shapes = [(n, 4) for n in range(3, 9)]  # six: more than the four it remembers
    for n, m in shapes:  # `a` one point longer along I: the program specialised for it
        a, b = _inputs(n, m, longer=1)
        out = np.zeros((n, m))
        run(a, b, out)
        np.testing.assert_array_equal(out, a[:n] + 2.0 * b)
    for n, m in reversed(shapes[2:]):  # the last four: remembered
        a, b = _inputs(n, m, longer=1)
        out = np.zeros((n, m))
        assert python_frames(run, a, b, out) == [], (n, m)
        np.testing.assert_array_equal(out, a[:n] + 2.0 * b)
    n, m = shapes[0]  # forgotten: run through the explain hook, with the same result
    a, b = _inputs(n, m, longer=1)
    out = np.zeros((n, m))
    assert python_frames(run, a, b, out) != []
    np.testing.assert_array_equal(out, a[:n] + 2.0 * b)
    # remembered again, now through field values too
    fa, fb, fout = (sc.as_field((I, J), x) for x in (a, b, out))
    out[:] = 0.0
    assert python_frames(run, fa, fb, fout) == []
    np.testing.assert_array_equal(out, a[:n] + 2.0 * b)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_rejected_calls_of_remembered_shapes_say_what_the_embedded_executor_says(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    run = _bound(fixture, request)
    a, b = _inputs(6, 3, longer=1)
    out = np.zeros((6, 3))
    run(a, b, out)
    run(a, b, out)  # remembered
    read_only = np.zeros((6, 3))
    read_only.flags.writeable = False
    for args in [
        (a, b.astype(np.float32), out),  # a dtype
        (a, b, read_only),  # a read-only output
        (a, b, a[:6]),  # an output that shares memory with an input
    ]:
        with pytest.raises(sc.ArgumentError) as embedded:
            added(*args)
        with pytest.raises(sc.ArgumentError) as compiled:
            run(*args)
        assert str(compiled.value) == str(embedded.value)
