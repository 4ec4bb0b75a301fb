"""A DaCe CPU library runs its OpenMP regions of one thread as plain calls
(steps/dace/serial_regions.cpp): the library defines the wrapper its regions are linked
to, and a program of several parallel maps computes what the embedded executor does both
below the bindings' OpenMP threshold (one thread: the plain calls) and above it (a team
of OMP_NUM_THREADS = 2, tests/conftest.py), on C- and Fortran-order arrays."""

from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dace")

import stencilchain as sc

I = sc.Dimension("I")
J = sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]


@sc.field_operator
def _lap(f: F) -> F:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


@sc.field_operator
def _update(f: F, lap: F, alpha: sc.float64) -> F:
    return f + alpha * lap(I + 1) - lap(J - 1)


@sc.program
def two_maps(f: F, lap: F, out: F, alpha: sc.float64) -> None:
    _lap(f, out=lap)
    _update(f, lap, alpha, out=out)


def test_the_library_defines_the_wrapper_of_its_regions(dace_cpu: Any) -> None:
    artifact = dace_cpu.compile(two_maps).artifact
    library = artifact.build_dir / artifact.metadata["dace_library"]
    loaded = ctypes.CDLL(str(library), mode=os.RTLD_LOCAL | os.RTLD_NOW)
    assert hasattr(loaded, "__wrap_GOMP_parallel")


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [(6, 7), (310, 260)])  # below and above 65536 points
def test_small_and_large_calls_compute_what_the_embedded_executor_does(
    dace_cpu: Any, shape: tuple[int, int], order: str
) -> None:
    rng = np.random.default_rng(sum(shape))
    f = np.asarray(rng.random(shape), order=order)
    expected = [np.full(shape, np.nan, order=order) for _ in range(2)]
    got = [np.full(shape, np.nan, order=order) for _ in range(2)]
    two_maps(f, *expected, 0.3)
    run = two_maps.with_backend(dace_cpu)
    for _ in range(3):  # the same arrays again: the cached entry and the same regions
        run(f, *got, 0.3)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e)
