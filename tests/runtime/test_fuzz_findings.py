"""What the cross-toolchain fuzzer (test_fuzz_toolchains.py) found, each as a plain test of
the smallest program that showed it, on the embedded executor and the CPU toolchains."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain as sc

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F = sc.Field[[I, J, K], sc.float64]
SHAPE = (3, 4, 5)
TOOLCHAINS = ["embedded", "gtfn_cpu", "dace_cpu"]


@pytest.fixture(params=TOOLCHAINS)
def run(request: pytest.FixtureRequest) -> Any:
    """A function running a program on the toolchain."""
    if request.param == "embedded":
        return lambda prog: prog
    toolchain = request.getfixturevalue(request.param)
    return lambda prog: prog.with_backend(toolchain)


# --- A field operator without parameters -----------------------------------------------
# Found: `tmp = fill()` in a program was a DefinitionError "field operator fill called
# with ; call it from a @program ..." (the program's trace was found only through its
# arguments), and so was `fill()` in another field operator. Fixed in
# stencilchain/program/field_operator.py (dispatch_call, tracing_program) and program.py.


@sc.field_operator
def fill() -> F:
    return sc.broadcast(1.5, (I, J, K))


@sc.field_operator
def add_fill(a: F) -> F:
    return a + fill()


@sc.field_operator
def shifted_sum(t: F, a: F) -> F:
    return t(I + 1) + a


@sc.program
def temporary_from_nothing(a: F, out: F, out2: F) -> None:
    t = fill()
    shifted_sum(t, a, out=out)
    add_fill(a, out=out2, domain={K: (1, None)})


def test_field_operator_without_parameters_makes_a_temporary(run: Any) -> None:
    a = np.random.default_rng(0).random(SHAPE)
    out, out2 = np.zeros(SHAPE), np.zeros(SHAPE)
    run(temporary_from_nothing)(a, out, out2)
    expected = np.zeros(SHAPE)
    expected[:-1] = 1.5 + a[:-1]
    np.testing.assert_array_equal(out, expected)
    expected2 = np.zeros(SHAPE)
    expected2[..., 1:] = a[..., 1:] + 1.5
    np.testing.assert_array_equal(out2, expected2)
