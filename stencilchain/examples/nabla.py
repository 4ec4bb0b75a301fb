"""The finite-volume gradient of a vertex scalar ("nabla"), on the median dual of a
triangle mesh: the classic unstructured-mesh benchmark of the dawn and GT4Py papers.

For every vertex v and level k, with the dual cell of v (area `vol[v]`) bounded by one
dual face per edge e of `V2E[v]` (length `dual_edge_lengths[e]`, unit normal
`dual_normals[e]` from `E2V[e, 0]` to `E2V[e, 1]`, and `sign[v, j]` = `v2e_signs` = +1
where that normal points out of the dual cell, -1 where in, 0 for padding):

    zavg[e]     = (pp[E2V[e, 0]] + pp[E2V[e, 1]]) / 2        (pp on the dual face)
    s_mxx, s_myy = dual_edge_lengths * dual_normals          (per edge, x and y)
    pnabla_x[v] = sum_j sign[v, j] * s_mxx[V2E[v, j]] * zavg[V2E[v, j]] / vol[v]

and likewise for y (Gauss: the gradient's mean over the dual cell). Exact for a linear
`pp` at every vertex whose dual cell is closed. On the bounded rectangle a boundary
vertex has fewer than six edges: the missing neighbours (-1) are skipped by the sum.

Dimensions: Vertex, Edge, K; local V2EDim (6 slots), E2VDim (2).
Field operators: `edge_fluxes` (an E2V reduction, over (Edge, K)) and `vertex_sums`
(a V2E reduction with the signs as a local field, over (Vertex, K)).
Program: `nabla(pp, s_mxx, s_myy, sign, vol, e2v, v2e, pnabla_x, pnabla_y)`; the edge
fluxes are temporaries over every edge, then gathered.

`shape` is `(nx, ny, levels)`: the mesh (`meshes.torus` by default, `meshes.rectangle`
with `make_inputs(..., mesh="rectangle")`) has nx x ny quads, two triangles each.
"""

from __future__ import annotations

import numpy as np

import stencilchain as sc
from stencilchain import meshes

Vertex = sc.Dimension("Vertex")
Edge = sc.Dimension("Edge")
K = sc.Dimension("K", kind=sc.VERTICAL)
V2EDim = sc.Dimension("V2EDim", kind=sc.LOCAL)
E2VDim = sc.Dimension("E2VDim", kind=sc.LOCAL)
V2E = sc.Connectivity("V2E", source=Edge, target=(Vertex, V2EDim), max_neighbors=6,
                      skip_values=True)  # fmt: skip
E2V = sc.Connectivity("E2V", source=Vertex, target=(Edge, E2VDim), max_neighbors=2)

VertexK = sc.Field[[Vertex, K], sc.float64]
EdgeK = sc.Field[[Edge, K], sc.float64]
EdgeF = sc.Field[[Edge], sc.float64]
VertexF = sc.Field[[Vertex], sc.float64]
Signs = sc.Field[[Vertex, V2EDim], sc.float64]

DEFAULT_SHAPE = (32, 32, 20)
MESHES = ("torus", "rectangle")


@sc.field_operator
def edge_fluxes(pp: VertexK, s_mxx: EdgeF, s_myy: EdgeF) -> tuple[EdgeK, EdgeK]:
    zavg = 0.5 * sc.neighbor_sum(pp(E2V), axis=E2VDim)
    return s_mxx * zavg, s_myy * zavg


@sc.field_operator
def vertex_sums(flux_x: EdgeK, flux_y: EdgeK, sign: Signs, vol: VertexF) -> tuple[VertexK, VertexK]:
    inverse = 1.0 / vol
    return (
        sc.neighbor_sum(sign * flux_x(V2E), axis=V2EDim) * inverse,
        sc.neighbor_sum(sign * flux_y(V2E), axis=V2EDim) * inverse,
    )


@sc.program
def nabla(
    pp: VertexK, s_mxx: EdgeF, s_myy: EdgeF, sign: Signs, vol: VertexF,
    e2v: sc.Table[E2V], v2e: sc.Table[V2E], pnabla_x: VertexK, pnabla_y: VertexK,
) -> None:  # fmt: skip
    flux_x, flux_y = edge_fluxes(pp, s_mxx, s_myy)
    vertex_sums(flux_x, flux_y, sign, vol, out=(pnabla_x, pnabla_y))


PROGRAM = nabla


def build_mesh(shape: tuple[int, ...], mesh: str = "torus") -> meshes.Mesh:
    """The mesh of `shape` (nx x ny quads of 1 x 1): a torus or a rectangle."""
    if mesh not in MESHES:
        raise ValueError(f"mesh {mesh!r} is not one of {', '.join(MESHES)}")
    nx, ny = shape[0], shape[1]
    return meshes.torus(nx, ny) if mesh == "torus" else meshes.rectangle(nx, ny)


def make_inputs(
    shape: tuple[int, ...], rng: np.random.Generator, mesh: str = "torus"
) -> dict[str, np.ndarray | float]:
    """A random vertex scalar on `mesh` ("torus" or "rectangle") with `shape[2]` levels,
    the dual faces' geometry and the signs from the mesh, its E2V and V2E tables, the
    gradient components zeros."""
    m = build_mesh(shape, mesh)
    levels = shape[2]
    face = m.dual_normals * m.dual_edge_lengths[:, None]
    return {
        "pp": rng.random((m.n_vertices, levels)),
        "s_mxx": np.ascontiguousarray(face[:, 0]),
        "s_myy": np.ascontiguousarray(face[:, 1]),
        "sign": np.array(m.v2e_signs, dtype=np.float64),
        "vol": np.array(m.dual_areas),
        "e2v": m.e2v,
        "v2e": m.v2e,
        "pnabla_x": np.zeros((m.n_vertices, levels)),
        "pnabla_y": np.zeros((m.n_vertices, levels)),
    }


def reference(
    pp: np.ndarray, s_mxx: np.ndarray, s_myy: np.ndarray, sign: np.ndarray, vol: np.ndarray,
    e2v: np.ndarray, v2e: np.ndarray, pnabla_x: np.ndarray, pnabla_y: np.ndarray,
) -> dict[str, np.ndarray]:  # fmt: skip
    """The expected gradient: edge averages with np.take, then a loop over the six slots of
    V2E that skips the missing edges (-1)."""
    zavg = 0.5 * (np.take(pp, e2v[:, 0], axis=0) + np.take(pp, e2v[:, 1], axis=0))
    flux_x, flux_y = s_mxx[:, None] * zavg, s_myy[:, None] * zavg
    sum_x, sum_y = np.zeros(pp.shape), np.zeros(pp.shape)
    for j in range(v2e.shape[1]):
        edges = v2e[:, j]
        present = edges >= 0
        at = edges[present]
        sum_x[present] += sign[present, j, None] * np.take(flux_x, at, axis=0)
        sum_y[present] += sign[present, j, None] * np.take(flux_y, at, axis=0)
    return {"pnabla_x": sum_x * (1.0 / vol)[:, None], "pnabla_y": sum_y * (1.0 / vol)[:, None]}
