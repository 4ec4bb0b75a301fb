"""Static parameters compiled on the CPU families: one specialisation per value set (made
at the first call, or by `compile`), the embedded executor's values and NumPy's, and the
compile-twice and wrong-specialisation ArgumentErrors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from tests.program.test_static_params import CASES, levels, reference
from tests.runtime.test_own_ranges_compiled import _layout


@pytest.fixture(
    scope="module", params=["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]
)
def toolchain(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(request.param)


@pytest.fixture(scope="module")
def run(toolchain: Any) -> Any:
    return levels.with_backend(toolchain)


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize(("n", "alpha", "top"), CASES)
def test_compiled_specialisations_match_embedded_and_numpy(
    run: Any, n: int, alpha: float, top: bool, kind: str
) -> None:
    f = np.random.default_rng(3).random((2, 3, 9))
    got = [_layout(np.zeros_like(f), kind) for _ in range(2)]
    embedded = [np.zeros_like(f) for _ in range(2)]
    run(_layout(f, kind), *got, n, alpha, top)
    levels(f, *embedded, n, alpha, top)
    for g, e, w in zip(got, embedded, reference(f, int(n), alpha, bool(top))):
        np.testing.assert_array_equal(g, e)
        np.testing.assert_array_equal(g, w)


def test_specialisations_live_side_by_side(run: Any) -> None:
    f = np.random.default_rng(4).random((2, 3, 9))
    for n, top in [(3, True), (5, False), (3, True), (5, False)]:
        got = [np.zeros_like(f) for _ in range(2)]
        run(f, *got, n, 1.0, top)
        for g, w in zip(got, reference(f, n, 1.0, top)):
            np.testing.assert_array_equal(g, w)


def test_compile_then_call_without_jit(toolchain: Any) -> None:
    ex = levels.with_backend(toolchain, jit=False)
    ex.compile(n=[3, 5], top=[True])
    with pytest.raises(sc.errors.ArgumentError, match="compiled for n=3, top=True already"):
        ex.compile(n=[3], top=[True])
    f = np.random.default_rng(5).random((2, 3, 9))
    out, d = np.zeros_like(f), np.zeros_like(f)
    with pytest.raises(sc.errors.ArgumentError) as info:
        ex(f, out, d, np.int32(4), 1.0, True)
    assert str(info.value) == (
        "levels() has no specialisation for n=4, top=True (compiled: n=3, top=True; n=5, "
        "top=True); compile it first, or use with_backend(..., jit=True)"
    )
    assert (out == 0).all() and (d == 0).all()
    ex.with_bound_args(n=5, top=True)(f, out, d, 2.0)
    for g, w in zip((out, d), reference(f, 5, 2.0, True)):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(sc.errors.ArgumentError, match="give the values of every static"):
        ex.compile(n=[7])
