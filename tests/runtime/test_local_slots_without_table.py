"""Slots of a local field that no table numbers, `w[E2CDim(1)]` of an argument over
`(Edge, E2CDim)` in a program with no table of a connectivity over E2CDim (as icon4py's
back-trajectories read `cell_idx[E2CDim(0)]`): the arguments' extent along E2CDim is how
many slots there are. On the embedded executor, GTFN (with and without transforms) and DaCe
(auto-optimized or not), in C and Fortran layouts, against a NumPy reference written here;
a slot beyond the extent is an ArgumentError naming the argument and the slot on each, with
nothing written, and the compiled entry points refuse it by themselves."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.containers import build_container
from stencilchain.errors import ArgumentError
from tests.runtime.test_own_ranges_compiled import _layout

Edge, Vertex = sc.Dimension("Edge"), sc.Dimension("Vertex")
K = sc.Dimension("K", kind=sc.VERTICAL)
E2CDim = sc.Dimension("E2CDim", kind=sc.LOCAL)
E2VDim = sc.Dimension("E2VDim", kind=sc.LOCAL)
E2V = sc.Connectivity("E2V", source=Vertex, target=(Edge, E2VDim), max_neighbors=2)

EdgeK = sc.Field[[Edge, K], sc.float64]
EdgeKInt = sc.Field[[Edge, K], sc.int32]
VertexK = sc.Field[[Vertex, K], sc.float64]
Weights = sc.Field[[Edge, E2CDim], sc.float64]
Cells = sc.Field[[Edge, E2CDim], sc.int32]

TOOLCHAINS = ["embedded", "gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]
N_EDGES, N_VERTICES, NLEV = 11, 7, 4


@pytest.fixture(scope="module", params=TOOLCHAINS)
def toolchain(request: pytest.FixtureRequest) -> Any:
    if request.param == "embedded":
        return sc.backends.run_embedded
    return request.getfixturevalue(request.param)


# --- the programs ---------------------------------------------------------------------------


@sc.field_operator
def upwind(vn: EdgeK, cell_idx: Cells, w: Weights) -> tuple[EdgeKInt, EdgeK]:
    """icon4py's barycentric back-trajectory picks the upwind cell of each edge by slot."""
    positive = vn >= 0.0
    cell = sc.where(positive, cell_idx[E2CDim(0)], cell_idx[E2CDim(1)])
    weight = sc.where(positive, w[E2CDim(0)], w[E2CDim(1)])
    return cell, weight * vn


@sc.program
def upwind_cells(vn: EdgeK, cell_idx: Cells, w: Weights, cell: EdgeKInt, flux: EdgeK) -> None:
    upwind(vn, cell_idx, w, out=(cell, flux))


