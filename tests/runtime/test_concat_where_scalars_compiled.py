"""`sc.concat_where` conditions on scalar parameters and expressions of them, compiled on
every CPU toolchain: the values of the embedded executor and of NumPy, in C and Fortran
order, and the same DomainError where a branch reads outside where a scalar selects it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from tests.program.test_concat_where_scalars import (
    CASES,
    columns,
    explicit,
    lateral_reference,
    split_reference,
)
from tests.runtime.test_own_ranges_compiled import _layout

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


@pytest.fixture(scope="module", params=TOOLCHAINS)
def toolchain(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(request.param)


@pytest.mark.parametrize("order", ["C", "F", "sliced"])
@pytest.mark.parametrize(("ks", "n", "m", "start"), CASES)
def test_compiled_scalar_conditions_match_embedded_and_numpy(
    toolchain: Any, order: str, ks: int, n: int, m: int, start: int
) -> None:
    f = _layout(np.random.default_rng(8).random((6, 3, 9)), order)
    args = (np.int32(ks), np.int32(n), np.int32(m), np.int64(start))
    got = [_layout(np.zeros(f.shape), order) for _ in range(2)]
    embedded = [np.zeros_like(f) for _ in range(2)]
    columns.with_backend(toolchain)(f, *got, *args)
    columns(f, *embedded, *args)
    for g, e in zip(got, embedded):
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(got[0], split_reference(f, ks, n, m, 0, 9))
    np.testing.assert_array_equal(got[1], lateral_reference(f, start))


@pytest.mark.parametrize(("ks", "n"), [(3, 2), (-2, -5)])
def test_compiled_argument_expressions_in_conditions(toolchain: Any, ks: int, n: int) -> None:
    f = np.random.default_rng(9).random((2, 2, 9))
    got, embedded = np.zeros_like(f), np.zeros_like(f)
    explicit.with_backend(toolchain)(f, got, np.int32(ks), np.int32(n))
    explicit(f, embedded, np.int32(ks), np.int32(n))
    np.testing.assert_array_equal(got, embedded)
    np.testing.assert_array_equal(got, split_reference(f, ks, n - 1, n + 2, 1, 8))


@pytest.mark.parametrize("ks", [0, 10, -9])
def test_a_branch_read_outside_where_a_scalar_selects_it_is_the_embedded_domain_error(
    toolchain: Any, ks: int
) -> None:
    f = np.ones((6, 3, 9))
    errors = []
    for program in (columns.with_backend(toolchain), columns):
        out, side = np.full_like(f, -3.0), np.full_like(f, -3.0)
        with pytest.raises(sc.DomainError) as info:
            program(f, out, side, np.int32(ks), np.int32(0), np.int32(0), np.int64(2))
        assert (out == -3.0).all() and (side == -3.0).all()
        errors.append(str(info.value))
    assert "in a concat_where branch selected where K is in" in errors[0]
    assert errors[0] == errors[1]
