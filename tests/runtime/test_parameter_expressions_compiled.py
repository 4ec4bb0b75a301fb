"""Arithmetic on a program's scalar parameters (bounds `vertical_end - 1`, `upper // 2`,
`2 * j - 1`; call arguments `j - 2`, `alpha * 2.0`) compiled on every CPU family: the same
values as the embedded executor and the NumPy reference, the same DomainError."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.program.test_parameter_expressions import CASES, levels, reference
from tests.runtime.test_own_ranges_compiled import _layout


@pytest.fixture(
    scope="module", params=["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]
)
def run(request: pytest.FixtureRequest) -> Any:
    return levels.with_backend(request.getfixturevalue(request.param))


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize(("ve", "upper", "j", "alpha"), [*CASES, (-3, 8, 3, -1.0)])
def test_compiled_expressions_of_parameters_match_embedded_and_numpy(
    run: Any, ve: int, upper: int, j: int, alpha: float, kind: str
) -> None:
    f = np.random.default_rng(11).random((4, 3, 10))
    args = (np.int32(ve), np.int64(upper), np.int64(j), alpha)
    got = [_layout(np.full_like(f, 0.0), kind) for _ in range(3)]
    embedded = [np.full_like(f, 0.0) for _ in range(3)]
    run(_layout(f, kind), *got, *args)
    levels(f, *embedded, *args)
    for g, e, w in zip(got, embedded, reference(f, ve, upper, j, alpha)):
        np.testing.assert_array_equal(g, e)
        np.testing.assert_allclose(g, w, rtol=1e-15, atol=0)


@pytest.mark.parametrize(
    ("ve", "upper", "j", "message"),
    [
        (1, 9, 4, "call of vdiff in levels(): domain K: [0, 1) with reads from K-1"),
        (5, 21, 4, "call of vdiff in levels(): domain K: [10, 20) with reads from K-1"),
        (5, 9, 6, "domain K: [1, 11) with reads from K-0 to K+0 leaves the array of size 10"),
    ],
)
def test_an_expression_bound_outside_the_array_is_the_embedded_domain_error(
    run: Any, ve: int, upper: int, j: int, message: str
) -> None:
    import stencilchain as sc

    f = np.ones((2, 2, 10))
    args = (np.int32(ve), np.int64(upper), np.int64(j), 1.0)
    errors = []
    for program in (run, levels):
        outs = [np.full_like(f, -3.0) for _ in range(3)]
        with pytest.raises(sc.DomainError) as info:
            program(f, *outs, *args)
        assert all((out == -3.0).all() for out in outs)
        errors.append(str(info.value))
    assert message in errors[0]
    assert errors[0] == errors[1]
