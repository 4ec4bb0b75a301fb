"""One explicit step of first-order upwind advection of a scalar q in 2-D.

Solves q_t + u q_x + v q_y = 0 (advective form) with the first-order upwind
(Courant-Isaacson-Rees) scheme, e.g. LeVeque, "Finite Volume Methods for
Hyperbolic Problems", sec. 4.8:

    fx[i, j] = u (q[i, j] - q[i-1, j])   where u[i, j] > 0
             = u (q[i+1, j] - q[i, j])   otherwise
    fy[i, j] = v (q[i, j] - q[i, j-1])   where v[i, j] > 0
             = v (q[i, j+1] - q[i, j])   otherwise
    out[i, j] = q[i, j] - dt/dx fx[i, j] - dt/dy fy[i, j]

Stable for dt (|u|/dx + |v|/dy) <= 1.

Dimensions: I, J (array axes 0, 1).
Field operators: `upwind_step` (sc.where on the sign of the velocity).
Program: `upwind_program(q, u, v, out, dt, dx, dy)`: one call with an explicit
domain={I: (1, -1), J: (1, -1)}, the interior; the boundary of `out` is untouched.
"""

from __future__ import annotations

import numpy as np

import stencilchain as sc

I = sc.Dimension("I")
J = sc.Dimension("J")

Field2D = sc.Field[[I, J], sc.float64]

DEFAULT_SHAPE = (64, 64)


@sc.field_operator
def upwind_step(
    q: Field2D, u: Field2D, v: Field2D, dt: sc.float64, dx: sc.float64, dy: sc.float64
) -> Field2D:
    fx = sc.where(u > 0.0, u * (q - q(I - 1)), u * (q(I + 1) - q))
    fy = sc.where(v > 0.0, v * (q - q(J - 1)), v * (q(J + 1) - q))
    return q - dt / dx * fx - dt / dy * fy


@sc.program
def upwind_program(
    q: Field2D,
    u: Field2D,
    v: Field2D,
    out: Field2D,
    dt: sc.float64,
    dx: sc.float64,
    dy: sc.float64,
) -> None:
    upwind_step(q, u, v, dt, dx, dy, out=out, domain={I: (1, -1), J: (1, -1)})


PROGRAM = upwind_program


def make_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray | float]:
    """`q` random in [0, 1), velocities `u`, `v` random in [-1, 1), `out` zeros, a unit
    square (dx = 1/nx, dy = 1/ny) and dt at Courant number 0.4 per direction."""
    nx, ny = shape
    dx, dy = 1.0 / nx, 1.0 / ny
    return {
        "q": rng.random(shape),
        "u": rng.uniform(-1.0, 1.0, shape),
        "v": rng.uniform(-1.0, 1.0, shape),
        "out": np.zeros(shape),
        "dt": 0.4 * min(dx, dy),
        "dx": dx,
        "dy": dy,
    }


def reference(
    q: np.ndarray,
    u: np.ndarray,
    v: np.ndarray,
    out: np.ndarray,
    dt: float,
    dx: float,
    dy: float,
) -> dict[str, np.ndarray]:
    """The expected `out`: one upwind step on the interior, unchanged on the boundary."""
    c = (slice(1, -1), slice(1, -1))
    qc, uc, vc = q[c], u[c], v[c]
    fx = np.where(uc > 0.0, uc * (qc - q[:-2, 1:-1]), uc * (q[2:, 1:-1] - qc))
    fy = np.where(vc > 0.0, vc * (qc - q[1:-1, :-2]), vc * (q[1:-1, 2:] - qc))
    expected = out.copy()
    expected[c] = qc - dt / dx * fx - dt / dy * fy
    return {"out": expected}
