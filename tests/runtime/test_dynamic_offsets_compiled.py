"""Data-dependent vertical offsets on the GTFN toolchains (with and without transforms) and
the DaCe ones (auto-optimized or not): the program of tests/program/test_dynamic_offsets.py
against the embedded executor and the NumPy reference, C, Fortran and sliced layouts; an offset
that leaves the array is refused before the native call writes anything. The CUDA sources
of both families build."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stencilchain.containers import build_container
from stencilchain.errors import ArgumentError
from tests.program import test_dynamic_offsets as m
from tests.runtime.test_own_ranges_compiled import _layout

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


@pytest.fixture(scope="module", params=TOOLCHAINS)
def toolchain(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(request.param)


@pytest.mark.parametrize("layout", ["C", "F", "sliced"])
def test_reads_at_data_dependent_levels(toolchain: Any, layout: str) -> None:
    theta, off, off64 = (_layout(np.asarray(a), layout) for a in m.inputs(3))
    shape = (m.N_CELLS, m.N_K)
    expected = [_layout(np.full(shape, np.nan), layout) for _ in range(2)]
    m.steep_points(theta, off, off64, *expected)
    outs = [_layout(np.full(shape, np.nan), layout) for _ in range(2)]
    m.steep_points.with_backend(toolchain)(theta, off, off64, *outs)
    for got, want, reference in zip(outs, expected, m.references(theta, off, off64)):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(got, reference, rtol=1e-14, atol=1e-15)


def test_an_offset_leaving_the_array_is_refused(toolchain: Any) -> None:
    theta, off, off64 = m.inputs(4)
    off64[2, 0] = -1
    outs = [np.zeros((m.N_CELLS, m.N_K)) for _ in range(2)]
    with pytest.raises(ArgumentError, match=r"argument 'off64'.*at \(2, 0\) reads index -1"):
        m.steep_points.with_backend(toolchain)(theta, off, off64, *outs)
    assert all((o == 0).all() for o in outs)


@pytest.mark.parametrize("layout", ["C", "F", "sliced"])
def test_one_offset_field_along_two_dimensions(toolchain: Any, layout: str) -> None:
    theta, off = (_layout(a, layout) for a in m.two_ways_inputs(8))
    expected, out = np.zeros(theta.shape), _layout(np.zeros(theta.shape), layout)
    m.shifted_two_ways(theta, off, expected)
    m.shifted_two_ways.with_backend(toolchain)(theta, off, out)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(out, m.two_ways_reference(np.asarray(theta), np.asarray(off)))


def test_offsets_read_through_a_table(toolchain: Any) -> None:
    theta, off, c2e = m.mesh_inputs(6)
    expected, out = np.full_like(theta, np.nan), np.full_like(theta, np.nan)
    m.neighbour_offsets(theta, off, c2e, expected)
    m.neighbour_offsets.with_backend(toolchain)(theta, off, c2e, out)
    np.testing.assert_allclose(out, expected, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(out, m.mesh_reference(theta, off, c2e), rtol=1e-14, atol=1e-15)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.slow
def test_gpu_sources_build(session_cache_dir: Path) -> None:
    container = build_container({}, cache_dir=session_cache_dir, device="gpu")
    toolchains = [container.gtfn.toolchain()]
    if importlib.util.find_spec("dace") is not None:
        toolchains.append(container.dace.toolchain())
    for toolchain in toolchains:
        for program in (m.steep_points, m.neighbour_offsets):
            assert toolchain.compile(program).artifact.module_path.is_file()
