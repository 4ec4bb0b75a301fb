"""gt4py's spelling of a slot of a local field that no table numbers, as icon4py's
back-trajectories write it (`p_cell_idx[E2CDim(0)]` of an `(Edge, E2CDim)` argument, the
offset provider holding E2C but nothing read through it): the argument's extent along
E2CDim is how many slots there are. On every CPU toolchain, both layouts, against NumPy;
a slot beyond the extent is an ArgumentError naming the argument, with nothing written."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import Dims, Field
from tests.compat._support import LAYOUTS, TOOLCHAINS, laid_out, toolchain, torus

Cell = gtx.Dimension("Cell")
Edge = gtx.Dimension("Edge")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
E2CDim = gtx.Dimension("E2C", gtx.DimensionKind.LOCAL)
E2C = gtx.FieldOffset("E2C", source=Cell, target=(Edge, E2CDim))

MESH = torus()
PROVIDER = {"E2C": gtx.as_connectivity([Edge, E2CDim], Cell, MESH.tables["E2C"])}
NLEV = 5


@gtx.field_operator
def _upwind_cell(
    p_vn: Field[Dims[Edge, K], gtx.float64],
    cell_idx: Field[Dims[Edge, E2CDim], gtx.int32],
    p_dist: Field[Dims[Edge, E2CDim], gtx.float64],
) -> tuple[Field[Dims[Edge, K], gtx.int32], Field[Dims[Edge, K], gtx.float64]]:
    lvn_pos = p_vn >= 0.0
    p_cell_idx = gtx.where(lvn_pos, cell_idx[E2CDim(0)], cell_idx[E2CDim(1)])
    p_distv = gtx.where(lvn_pos, p_dist[E2CDim(0)], -p_dist[E2CDim(1)]) * p_vn
    return p_cell_idx, p_distv


@gtx.program
def upwind_cell(
    p_vn: Field[Dims[Edge, K], gtx.float64],
    cell_idx: Field[Dims[Edge, E2CDim], gtx.int32],
    p_dist: Field[Dims[Edge, E2CDim], gtx.float64],
    p_cell_idx: Field[Dims[Edge, K], gtx.int32],
    p_distv: Field[Dims[Edge, K], gtx.float64],
) -> None:
    _upwind_cell(p_vn, cell_idx, p_dist, out=(p_cell_idx, p_distv))


def _reference(
    p_vn: np.ndarray, cell_idx: np.ndarray, p_dist: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    idx, dist = np.zeros(p_vn.shape, np.int32), np.zeros(p_vn.shape)
    for e in range(p_vn.shape[0]):
        for k in range(p_vn.shape[1]):
            if p_vn[e, k] >= 0.0:
                idx[e, k], dist[e, k] = cell_idx[e, 0], p_dist[e, 0] * p_vn[e, k]
            else:
                idx[e, k], dist[e, k] = cell_idx[e, 1], -p_dist[e, 1] * p_vn[e, k]
    return idx, dist


def _inputs(slots: int, order: str) -> list[np.ndarray]:
    rng = np.random.default_rng(slots)
    n = MESH.n_edges
    values = [
        rng.standard_normal((n, NLEV)),
        rng.integers(0, MESH.n_cells, (n, slots)).astype(np.int32),
        rng.random((n, slots)),
        np.full((n, NLEV), -1, np.int32),
        np.full((n, NLEV), np.nan),
    ]
    return [laid_out(v, order) for v in values]


@pytest.mark.parametrize("order", LAYOUTS)
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_slots_of_a_local_field_argument(
    name: str, order: str, request: pytest.FixtureRequest
) -> None:
    chain = toolchain(request, name)
    run: Any = upwind_cell if chain is None else upwind_cell.with_backend(chain)
    args = _inputs(2, order)
    run(*args, offset_provider=PROVIDER)
    idx, dist = _reference(*args[:3])
    np.testing.assert_array_equal(args[3], idx)
    np.testing.assert_allclose(args[4], dist, rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", TOOLCHAINS)
def test_a_slot_beyond_the_extent(name: str, request: pytest.FixtureRequest) -> None:
    chain = toolchain(request, name)
    run: Any = upwind_cell if chain is None else upwind_cell.with_backend(chain)
    run(*_inputs(3, "C"), offset_provider=PROVIDER)  # more slots than read: fine
    args = _inputs(1, "C")
    with pytest.raises(
        gtx.ArgumentError,
        match=r"argument 'cell_idx' of upwind_cell\(\): field operator _upwind_cell reads "
        r"slot E2C\(1\), but 'cell_idx' has 1 along E2C",
    ):
        run(*args, offset_provider=PROVIDER)
    assert (args[3] == -1).all() and np.isnan(args[4]).all()
