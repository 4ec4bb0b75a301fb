"""The 5-point Laplacian of a 2-D field.

    out[i, j] = -4 f[i, j] + f[i+1, j] + f[i-1, j] + f[i, j+1] + f[i, j-1]

(the second-order finite-difference Laplacian on a unit grid, e.g. LeVeque,
"Finite Difference Methods for ODEs and PDEs", eq. 3.7, times h**2).

Dimensions: I, J (array axes 0, 1).
Field operators: `laplacian`.
Program: `laplacian_program(f, out)`: one call with an inferred domain, the interior
I: [1, end-1), J: [1, end-1) where every neighbour read is in bounds; the boundary
rows and columns of `out` are left untouched.
"""

from __future__ import annotations

import numpy as np

import stencilchain as sc

I = sc.Dimension("I")
J = sc.Dimension("J")

Field2D = sc.Field[[I, J], sc.float64]

DEFAULT_SHAPE = (64, 64)


@sc.field_operator
def laplacian(f: Field2D) -> Field2D:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


@sc.program
def laplacian_program(f: Field2D, out: Field2D) -> None:
    laplacian(f, out=out)


PROGRAM = laplacian_program


def make_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray | float]:
    """`f` random in [0, 1), `out` zeros."""
    return {"f": rng.random(shape), "out": np.zeros(shape)}


def reference(f: np.ndarray, out: np.ndarray) -> dict[str, np.ndarray]:
    """The expected `out`: the Laplacian on the interior, `out` unchanged elsewhere."""
    expected = out.copy()
    c = f[1:-1, 1:-1]
    expected[1:-1, 1:-1] = -4.0 * c + f[2:, 1:-1] + f[:-2, 1:-1] + f[1:-1, 2:] + f[1:-1, :-2]
    return {"out": expected}
