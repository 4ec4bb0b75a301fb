"""Explicit diffusion of a cell scalar on the periodic torus, a few time steps in one
program, with a neighbour-sum Laplacian over the three cells across each cell's edges
(C2E2C).

On the torus every cell is a right triangle of the same area and every cell has three
neighbours, so one step is

    u'[c] = u[c] + nu * sum_j (u[C2E2C[c, j]] - u[c])

and, C2E2C being symmetric (c is a neighbour of each of its neighbours), the sum over
all cells of the Laplacian cancels: every step conserves the integral of u to rounding.
Stable for 0 <= nu <= 1/6 (the Laplacian's eigenvalues lie in [-6, 0]).

Dimensions: Cell; local C2E2CDim (3 slots).
Field operator: `diffused` (one step).
Program: `mesh_diffusion(u, c2e2c, nu, out)`: STEPS steps, the intermediate states
temporaries over every cell, each read through the table by the next step.

`shape` is `(nx, ny)`: the torus has nx x ny quads, two triangles each.
"""

from __future__ import annotations

import numpy as np

import stencilchain as sc
from stencilchain import meshes

Cell = sc.Dimension("Cell")
C2E2CDim = sc.Dimension("C2E2CDim", kind=sc.LOCAL)
C2E2C = sc.Connectivity("C2E2C", source=Cell, target=(Cell, C2E2CDim), max_neighbors=3,
                        skip_values=True)  # fmt: skip

CellF = sc.Field[[Cell], sc.float64]

DEFAULT_SHAPE = (64, 64)
STEPS = 4


@sc.field_operator
def diffused(u: CellF, nu: sc.float64) -> CellF:
    return u + nu * sc.neighbor_sum(u(C2E2C) - u, axis=C2E2CDim)


@sc.program
def mesh_diffusion(u: CellF, c2e2c: sc.Table[C2E2C], nu: sc.float64, out: CellF) -> None:
    u1 = diffused(u, nu)
    u2 = diffused(u1, nu)
    u3 = diffused(u2, nu)
    diffused(u3, nu, out=out)


PROGRAM = mesh_diffusion


def make_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray | float]:
    """A random field on the cells of an nx x ny torus, its C2E2C table, nu = 0.1, `out`
    zeros."""
    mesh = meshes.torus(shape[0], shape[1])
    return {"u": rng.random(mesh.n_cells), "c2e2c": mesh.c2e2c, "nu": 0.1,
            "out": np.zeros(mesh.n_cells)}  # fmt: skip


def reference(
    u: np.ndarray, c2e2c: np.ndarray, nu: float, out: np.ndarray
) -> dict[str, np.ndarray]:
    """The expected `out`: STEPS explicit steps, the neighbours gathered with np.take (the
    torus has no missing ones)."""
    assert (c2e2c >= 0).all(), "the example runs on the torus: every cell has 3 neighbours"
    for _ in range(STEPS):
        neighbours = np.take(u, c2e2c)  # (cells, 3)
        laplacian = (neighbours[:, 0] - u) + (neighbours[:, 1] - u) + (neighbours[:, 2] - u)
        u = u + nu * laplacian
    return {"out": u}
