"""A scan in a `sc.concat_where` branch on its axis starts where the branch starts (and one
written in several places from the domain's first level), on every CPU toolchain in C,
Fortran and sliced layouts: the embedded executor's values and NumPy's (docs/adr/0024)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.program.test_scans_in_concat_where import references, sweeps, written_twice
from tests.runtime.test_own_ranges_compiled import _layout

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


@pytest.fixture(scope="module", params=TOOLCHAINS)
def run(request: pytest.FixtureRequest) -> Any:
    return sweeps.with_backend(request.getfixturevalue(request.param))


@pytest.mark.parametrize("order", ["C", "F", "sliced"])
@pytest.mark.parametrize("ks", [0, 4, 7, -3])
def test_compiled_scans_in_branches_match_embedded_and_numpy(run: Any, order: str, ks: int) -> None:
    f = _layout(np.random.default_rng(4).random((3, 2, 7)), order)
    got = [_layout(np.zeros(f.shape), order) for _ in range(5)]
    embedded = [np.zeros_like(f) for _ in range(5)]
    run(f, *got, np.int32(ks))
    sweeps(f, *embedded, np.int32(ks))
    for g, e, w in zip(got, embedded, references(f, ks)):
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=0)
        np.testing.assert_allclose(g, w, rtol=1e-14, atol=0)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_a_scan_written_in_several_places(fixture: str, request: pytest.FixtureRequest) -> None:
    f = np.random.default_rng(5).random((3, 2, 7))
    got, embedded = np.zeros_like(f), np.zeros_like(f)
    written_twice.with_backend(request.getfixturevalue(fixture))(f, got)
    written_twice(f, embedded)
    np.testing.assert_allclose(got, embedded, rtol=1e-14, atol=0)