def upwind_reference(
    vn: np.ndarray, cell_idx: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    cell, flux = np.zeros(vn.shape, np.int32), np.zeros(vn.shape)
    for e in range(vn.shape[0]):
        for k in range(vn.shape[1]):
            slot = 0 if vn[e, k] >= 0.0 else 1
            cell[e, k] = cell_idx[e, slot]
            flux[e, k] = w[e, slot] * vn[e, k]
    return cell, flux


@sc.field_operator
def scaled(w: Weights) -> Weights:
    return 2.0 * w + 1.0


@sc.field_operator
def third(s: Weights) -> sc.Field[[Edge], sc.float64]:
    return s[E2CDim(2)]


@sc.field_operator
def combine(s: Weights, w: Weights, v: VertexK) -> EdgeK:
    """A slot of a temporary over E2CDim, of an expression, in a called field operator, and
    beside a read through the table of another connectivity."""
    return third(s) + (w * w)[E2CDim(0)] * v(E2V[1])


@sc.program
def slots_of_a_temporary(w: Weights, v: VertexK, e2v: sc.Table[E2V], out: EdgeK) -> None:
    s = scaled(w)
    combine(s, w, v, out=out)


def temporary_reference(w: np.ndarray, v: np.ndarray, e2v: np.ndarray) -> np.ndarray:
    out = np.zeros((w.shape[0], v.shape[1]))
    for e in range(w.shape[0]):
        for k in range(v.shape[1]):
            out[e, k] = (2.0 * w[e, 2] + 1.0) + w[e, 0] * w[e, 0] * v[e2v[e, 1], k]
    return out


def _inputs(slots: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "vn": rng.standard_normal((N_EDGES, NLEV)),
        "cell_idx": rng.integers(0, 100, (N_EDGES, slots)).astype(np.int32),
        "w": rng.standard_normal((N_EDGES, slots)),
        "v": rng.standard_normal((N_VERTICES, NLEV)),
        "e2v": rng.integers(0, N_VERTICES, (N_EDGES, 2)).astype(np.int32),
    }


# --- results --------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("slots", [2, 5])
def test_slots_of_an_argument(toolchain: Any, layout: str, slots: int) -> None:
    """Two slots read of arguments with two slots, and with more than are read."""
    a = _inputs(slots, seed=slots)
    vn, cell_idx, w = (_layout(a[n], layout) for n in ("vn", "cell_idx", "w"))
    cell, flux = (
        _layout(np.full(vn.shape, -7, np.int32), layout),
        _layout(np.full(vn.shape, np.nan), layout),
    )
    upwind_cells.with_backend(toolchain)(vn, cell_idx, w, cell, flux)
    want_cell, want_flux = upwind_reference(vn, cell_idx, w)
    np.testing.assert_array_equal(cell, want_cell)
    np.testing.assert_allclose(flux, want_flux, rtol=1e-15, atol=0)


@pytest.mark.parametrize("layout", ["C", "F"])
def test_slots_of_a_temporary_beside_a_table(toolchain: Any, layout: str) -> None:
    a = _inputs(3, seed=3)
    w, v = _layout(a["w"], layout), _layout(a["v"], layout)
    out = _layout(np.full((N_EDGES, NLEV), np.nan), layout)
    slots_of_a_temporary.with_backend(toolchain)(w, v, a["e2v"], out)
    want = temporary_reference(w, v, a["e2v"])
    np.testing.assert_allclose(out, want, rtol=1e-14, atol=1e-15)


# --- a slot beyond the extent -----------------------------------------------------------------


def _refused(run: Any, args: list[np.ndarray], outs: list[np.ndarray], match: str) -> None:
    before = [o.copy() for o in outs]
    with pytest.raises(ArgumentError, match=match):
        run(*args)
    for got, want in zip(outs, before):
        np.testing.assert_array_equal(got, want)  # nothing written


UPWIND_MESSAGE = (
    r"argument 'cell_idx' of upwind_cells\(\): field operator upwind reads slot E2CDim\(1\), "
    r"but 'cell_idx' has 1 along E2CDim, .*pass arrays with at least 2 along E2CDim"
)


@pytest.mark.parametrize("layout", ["C", "F"])
def test_a_slot_beyond_the_extent_is_an_argument_error(toolchain: Any, layout: str) -> None:
    """Refused at the first call (before anything compiles) and at a call of the compiled
    program; the arguments' sizes must agree along E2CDim as along any dimension."""
    a = _inputs(1, seed=4)
    good = _inputs(2, seed=5)
    run = upwind_cells.with_backend(toolchain)
    vn = _layout(a["vn"], layout)
    cell = _layout(np.full(vn.shape, -7, np.int32), layout)
    flux = _layout(np.full(vn.shape, np.nan), layout)
    narrow = [_layout(a["cell_idx"], layout), _layout(a["w"], layout)]
    _refused(run, [vn, *narrow, cell, flux], [cell, flux], UPWIND_MESSAGE)
    run(vn, good["cell_idx"], good["w"], cell, flux)  # compiled now
    np.testing.assert_allclose(flux, upwind_reference(vn, good["cell_idx"], good["w"])[1])
    _refused(run, [vn, *narrow, cell, flux], [cell, flux], UPWIND_MESSAGE)
    _refused(
        run,
        [vn, good["cell_idx"], _inputs(3, seed=6)["w"], cell, flux],
        [cell, flux],
        r"argument 'cell_idx' of upwind_cells\(\): spans \[0, 2\) along E2CDim, while another "
        r"argument spans \[0, 3\); no table numbers the slots of E2CDim",
    )


def test_a_slot_of_a_temporary_beyond_the_extent(toolchain: Any) -> None:
    a = _inputs(2, seed=7)
    out = np.full((N_EDGES, NLEV), np.nan)
    _refused(
        slots_of_a_temporary.with_backend(toolchain),
        [a["w"], a["v"], a["e2v"], out],
        [out],
        r"argument 'w' of slots_of_a_temporary\(\): field operator third reads slot "
        r"E2CDim\(2\), but 'w' has 2 along E2CDim",
    )


@pytest.mark.parametrize(
    "name", ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]
)
def test_the_compiled_entry_point_checks_the_slots_itself(
    name: str, request: pytest.FixtureRequest
) -> None:
    """The native check, for callers of a compiled program's entry point: the message of
    the shared checker, before the program runs."""
    compiled = request.getfixturevalue(name).compile(upwind_cells)
    a = _inputs(1, seed=8)
    cell, flux = np.full((N_EDGES, NLEV), -7, np.int32), np.full((N_EDGES, NLEV), np.nan)
    with pytest.raises(TypeError, match=UPWIND_MESSAGE):
        compiled.entry(a["vn"], a["cell_idx"], a["w"], cell, flux)
    assert (cell == -7).all() and np.isnan(flux).all()
    good = _inputs(2, seed=9)
    compiled.entry(good["vn"], good["cell_idx"], good["w"], cell, flux)
    np.testing.assert_array_equal(
        cell, upwind_reference(good["vn"], good["cell_idx"], good["w"])[0]
    )


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.slow
def test_gpu_sources_build(session_cache_dir: Path) -> None:
    """The CUDA sources of both families, with the entry point's slot check, build."""
    container = build_container({}, cache_dir=session_cache_dir, device="gpu")
    toolchains = [container.gtfn.toolchain()]
    if importlib.util.find_spec("dace") is not None:
        toolchains.append(container.dace.toolchain())
    for chain in toolchains:
        assert chain.compile(upwind_cells).artifact.module_path.is_file()
