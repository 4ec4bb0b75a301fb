"""Computed data-dependent offsets (`sc.as_offset(K, off + 1)`) on the GTFN toolchains (with
and without transforms) and the DaCe ones (auto-optimized or not): the programs of
tests/program/test_computed_offsets.py against the embedded executor and their NumPy
references, in C, Fortran and sliced layouts; an offset whose addend takes a read out of
the array is refused before the native call writes anything, unless it is in a branch of
`sc.where` not taken (ICON's masked steep points). The CUDA sources of both
families build (where nvcc is installed)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stencilchain.containers import build_container
from stencilchain.errors import ArgumentError
from tests.program import test_computed_offsets as m
from tests.runtime.test_own_ranges_compiled import _layout

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


@pytest.fixture(scope="module", params=TOOLCHAINS)
def toolchain(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(request.param)


@pytest.mark.parametrize("layout", ["C", "F", "sliced"])
def test_offsets_plus_or_minus_scalars(toolchain: Any, layout: str) -> None:
    theta, off, w = (_layout(a, layout) for a in m.inputs(11))
    expected = [np.full(theta.shape, np.nan) for _ in range(2)]
    m.computed(theta, off, w, np.int32(1), *expected)
    outs = [_layout(np.full(theta.shape, np.nan), layout) for _ in range(2)]
    m.computed.with_backend(toolchain)(theta, off, w, np.int32(1), *outs)
    references = m.references(np.asarray(theta), np.asarray(off), np.asarray(w), 1)
    for got, want, reference in zip(outs, expected, references):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_allclose(got, reference, rtol=1e-14, atol=1e-15)


def test_an_addend_taking_a_read_out_is_refused(toolchain: Any) -> None:
    theta, off, w = m.inputs(12)
    off[:] = np.maximum(off, 2 - np.arange(m.N_K))
    off[4, 0] = 1  # 1 + off - (k0 + 1) with k0 = 2 reads level -1
    outs = [np.zeros(theta.shape) for _ in range(2)]
    run = m.computed.with_backend(toolchain)
    with pytest.raises(
        ArgumentError, match=r"argument 'off'.*offset 1 -2 at \(4, 0\) reads index -1"
    ):
        run(theta, off, w, np.int32(2), *outs)
    assert all((o == 0).all() for o in outs)
    run(theta, off, w, np.int32(1), *outs)  # the same arrays with k0 = 1 stay inside
    np.testing.assert_allclose(outs[1], m.references(theta, off, w, 1)[1], rtol=1e-14)


@pytest.mark.parametrize("layout", ["C", "F"])
def test_icon_steep_points(toolchain: Any, layout: str) -> None:
    theta, vertoffset, vcoef, c2e = m.steep_inputs(13)
    theta, vertoffset, vcoef = (_layout(a, layout) for a in (theta, vertoffset, vcoef))
    expected = np.full((m.mesh.N_CELLS, m.mesh.N_K), np.nan)
    m.steep(theta, vertoffset, vcoef, c2e, expected)
    out = _layout(np.full(expected.shape, np.nan), layout)
    m.steep.with_backend(toolchain)(theta, vertoffset, vcoef, c2e, out)
    np.testing.assert_allclose(out, expected, rtol=1e-14, atol=1e-15)
    reference = m.steep_reference(np.asarray(theta), np.asarray(vertoffset), np.asarray(vcoef), c2e)
    np.testing.assert_allclose(out, reference, rtol=1e-14, atol=1e-15)
    vertoffset[2, 0, m.mesh.N_K - 1] = 0  # `+ 1` reads one past the column
    out[...] = 0
    with pytest.raises(ArgumentError, match=r"argument 'vertoffset'.*offset 0 \+1"):
        m.steep.with_backend(toolchain)(theta, vertoffset, vcoef, c2e, out)
    assert (out == 0).all()


@pytest.mark.parametrize("layout", ["C", "F"])
def test_a_read_in_a_branch_not_taken_may_leave_the_column(toolchain: Any, layout: str) -> None:
    """ICON's `where(zd_diffcoef != 0, ...)` around the steep points' reads, with
    `zd_vertoffset + 1` past the column where the branch is not taken: it runs, reads
    nothing outside the arrays (the C++ reads in the branch only where it is taken) and
    agrees with the embedded executor; where the branch is taken it is refused."""
    inputs = m.masked_inputs(16)
    theta, vertoffset, vcoef, coef, z = (_layout(a, layout) for a in inputs[:5])
    c2e = inputs[5]
    expected = np.full((m.mesh.N_CELLS, m.mesh.N_K), np.nan)
    m.masked_steep(theta, vertoffset, vcoef, coef, z, c2e, expected)
    out = _layout(np.full(expected.shape, np.nan), layout)
    run = m.masked_steep.with_backend(toolchain)
    run(theta, vertoffset, vcoef, coef, z, c2e, out)
    np.testing.assert_array_equal(out, expected)
    reference = m.masked_reference(*(np.asarray(a) for a in inputs))
    np.testing.assert_allclose(out, reference, rtol=1e-14, atol=1e-15)
    coef[1, m.mesh.N_K - 1] = 0.5
    out[...] = 0
    with pytest.raises(ArgumentError, match=r"argument 'vertoffset'.*branch of the read is taken"):
        run(theta, vertoffset, vcoef, coef, z, c2e, out)
    assert (out == 0).all()


def test_a_missing_neighbours_offset(toolchain: Any) -> None:
    theta, off, c2e = m.table_inputs(14)
    out = np.zeros_like(theta)
    with pytest.raises(ArgumentError, match=r"argument 'off'.*missing neighbour"):
        m.after_table.with_backend(toolchain)(theta, off, c2e, out)
    assert (out == 0).all()
    m.before_table.with_backend(toolchain)(theta, off, c2e, out)
    np.testing.assert_allclose(out, m.table_reference(theta, off, c2e, False), rtol=1e-15)


def test_half_levels(toolchain: Any) -> None:
    rng = np.random.default_rng(15)
    k = np.arange(m.N_K)
    off = rng.integers(-k, m.N_K - k, size=(m.N_CELLS, m.N_K)).astype(np.int32)
    off[1] = m.N_K - 1 - k  # the last half level
    theta_ic = rng.standard_normal((m.N_CELLS, m.N_K + 1))
    out = np.full((m.N_CELLS, m.N_K), np.nan)
    m.half_levels.with_backend(toolchain)(theta_ic, off, out)
    rows, at = np.arange(m.N_CELLS)[:, None], k + off
    np.testing.assert_allclose(out, theta_ic[rows, at] - theta_ic[rows, at + 1], rtol=1e-15)
    off[2, 3] = m.N_K - 3
    out[...] = 0
    with pytest.raises(ArgumentError, match=r"argument 'off'.*reads index 8 along K"):
        m.half_levels.with_backend(toolchain)(theta_ic, off, out)
    assert (out == 0).all()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.slow
def test_gpu_sources_build(session_cache_dir: Path) -> None:
    container = build_container({}, cache_dir=session_cache_dir, device="gpu")
    toolchains = [container.gtfn.toolchain()]
    if importlib.util.find_spec("dace") is not None:
        toolchains.append(container.dace.toolchain())
    for toolchain in toolchains:
        for program in (m.computed, m.steep, m.after_table, m.masked_steep):
            assert toolchain.compile(program).artifact.module_path.is_file()
