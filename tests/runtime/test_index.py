"""`sc.index(dim)`: the index along a dimension as an int64 field, on every CPU toolchain,
against NumPy (one program, one compilation per toolchain)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import ir

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F3 = sc.Field[[I, J, K], sc.float64]
N3 = sc.Field[[I, J, K], sc.int64]


@sc.field_operator
def top_or_rest(a: F3, b: F3) -> F3:
    return sc.where(sc.index(K) == 0, a, b)


@sc.field_operator
def codes(a: F3) -> N3:  # a is only there to give the call its sizes
    ijk = (I, J, K)  # fields over disjoint dimensions combine only after sc.broadcast
    return sc.broadcast(sc.index(I), ijk) * 100 + sc.broadcast(sc.index(J), ijk) * 10 + sc.index(K)


@sc.field_operator
def weighted_above(a: F3) -> F3:
    return a(K + 1) * sc.astype(sc.index(K)(K + 1), sc.float64)  # a shifted index


@sc.field_operator
def below(g: F3) -> F3:
    return g(K - 1)


@sc.field_operator
def through_a_call(a: F3) -> F3:
    return below(a + sc.astype(sc.index(K), sc.float64))  # the index of the point read


@sc.program
def levels(a: F3, b: F3, picked: F3, code: N3, weighted: F3, called: F3) -> None:
    top_or_rest(a, b, out=picked)
    codes(a, out=code)
    weighted_above(a, out=weighted, domain={K: (1, -1)})
    through_a_call(a, out=called)


@pytest.fixture(
    scope="module",
    params=["embedded", "gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"],
)
def run(request: pytest.FixtureRequest) -> Any:
    if request.param == "embedded":
        return levels
    return levels.with_backend(request.getfixturevalue(request.param))


@pytest.mark.parametrize("order", ["C", "F"])
def test_index_matches_numpy(run: Any, order: str) -> None:
    rng = np.random.default_rng(3)
    shape = (4, 3, 6)
    a = np.asarray(rng.random(shape), order=order)
    b = np.asarray(rng.random(shape), order=order)
    picked, weighted, called = (np.full(shape, -1.0, order=order) for _ in range(3))
    code = np.full(shape, -1, dtype=np.int64, order=order)
    run(a, b, picked, code, weighted, called)

    i, j, k = np.meshgrid(*(np.arange(n) for n in shape), indexing="ij")
    np.testing.assert_array_equal(picked, np.where(k == 0, a, b))
    np.testing.assert_array_equal(code, i * 100 + j * 10 + k)
    want = np.full(shape, -1.0)
    want[:, :, 1:-1] = a[:, :, 2:] * k[:, :, 2:]
    np.testing.assert_array_equal(weighted, want)
    want = np.full(shape, -1.0)
    want[:, :, 1:] = a[:, :, :-1] + k[:, :, :-1]
    np.testing.assert_array_equal(called, want)


def test_index_is_an_int64_field_over_its_dimension() -> None:
    assert sc.index(K).expr == ir.Index(K, ir.FieldType((K,), sc.int64))
    assert levels.ir.field_operator("codes").return_type == ir.FieldType((I, J, K), sc.int64)
    assert "index(K)" in str(levels.ir)
