"""Integers at the edges on the GTFN toolchains (with and without transforms) and the DaCe
ones (auto-optimized or not): the program of tests/program/test_types_at_the_edges.py (an
index against int32 bounds, in int32 arithmetic, dtype constructors as literals and as
scalar arguments) against the embedded executor and the NumPy reference, C, F and sliced layouts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from tests.program import test_porting_errors as errors
from tests.program import test_types_at_the_edges as m
from tests.runtime.test_own_ranges_compiled import _layout

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


@pytest.fixture(scope="module", params=TOOLCHAINS)
def toolchain(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(request.param)


@pytest.mark.parametrize("layout", ["C", "F", "sliced"])
def test_indices_bounds_and_constructors(toolchain: Any, layout: str) -> None:
    embedded, expected = m.run(m.edges, 2)
    x, k_offset, x32 = (_layout(np.asarray(a), layout) for a in m.inputs(2))
    scalars = (sc.int32(1), sc.int32(4), sc.int32(5), sc.int32(3), sc.float64(0.25))
    outs = [np.full_like(x, np.nan), np.zeros_like(k_offset), np.full_like(x32, np.nan)]
    m.edges.with_backend(toolchain)(x, k_offset, x32, *scalars, *outs)
    for got, want, reference in zip(outs, embedded, expected):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, reference)


def test_an_annotated_scan_state_takes_its_init(toolchain: Any) -> None:
    """`state: sc.float64` with `init=0`: a float64 state from 0.0 on every toolchain."""
    x = np.random.default_rng(4).standard_normal(7)
    expected, out = np.zeros(7), np.zeros(7)
    errors.column_sums(x, expected)
    errors.column_sums.with_backend(toolchain)(x, out)
    np.testing.assert_allclose(out, expected, rtol=1e-14)
    np.testing.assert_allclose(out, np.cumsum(x), rtol=1e-14)
