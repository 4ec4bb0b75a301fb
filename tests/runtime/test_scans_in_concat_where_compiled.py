"""A scan in a `sc.concat_where` branch on its axis starts where the branch starts, on every
CPU toolchain: the embedded executor's values and NumPy's (docs/adr/0024)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.program.test_scans_in_concat_where import references, sweeps

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


@pytest.fixture(scope="module", params=TOOLCHAINS)
def run(request: pytest.FixtureRequest) -> Any:
    return sweeps.with_backend(request.getfixturevalue(request.param))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("ks", [0, 4, 7, -3])
def test_compiled_scans_in_branches_match_embedded_and_numpy(run: Any, order: str, ks: int) -> None:
    f = np.asarray(np.random.default_rng(4).random((3, 2, 7)), order=order)
    got = [np.zeros_like(f, order=order) for _ in range(5)]
    embedded = [np.zeros_like(f) for _ in range(5)]
    run(f, *got, np.int32(ks))
    sweeps(f, *embedded, np.int32(ks))
    for g, e, w in zip(got, embedded, references(f, ks)):
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=0)
        np.testing.assert_allclose(g, w, rtol=1e-14, atol=0)
