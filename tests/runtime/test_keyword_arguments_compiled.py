"""Keyword arguments reach compiled programs as they reach the embedded executor: bound by
parameter name, with the same checks and the same messages."""

from __future__ import annotations

import numpy as np
import pytest

import stencilchain as sc

I, J = sc.Dimension("I"), sc.Dimension("J")
F64 = sc.Field[[I, J], sc.float64]


@sc.field_operator
def axpy(f: F64, g: F64, alpha: sc.float64) -> F64:
    return alpha * f(I + 1) + g


@sc.program
def combine(f: F64, g: F64, out: F64, alpha: sc.float64) -> None:
    axpy(f, g, alpha, out=out)


TOOLCHAINS = ["gtfn_cpu", "dace_cpu"]


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    return rng.random((9, 7)), rng.random((9, 7))


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_keywords_equal_positions(fixture: str, request: pytest.FixtureRequest) -> None:
    toolchain = request.getfixturevalue(fixture)
    f, g = inputs()
    expected = np.zeros_like(f)
    combine(f, g, expected, 0.5)
    run = combine.with_backend(toolchain)
    for args, kwargs in (
        ((f,), {"g": g, "out": None, "alpha": 0.5}),
        ((), {"alpha": 0.5, "out": None, "g": g, "f": f}),
        ((f, g), {"out": None, "alpha": 0.5}),
    ):
        out = np.zeros_like(f)
        run(*args, **{k: (out if k == "out" else v) for k, v in kwargs.items()})
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"outt": "OUT", "alpha": 0.5}, r"unknown keyword argument 'outt'; did you mean 'out'"),
        ({"f": "F", "out": "OUT", "alpha": 0.5}, r"got 'f' twice"),
        ({"out": "OUT"}, r"missing: 'alpha'"),
    ],
)
def test_keyword_mistakes_say_what_the_embedded_executor_says(
    fixture: str, kwargs: dict[str, object], message: str, request: pytest.FixtureRequest
) -> None:
    toolchain = request.getfixturevalue(fixture)
    f, g = inputs()
    out = np.zeros_like(f)
    given = {
        k: {"F": f, "OUT": out}.get(v, v) if isinstance(v, str) else v for k, v in kwargs.items()
    }
    with pytest.raises(sc.ArgumentError, match=message) as embedded:
        combine(f, g, **given)
    with pytest.raises(sc.ArgumentError, match=message) as compiled:
        combine.with_backend(toolchain)(f, g, **given)
    assert str(compiled.value) == str(embedded.value)
    assert "combine() takes 4 arguments (f, g, out, alpha)" in str(compiled.value)
    assert not out.any()  # nothing ran
