"""Domain bounds counted from one field's own range (`sc.start_of`, `sc.end_of`; docs/adr/
0052) on every CPU toolchain, C and Fortran order, against NumPy references written here:
the bound is the field's start or end for arrays of one size (the program as traced) and
for fields over their own ranges (a specialisation), and a domain whose reads leave an
argument's range is a DomainError before anything is written."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain as sc

I, K = sc.Dimension("I"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]
NI, NK = 5, 7
TOOLCHAINS = ["embedded", "gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu"]


@sc.field_operator
def up_minus(a: F, b: F) -> F:
    return a(K + 1) - b


@sc.program
def to_the_end_of_out(a: F, b: F, out: F) -> None:
    up_minus(a, b, out=out, domain={K: (1, sc.end_of(out, K))})


@sc.field_operator
def copy(f: F) -> F:
    return f


@sc.program
def inside_out(a: F, out: F) -> None:
    copy(a, out=out, domain={K: (sc.start_of(out, K) + 1, sc.end_of(out, K) - 1)})


def run(program: Any, name: str, request: pytest.FixtureRequest) -> Any:
    return program if name == "embedded" else program.with_backend(request.getfixturevalue(name))


def field(seed: int, order: str, nk: int) -> np.ndarray:
    return np.asarray(np.random.default_rng(seed).normal(size=(NI, nk)), order=order)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_the_end_of_the_output(name: str, order: str, request: pytest.FixtureRequest) -> None:
    program = run(to_the_end_of_out, name, request)
    # a one level longer than b and out: levels 1 to the end of out
    a, b, out = field(1, order, NK + 1), field(2, order, NK), np.zeros((NI, NK), order=order)
    program(a, b, out)
    want = np.zeros((NI, NK))
    want[:, 1:] = a[:, 2:] - b[:, 1:]
    np.testing.assert_array_equal(out, want)
    # fields of one size: the end is the array's, where a is read past its end
    a, out = field(3, order, NK), np.full((NI, NK), -7.0, order=order)
    with pytest.raises(sc.DomainError, match=r"domain K: \[1, 7\) with reads from K-0 to K\+1"):
        program(a, b, out)
    # out longer than b: b is read past its own end
    a, out = field(4, order, NK + 2), np.full((NI, NK + 1), -7.0, order=order)
    with pytest.raises(sc.DomainError, match=r"argument 'b' leaves its range \[0, 7\) along K"):
        program(a, b, out)
    assert (out == -7.0).all()  # nothing written
    # and of one size again, with a longer: as the first call
    a, out = field(5, order, NK + 1), np.zeros((NI, NK), order=order)
    program(a, b, out)
    want[:, 1:] = a[:, 2:] - b[:, 1:]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_the_start_and_end_of_an_output(
    name: str, order: str, request: pytest.FixtureRequest
) -> None:
    program = run(inside_out, name, request)
    a = field(6, order, 12)
    data = np.full((NI, 8), -7.0, order=order)
    program(a, data)  # out over [0, 8): the domain is [1, 7)
    want = np.full((NI, 8), -7.0)
    want[:, 1:7] = a[:, 1:7]
    np.testing.assert_array_equal(data, want)
    data = np.full((NI, 8), -7.0, order=order)
    program(a, sc.as_field((I, K), data, start={K: 2}))  # out over [2, 10): [3, 9)
    want = np.full((NI, 8), -7.0)
    want[:, 1:7] = a[:, 3:9]
    np.testing.assert_array_equal(data, want)
