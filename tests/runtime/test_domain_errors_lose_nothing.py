"""A DomainError in any call of a program is raised before any call runs, on every backend."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain as sc

I, J = sc.Dimension("I"), sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]


@sc.field_operator
def plus_one(f: F) -> F:
    return f + 1.0


@sc.field_operator
def right_neighbour(f: F) -> F:
    return f(I + 1)


@sc.program
def two_calls(f: F, a: F, b: F) -> None:
    plus_one(f, out=a)  # fine on any shape
    right_neighbour(a, out=b, domain={I: (0, 6)})  # reads I+1 up to 6: needs 7 rows


@pytest.fixture(params=["embedded", "gtfn_cpu", "dace_cpu"])
def run(request: pytest.FixtureRequest) -> Any:
    if request.param == "embedded":
        return two_calls
    return two_calls.with_backend(request.getfixturevalue(request.param))


def test_a_domain_error_in_a_later_call_leaves_every_output_as_it_was(run: Any) -> None:
    f = np.arange(30.0).reshape(6, 5)
    a = np.full_like(f, -7.0)
    b = np.full_like(f, -9.0)
    with pytest.raises(sc.DomainError, match="call of right_neighbour in two_calls"):
        run(f, a, b)
    assert (a == -7.0).all(), "the first call ran before the second call's domain was checked"
    assert (b == -9.0).all()


def test_the_same_program_runs_on_arrays_large_enough(run: Any) -> None:
    f = np.arange(35.0).reshape(7, 5)
    a, b = np.zeros_like(f), np.zeros_like(f)
    run(f, a, b)
    np.testing.assert_array_equal(a, f + 1.0)
    np.testing.assert_array_equal(b[:6], (f + 1.0)[1:7])
