"""The nabla of stencilchain/examples/nabla.py in gt4py's spelling, as gt4py's own nabla
test writes it: connectivity FieldOffsets E2V and V2E, their tables given by the call's
`offset_provider` (V2E with skip_value=-1 for the rectangle's boundary vertices)."""

from __future__ import annotations

from typing import Any

import numpy as np

import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import Dims, Field, float64, neighbor_sum
from stencilchain.examples import nabla as _twin

Vertex = gtx.Dimension("Vertex")
Edge = gtx.Dimension("Edge")
KDim = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
V2EDim = gtx.Dimension("V2EDim", kind=gtx.DimensionKind.LOCAL)
E2VDim = gtx.Dimension("E2VDim", kind=gtx.DimensionKind.LOCAL)
V2E = gtx.FieldOffset("V2E", source=Edge, target=(Vertex, V2EDim))
E2V = gtx.FieldOffset("E2V", source=Vertex, target=(Edge, E2VDim))

VertexK = Field[Dims[Vertex, KDim], float64]
EdgeK = Field[Dims[Edge, KDim], float64]

DEFAULT_SHAPE = _twin.DEFAULT_SHAPE
MESHES = _twin.MESHES
build_mesh = _twin.build_mesh


@gtx.field_operator
def compute_zavgS(pp: VertexK, s_m: Field[Dims[Edge], float64]) -> EdgeK:
    zavg = 0.5 * neighbor_sum(pp(E2V), axis=E2VDim)
    return s_m * zavg


@gtx.field_operator
def compute_pnabla(
    pp: VertexK,
    s_m: Field[Dims[Edge], float64],
    sign: Field[Dims[Vertex, V2EDim], float64],
    vol: Field[Dims[Vertex], float64],
) -> VertexK:
    zavgS = compute_zavgS(pp, s_m)
    return neighbor_sum(zavgS(V2E) * sign, axis=V2EDim) / vol


@gtx.field_operator
def pnabla(
    pp: VertexK,
    s_mxx: Field[Dims[Edge], float64],
    s_myy: Field[Dims[Edge], float64],
    sign: Field[Dims[Vertex, V2EDim], float64],
    vol: Field[Dims[Vertex], float64],
) -> tuple[VertexK, VertexK]:
    return compute_pnabla(pp, s_mxx, sign, vol), compute_pnabla(pp, s_myy, sign, vol)


@gtx.program(grid_type=gtx.GridType.UNSTRUCTURED)
def nabla_gt4py_program(
    pp: VertexK,
    s_mxx: Field[Dims[Edge], float64],
    s_myy: Field[Dims[Edge], float64],
    sign: Field[Dims[Vertex, V2EDim], float64],
    vol: Field[Dims[Vertex], float64],
    pnabla_x: VertexK,
    pnabla_y: VertexK,
) -> None:
    pnabla(pp, s_mxx, s_myy, sign, vol, out=(pnabla_x, pnabla_y))


GT_PROGRAM = nabla_gt4py_program
OWN_PARAMS = ("pp", "s_mxx", "s_myy", "sign", "vol", "pnabla_x", "pnabla_y")


def offset_provider(inputs: dict[str, Any]) -> dict[str, Any]:
    """E2V and V2E as connectivities, checked once when made."""
    e2v, v2e = inputs["e2v_table"], inputs["v2e_table"]
    return {
        "E2V": gtx.as_connectivity([Edge, E2VDim], Vertex, e2v),
        "V2E": gtx.as_connectivity([Vertex, V2EDim], Edge, v2e, skip_value=-1),
    }


_SPECS = {"e2v_table": np.zeros((1, 2), np.int32), "v2e_table": np.zeros((1, 6), np.int32)}
PROGRAM, _ = GT_PROGRAM.stencilchain_program(offset_provider(_SPECS))


def make_inputs(
    shape: tuple[int, ...], rng: np.random.Generator, mesh: str = "torus"
) -> dict[str, Any]:
    """Those of the twin, in this program's parameter order (the tables last)."""
    twin = _twin.make_inputs(shape, rng, mesh=mesh)
    inputs = {name: twin[name] for name in OWN_PARAMS}
    inputs["e2v_table"], inputs["v2e_table"] = twin["e2v"], twin["v2e"]
    return inputs


def reference(
    pp: np.ndarray, s_mxx: np.ndarray, s_myy: np.ndarray, sign: np.ndarray, vol: np.ndarray,
    pnabla_x: np.ndarray, pnabla_y: np.ndarray, e2v_table: np.ndarray, v2e_table: np.ndarray,
) -> dict[str, np.ndarray]:  # fmt: skip
    return _twin.reference(pp, s_mxx, s_myy, sign, vol, e2v_table, v2e_table, pnabla_x, pnabla_y)
