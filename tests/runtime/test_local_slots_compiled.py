"""A slot of a local field, `w[E2C2VDim(0)]`, on the GTFN toolchains (with and without
transforms) and the DaCe ones (auto-optimized or not): the programs of
tests/program/test_local_slots.py against the embedded executor and the NumPy reference, on
a bounded mesh with skip values, int32 and int64 tables, C, Fortran and sliced layouts. The CUDA
sources of both families build."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stencilchain.containers import build_container
from tests.program import test_local_slots as m
from tests.program import test_types_at_the_edges as edges
from tests.runtime.test_own_ranges_compiled import _layout

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


@pytest.fixture(scope="module", params=TOOLCHAINS)
def toolchain(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(request.param)


@pytest.mark.parametrize("layout", ["C", "F", "sliced"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_slots_of_local_fields(toolchain: Any, layout: str, index_dtype: type) -> None:
    """Every field (the local field `w` too) in the layout; the table stays C-ordered."""
    u, w, table = m.mesh_inputs(3)
    u, w = _layout(u, layout), _layout(w, layout)
    table = table.astype(index_dtype)
    program = m.rhombus_terms if index_dtype is np.int32 else m.rhombus_terms64
    expected = [_layout(np.full((len(table), 3), np.nan), layout) for _ in range(2)]
    program(u, w, table, *expected)
    outs = [_layout(np.full((len(table), 3), np.nan), layout) for _ in range(2)]
    program.with_backend(toolchain)(u, w, table, *outs)
    for got, want, reference in zip(outs, expected, m.rhombus_reference(u, w, table)):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(got, reference, rtol=1e-14, atol=1e-15)


def test_slots_read_in_a_called_field_operator(toolchain: Any) -> None:
    """GTFN without transforms keeps the callee a function with a local-field parameter."""
    u, w, table = m.mesh_inputs(6)
    u = u[:, 0].copy()
    expected, out = np.full(len(table), np.nan), np.full(len(table), np.nan)
    m.slots_in_a_callee(u, w, table, expected)
    m.slots_in_a_callee.with_backend(toolchain)(u, w, table, out)
    np.testing.assert_allclose(out, expected, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(out, m.callee_reference(u, w, table), rtol=1e-14, atol=1e-15)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.slow
def test_gpu_sources_build(session_cache_dir: Path) -> None:
    """The CUDA sources of slots and of indices against int32 bounds build with nvcc."""
    programs = (m.rhombus_terms, edges.edges)
    container = build_container({}, cache_dir=session_cache_dir, device="gpu")
    toolchains = [container.gtfn.toolchain()]
    if importlib.util.find_spec("dace") is not None:
        toolchains.append(container.dace.toolchain())
    for toolchain in toolchains:
        for program in programs:
            assert toolchain.compile(program).artifact.module_path.is_file()
