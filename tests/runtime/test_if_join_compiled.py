"""A scan with 40 `if`s one after another on its state (2**40 paths, traced once with the
`if`s joined where they end, program/if_join.py), on every CPU toolchain against a NumPy
reference. Each `if` binds its variables to values that do not read them, so the joined
expression grows linearly (the IR has no shared subexpressions: `y = where(c, y + 1, y)`
forty times would double it forty times)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain as sc

I, K = sc.Dimension("I"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]
STEPS = 40


@sc.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def levels(state, f: F, g: F, limit: sc.float64):  # type: ignore[no-untyped-def]
    x, _ = state
    x = x + f
    level = 0.0
    top = g
    for j in range(STEPS):  # 40 conditions on the state, each an `if` statement
        if x > limit * (j + 1):
            level = float(j + 1)
            top = g * float(j)
        elif j % 3 == 0:  # a Python condition: stays a Python `if`
            top = top + 0.0
    x = x - level * 0.125 if level > 20.0 else x * 0.5  # a conditional expression
    return (x, level + top)


@sc.program
def run(f: F, g: F, limit: sc.float64, x: F, level: F) -> None:
    levels(f, g, limit, out=(x, level))


def reference(f: np.ndarray, g: np.ndarray, limit: float) -> tuple[np.ndarray, np.ndarray]:
    xs, tops = np.empty_like(f), np.empty_like(f)
    for i in range(f.shape[0]):
        x = 0.0
        for k in range(f.shape[1]):
            x = x + f[i, k]
            level, top = 0.0, g[i, k]
            for j in range(STEPS):
                if x > limit * (j + 1):
                    level, top = float(j + 1), g[i, k] * float(j)
            x = x - level * 0.125 if level > 20.0 else x * 0.5
            xs[i, k], tops[i, k] = x, level + top
    return xs, tops


@pytest.mark.parametrize("toolchain_name", ["embedded", "gtfn_cpu", "dace_cpu"])
def test_a_scan_with_forty_ifs_on_its_state(
    toolchain_name: str, request: pytest.FixtureRequest
) -> None:
    program: Any = run
    if toolchain_name != "embedded":
        program = run.with_backend(request.getfixturevalue(toolchain_name))
    rng = np.random.default_rng(11)
    f = rng.uniform(0.0, 6.0, (5, 7))
    g = rng.uniform(0.0, 1.0, (5, 7))
    levels_seen = []
    for limit in (0.1, 0.5, 2.0):
        x, top = np.zeros_like(f), np.zeros_like(f)
        program(f, g, limit, x, top)
        want_x, want_top = reference(f, g, limit)
        np.testing.assert_array_equal(x, want_x)
        np.testing.assert_array_equal(top, want_top)
        levels_seen.append(np.floor(want_top))
    seen = np.concatenate(levels_seen)
    assert (seen > 20.0).any() and (seen < 20.0).any() and len(np.unique(seen)) > 10
