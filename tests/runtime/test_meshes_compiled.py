"""Unstructured meshes on the GTFN toolchains (with and without transforms) and the DaCe
ones (auto-optimized or not): every program of tests/program/test_meshes_embedded.py
against the embedded executor, with int32 and int64 tables, skip values, C and Fortran
layouts of (Cell, K) fields; the tables' entries checked before anything runs. The CUDA
sources of both families build."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain import meshes
from stencilchain.containers import build_container
from tests.program import test_meshes_embedded as m

K = m.K

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


@pytest.fixture(scope="module", params=TOOLCHAINS)
def toolchain(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(request.param)


def both(program: sc.Program, toolchain: Any, *args: Any, outs: list[np.ndarray]) -> None:
    """Run `program` embedded and compiled on copies of `outs`; assert equal results."""
    expected = [o.copy() for o in outs]
    program(*args, *expected)
    program.with_backend(toolchain)(*args, *outs)
    for k, (got, want) in enumerate(zip(outs, expected)):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15, err_msg=f"output {k}")


def test_reads_and_reductions(toolchain: Any) -> None:
    rng = np.random.default_rng(1)
    c2e, e2v = m.tables(rng)
    e, v = rng.standard_normal(m.N_EDGES), rng.standard_normal(m.N_VERTICES)
    w = rng.standard_normal((m.N_CELLS, 3))
    outs = [np.full(m.N_CELLS, np.nan) for _ in range(5)]
    both(m.reductions, toolchain, e, v, w, c2e, e2v, outs=outs)
    assert np.isinf(outs[1][4]) and np.isinf(outs[2][4])  # a cell without neighbours


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_mesh_columns_with_vertical_shifts_and_scans(
    toolchain: Any, dtype: type, layout: str
) -> None:
    rng = np.random.default_rng(2)
    c2e, _ = m.tables(rng, dtype)
    f = np.asarray(rng.standard_normal((m.N_EDGES, m.N_K)), order=layout)
    outs = [np.asarray(np.zeros((m.N_CELLS, m.N_K)), order=layout) for _ in range(2)]
    program = m.mesh_column if dtype is np.int32 else m.mesh_column64
    both(program, toolchain, f, c2e, outs=outs)


def test_a_temporary_over_edges_is_gathered(toolchain: Any) -> None:
    rng = np.random.default_rng(3)
    c2e, e2v = m.tables(rng)
    v = rng.standard_normal(m.N_VERTICES)
    both(
        m.through_a_temporary,
        toolchain,
        v,
        c2e,
        e2v,
        np.zeros(m.N_EDGES),
        outs=[np.zeros(m.N_CELLS)],
    )


@pytest.mark.parametrize("kind", ["torus", "rectangle"])
def test_diffusion_on_the_meshes(toolchain: Any, kind: str) -> None:
    mesh = meshes.torus(9, 7) if kind == "torus" else meshes.rectangle(9, 7)
    u = np.random.default_rng(9).random(mesh.n_cells)
    both(m.diffusion_step, toolchain, u, mesh.c2e2c, 0.1, outs=[np.zeros(mesh.n_cells)])


@sc.field_operator
def boundary_gather(f: m.EdgeK) -> m.CellK:
    above = sc.neighbor_sum(f(K + 1)(m.C2E) - f(m.C2E), axis=m.C2EDim)
    below = sc.neighbor_sum(f(m.C2E) - f(K - 1)(m.C2E), axis=m.C2EDim)
    return sc.concat_where(K == 0, above, below)


@sc.program
def gathers_in_branches(f: m.EdgeK, c2e: sc.Table[m.C2E], out: m.CellK) -> None:
    boundary_gather(f, out=out)


def test_gathers_inside_concat_where_branches(toolchain: Any) -> None:
    """Each branch reads its neighbours at its own levels only (DaCe: the gather's index
    along K is kept inside the array where the branch is not selected)."""
    rng = np.random.default_rng(5)
    c2e, _ = m.tables(rng)
    f = rng.standard_normal((m.N_EDGES, m.N_K))
    both(gathers_in_branches, toolchain, f, c2e, outs=[np.full((m.N_CELLS, m.N_K), np.nan)])


@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_unit_stride_layout(family: str, session_cache_dir: Path) -> None:
    """With unit innermost strides a gather along the innermost dimension has no stride."""
    if family == "dace":
        pytest.importorskip("dace")
    container = build_container({}, cache_dir=session_cache_dir, data_layout="unit_stride")
    toolchain = getattr(container, family).toolchain()
    rng = np.random.default_rng(6)
    c2e, e2v = m.tables(rng)
    e, v = rng.standard_normal(m.N_EDGES), rng.standard_normal(m.N_VERTICES)
    w = rng.standard_normal((m.N_CELLS, 3))
    outs = [np.full(m.N_CELLS, np.nan) for _ in range(5)]
    both(m.reductions, toolchain, e, v, w, c2e, e2v, outs=outs)


def test_dace_reads_entries_as_points_and_gathers_through_one_connector() -> None:
    """Entries at the cell and a constant slot are plain connectors; the gathered field is
    one dynamic connector over all edges, read as many times as there are slots."""
    pytest.importorskip("dace")
    import dace

    from stencilchain.program.device import Device
    from stencilchain.steps.dace.translator import DaCeTranslator, sdfg_from_source

    source = DaCeTranslator(device=Device.CPU, auto_optimize=False)(m.reductions.ir)
    sdfg = sdfg_from_source(source.source_code)
    (state, tasklet) = next(
        (state, node)
        for node, state in sdfg.all_nodes_recursive()
        if isinstance(node, dace.nodes.Tasklet) and node.label == "call0_weighted_sum"
    )
    memlets = {e.dst_conn: e.data for e in state.in_edges(tasklet)}
    tables = sorted(str(mm.subset) for mm in memlets.values() if mm.data == "c2e")
    assert tables == ["i_Cell, 0", "i_Cell, 1", "i_Cell, 2"]
    (gathered,) = [mm for mm in memlets.values() if mm.data == "e"]
    assert str(gathered.subset) == "0:n_Edge" and gathered.dynamic and gathered.volume == 3
    assert "* e_s0]" in tasklet.code.as_string


def test_an_entry_out_of_range_is_refused_before_anything_is_written(toolchain: Any) -> None:
    rng = np.random.default_rng(4)
    c2e, e2v = m.tables(rng)
    c2e[3, 1] = m.N_EDGES
    outs = [np.full(m.N_CELLS, 7.0) for _ in range(5)]
    run = m.reductions.with_backend(toolchain)
    with pytest.raises(sc.ArgumentError, match=r"'c2e'.*C2E holds 11 at \(3, 1\)"):
        run(np.ones(m.N_EDGES), np.ones(m.N_VERTICES), np.ones((m.N_CELLS, 3)), c2e, e2v, *outs)
    assert all((o == 7.0).all() for o in outs)
    c2e[3, 1] = 0  # the same array, corrected: checked again, and runs
    run(np.ones(m.N_EDGES), np.ones(m.N_VERTICES), np.ones((m.N_CELLS, 3)), c2e, e2v, *outs)


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")


@needs_nvcc
@pytest.mark.slow
def test_gpu_sources_of_mesh_programs_build(session_cache_dir: Path) -> None:
    container = build_container({}, cache_dir=session_cache_dir, device="gpu")
    programs = (m.reductions, m.mesh_column64, m.through_a_temporary, m.diffusion_step)
    builds: list[tuple[Any, tuple[sc.Program, ...]]] = [(container.gtfn.toolchain(), programs)]
    if importlib.util.find_spec("dace") is not None:
        noopt = build_container({}, cache_dir=session_cache_dir, device="gpu", auto_optimize=False)
        builds += [
            (container.dace.toolchain(), programs),
            (noopt.dace.toolchain(), (m.reductions, gathers_in_branches)),
        ]
    for toolchain, built in builds:
        for program in built:
            assert toolchain.compile(program).artifact.module_path.is_file()
