"""A scan argument over fewer dimensions than the scan on the GTFN toolchains (with and
without transforms) and the DaCe ones (auto-optimized or not), C, Fortran and sliced layouts: the
programs of tests/program/test_scan_broadcast_args.py against the embedded executor and
the NumPy references (a Fortran-ordered scan walks blocks of columns)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.program import test_scan_broadcast_args as m
from tests.runtime.test_own_ranges_compiled import _layout

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


@pytest.fixture(scope="module", params=TOOLCHAINS)
def toolchain(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(request.param)


@pytest.mark.parametrize("layout", ["C", "F", "sliced"])
def test_a_cell_field_in_a_cell_k_scan(toolchain: Any, layout: str) -> None:
    rng = np.random.default_rng(11)
    rate, source = rng.random(70), _layout(rng.random((70, 5)), layout)
    outs = [_layout(np.full((70, 5), np.nan), layout) for _ in range(2)]
    embedded = [_layout(np.full((70, 5), np.nan), layout) for _ in range(2)]
    m.column_decay.with_backend(toolchain)(rate, source, *outs)
    m.column_decay(rate, source, *embedded)
    wants = (m.decay_reference(rate, source), m.decay_reference(rate, source, forward=False))
    for got, same, want in zip(outs, embedded, wants):
        np.testing.assert_array_equal(got, same)
        np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize("layout", ["C", "F", "sliced"])
def test_surface_and_profile_fields_in_an_ijk_scan(toolchain: Any, layout: str) -> None:
    rng = np.random.default_rng(12)
    surface = _layout(rng.random((9, 7)), layout)
    profile, f = rng.random(6), _layout(rng.random((9, 7, 6)), layout)
    outs = [_layout(np.full(f.shape, np.nan), layout) for _ in range(2)]
    embedded = [_layout(np.full(f.shape, np.nan), layout) for _ in range(2)]
    m.mixed_program.with_backend(toolchain)(surface, profile, f, *outs)
    m.mixed_program(surface, profile, f, *embedded)
    for got, same, want in zip(outs, embedded, m.mixed_reference(surface, profile, f)):
        np.testing.assert_allclose(got[:, :, :-1], same[:, :, :-1], rtol=1e-14)
        np.testing.assert_allclose(got[:, :, :-1], want, rtol=1e-13)


@pytest.mark.parametrize("program", [m.gt4py_program, m.gt4py_direct])
def test_values_annotated_float(toolchain: Any, program: Any) -> None:
    rng = np.random.default_rng(13)
    rate, source = rng.random(7), rng.random((7, 5))
    up = np.full((7, 5), np.nan)
    program.with_backend(toolchain)(rate, source, up)
    np.testing.assert_allclose(up, m.decay_reference(rate, source), rtol=1e-14)
