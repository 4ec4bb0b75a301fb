"""Staggered dimensions and half shifts on every CPU toolchain, in C, Fortran and sliced
layouts, equal to the embedded executor (which tests/program/test_staggered.py checks
against NumPy): gt4py's staggered feature tests and ICON-style half levels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from tests.program import test_staggered as cases
from tests.runtime.test_own_ranges_compiled import _both, _layout

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]
SIZE, IHalf = cases.SIZE, cases.IHalf


def _cartesian() -> list[tuple[Any, Callable[[], tuple[Any, ...]], tuple[int, ...]]]:
    a = cases._ints(SIZE)
    b = np.random.default_rng(5).integers(0, 9, (SIZE, 7)).astype(np.int32)

    def zeros(n: int = SIZE) -> np.ndarray:
        return np.full(n, -7, np.int32)

    def origin(data: np.ndarray) -> sc.FieldValue:
        return sc.as_field([IHalf], data.copy(), start={IHalf: 1})

    return [
        (cases.copy_half_field, lambda: (a.copy(), zeros()), (1,)),
        (cases.half_shift_plus, lambda: (a.copy(), zeros()), (1,)),
        (cases.half_shift_back, lambda: (a.copy(), zeros()), (1,)),
        (cases.half_shift_plus1, lambda: (origin(a), zeros()), (1,)),
        (cases.half_shift_minus, lambda: (a.copy(), origin(zeros())), (1,)),
        (cases.half_shift_minus, lambda: (a.copy(), zeros()), (1,)),
        # gt4py's test_cartesian_half_shift_minus: `a` over I (-1, size - 1)
        (
            cases.half_shift_minus,
            lambda: (sc.as_field([cases.I], a.copy(), start={cases.I: -1}), zeros()),
            (1,),
        ),
        (cases.half_shift_half2center, lambda: (origin(a), zeros()), (1,)),
        (cases.half_shift_vertical, lambda: (a.copy(), zeros()), (1,)),
        (cases.half_shift_multi_dim, lambda: (b.copy(), np.zeros_like(b)), (1,)),
    ]


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_gt4py_staggered_cases(fixture: str, request: pytest.FixtureRequest) -> None:
    toolchain = request.getfixturevalue(fixture)
    for program, make, outs in _cartesian():
        _both(program.with_backend(toolchain), program, make, outs)


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_half_levels(fixture: str, kind: str, request: pytest.FixtureRequest) -> None:
    toolchain = request.getfixturevalue(fixture)
    theta, w, dz = cases.levels()

    def half() -> np.ndarray:
        return _layout(np.full_like(w, -7.0), kind)

    def full() -> np.ndarray:
        return _layout(np.full_like(theta, -7.0), kind)

    runs: list[tuple[Any, Callable[[], tuple[Any, ...]], tuple[int, ...]]] = [
        (cases.interpolate_to_half_levels, lambda: (_layout(theta, kind), half()), (1,)),
        (
            cases.interpolate_to_given_half_levels,
            lambda: (_layout(theta, kind), half(), np.int32(cases.NLEV)),
            (1,),
        ),
        (cases.divergence, lambda: (_layout(w, kind), _layout(dz, kind), full()), (2,)),
        (cases.half_levels_with_boundaries, lambda: (_layout(theta, kind), half()), (1,)),
        (
            cases.through_a_half_level_temporary,
            lambda: (_layout(theta, kind), _layout(dz, kind), full()),
            (2,),
        ),
        (cases.index_on_half_levels, lambda: (_layout(theta, kind), half()), (1,)),
    ]
    for program, make, outs in runs:
        _both(program.with_backend(toolchain), program, make, outs)
