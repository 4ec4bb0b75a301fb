"""Tuples as values on run_gtfn_cpu and run_dace_cpu against the embedded executor:
`sc.astype` of a (nested) tuple, tuples as branches of `sc.where` and `sc.concat_where`,
in C and Fortran layouts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.program import test_tuple_values as cases

TOOLCHAINS = ["gtfn_cpu", "dace_cpu"]


def runner(fixture: str, request: pytest.FixtureRequest) -> Callable[[Any], Any]:
    toolchain = request.getfixturevalue(fixture)
    return lambda prog: prog.with_backend(toolchain)


def _layout(array: np.ndarray, kind: str) -> np.ndarray:
    return np.ascontiguousarray(array) if kind == "C" else np.asfortranarray(array)


@pytest.mark.parametrize("kind", ["C", "F"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_astype_of_tuples(fixture: str, kind: str, request: pytest.FixtureRequest) -> None:
    a, b, c = (_layout(v, kind) for v in cases._inputs())
    expected = [np.zeros(cases.SHAPE, np.float32) for _ in range(3)]
    got = [_layout(np.zeros(cases.SHAPE, np.float32), kind) for _ in range(3)]
    cases.astype_program(a, b, c, *expected)
    runner(fixture, request)(cases.astype_program)(a, b, c, *got)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6)


@pytest.mark.parametrize("kind", ["C", "F"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_tuple_branches(fixture: str, kind: str, request: pytest.FixtureRequest) -> None:
    a, b, c = (_layout(v, kind) for v in cases._inputs())
    top = np.random.default_rng(3).random(cases.SHAPE[1])
    expected = [np.full(cases.SHAPE, np.nan) for _ in range(6)]
    got = [_layout(np.full(cases.SHAPE, np.nan), kind) for _ in range(6)]
    cases.branches_program(a, b, c, top, *expected)
    runner(fixture, request)(cases.branches_program)(a, b, c, top, *got)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=1e-14)
        assert not np.isnan(e).any()
