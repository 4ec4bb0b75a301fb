"""Edges to cells, then up the column: a tracer given at the edge midpoints of a torus is
interpolated to the cell centres level by level (C2E with geometric weights, a local
field), and the column integral of the result is accumulated from the top down (a
vertical scan over K), as a physics parametrization on ICON's mesh would start.

For every cell c and level k (k = 0 at the top):

    q_c[c, k]    = sum_j w[c, j] * q_e[C2E[c, j], k]     w[c, j] = l_j / (l_0 + l_1 + l_2)
    column[c, k] = sum_{k' <= k} q_c[c, k'] * dz[c, k']

with l_j the length of the cell's j-th edge (the weights of a cell sum to 1), and `dz`
the layer thickness of each column.

Dimensions: Cell, Edge, K; local C2EDim (3 slots).
Field operator: `edges_to_cells` (a weighted C2E reduction over (Cell, K)).
Scan operator: `integrate_down` (forward along K, a scalar state).
Program: `mesh_column(q_e, weights, dz, c2e, q_c, column)`.

`shape` is `(nx, ny, levels)`: the torus has nx x ny quads, two triangles each.
"""

from __future__ import annotations

import numpy as np

import stencilchain as sc
from stencilchain import meshes

Cell = sc.Dimension("Cell")
Edge = sc.Dimension("Edge")
K = sc.Dimension("K", kind=sc.VERTICAL)
C2EDim = sc.Dimension("C2EDim", kind=sc.LOCAL)
C2E = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=3,
                      skip_values=True)  # fmt: skip

CellK = sc.Field[[Cell, K], sc.float64]
EdgeK = sc.Field[[Edge, K], sc.float64]
Weights = sc.Field[[Cell, C2EDim], sc.float64]

DEFAULT_SHAPE = (32, 32, 20)


@sc.field_operator
def edges_to_cells(q_e: EdgeK, weights: Weights) -> CellK:
    return sc.neighbor_sum(weights * q_e(C2E), axis=C2EDim)


@sc.scan_operator(axis=K, forward=True, init=0.0)
def integrate_down(above, q: CellK, dz: CellK):  # type: ignore[no-untyped-def]
    return above + q * dz


@sc.program
def mesh_column(
    q_e: EdgeK, weights: Weights, dz: CellK, c2e: sc.Table[C2E], q_c: CellK, column: CellK
) -> None:
    edges_to_cells(q_e, weights, out=q_c)
    integrate_down(q_c, dz, out=column)


PROGRAM = mesh_column


def make_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray | float]:
    """A random tracer on the edges of an nx x ny torus with `shape[2]` levels, the
    edge-length weights, layers 200 to 400 m thick, the C2E table, the outputs zeros."""
    mesh = meshes.torus(shape[0], shape[1], dx=1000.0, dy=1000.0)
    levels = shape[2]
    lengths = mesh.edge_lengths[mesh.c2e]
    return {
        "q_e": rng.uniform(0.0, 1e-2, (mesh.n_edges, levels)),
        "weights": lengths / lengths.sum(axis=1, keepdims=True),
        "dz": rng.uniform(200.0, 400.0, (mesh.n_cells, levels)),
        "c2e": mesh.c2e,
        "q_c": np.zeros((mesh.n_cells, levels)),
        "column": np.zeros((mesh.n_cells, levels)),
    }


def reference(
    q_e: np.ndarray, weights: np.ndarray, dz: np.ndarray, c2e: np.ndarray,
    q_c: np.ndarray, column: np.ndarray,
) -> dict[str, np.ndarray]:  # fmt: skip
    """The expected `q_c` (a loop over the three slots with np.take, skipping missing
    edges) and `column` (a loop over K)."""
    interpolated = np.zeros(q_c.shape)
    for j in range(c2e.shape[1]):
        present = c2e[:, j] >= 0
        interpolated[present] += weights[present, j, None] * np.take(q_e, c2e[present, j], axis=0)
    integral = np.empty(q_c.shape)
    above = np.zeros(q_c.shape[0])
    for k in range(q_c.shape[1]):
        above = integral[:, k] = above + interpolated[:, k] * dz[:, k]
    return {"q_c": interpolated, "column": integral}
