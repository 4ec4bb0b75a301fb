"""A field operator with a parameter over a dimension its result lacks runs on every CPU
toolchain like on the embedded executor.

Regression: without transforms, GTFN indexed every field parameter with the indices of the
result's dimensions ("'i_J' was not declared in this scope"). A field argument is now a
callable over its own parameter's dimensions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain as sc

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
FI = sc.Field[[I], sc.float64]
FJ = sc.Field[[J], sc.float64]
FIK = sc.Field[[I, K], sc.float64]


@sc.field_operator
def first(a: FI, b: FJ) -> FI:
    return a


@sc.program
def take_first(a: FI, b: FJ, out: FI) -> None:
    first(a, b, out=out)


@sc.field_operator
def passes_on(a: FI, b: FJ) -> FI:
    # b passed on, plain and shifted along the dimension the result lacks
    return first(a(I + 1), b) * 2.0 - first(a, b(J + 1))


@sc.program
def pass_on(a: FI, b: FJ, out: FI) -> None:
    passes_on(a, b, out=out)


@sc.field_operator
def first_2d(a: FIK, b: FJ) -> FIK:
    return a


@sc.field_operator
def scaled_first(a: FIK, b: FJ, s: sc.float64) -> FIK:
    return s * a(K - 1) + first_2d(a, b)


@sc.program
def two_dimensions(a: FIK, b: FJ, out: FIK, s: sc.float64) -> None:
    scaled_first(a, b, s, out=out)


TOOLCHAINS = ["embedded", "gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


def runner(program: sc.Program, name: str, request: pytest.FixtureRequest) -> Any:
    if name == "embedded":
        return program
    return program.with_backend(request.getfixturevalue(name))


def arguments(program: sc.Program, seed: int) -> list[Any]:
    """Random fields (each dimension its own size) and scalars for `program`."""
    rng = np.random.default_rng(seed)
    sizes = {I: 7, J: 4, K: 5}
    args: list[Any] = []
    for param in program.ir.params:
        if isinstance(param.type, sc.ScalarType):
            args.append(np.float64(0.25))
        else:
            args.append(rng.random(tuple(sizes[d] for d in param.type.dims)))
    return args


@pytest.mark.parametrize("toolchain", TOOLCHAINS)
@pytest.mark.parametrize("program", [take_first, pass_on, two_dimensions], ids=lambda p: p.ir.name)
def test_matches_the_embedded_executor(
    program: sc.Program, toolchain: str, request: pytest.FixtureRequest
) -> None:
    expected = arguments(program, seed=1)
    got = [np.copy(a) if isinstance(a, np.ndarray) else a for a in expected]
    program(*expected)
    runner(program, toolchain, request)(*got)
    for param, want, have in zip(program.ir.params, expected, got):
        np.testing.assert_array_equal(have, want, err_msg=param.name, strict=True)
