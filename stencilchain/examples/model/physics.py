"""The model's stencil programs: a tracer advected by a horizontal wind, diffused
horizontally (explicitly) and vertically (implicitly, by a tridiagonal solve per column).

    rk_stage:            out = a q0 + b (q + dt L(q)), with L(q) = nu lap(q) - upwind advection
    vertical_diffusion:  out solves (1 + 2r) x_k - r x_(k-1) - r x_(k+1) = q_k in each column,
                         with no flux through the bottom and the top (r = kappa dt / dz^2)

Three `rk_stage` calls make one step of the SSP Runge-Kutta scheme of order three
(Shu and Osher, J. Comput. Phys. 77, 1988, eq. 2.18), then `vertical_diffusion`.
"""

from __future__ import annotations

import stencilchain as sc
from stencilchain.examples.tridiagonal import I, J, K, thomas_backward, thomas_forward

F = sc.Field[[I, J, K], sc.float64]


@sc.field_operator
def upwind_x(q: F, u: F) -> F:
    return sc.where(u > 0.0, u * (q - q(I - 1)), u * (q(I + 1) - q))


@sc.field_operator
def upwind_y(q: F, v: F) -> F:
    return sc.where(v > 0.0, v * (q - q(J - 1)), v * (q(J + 1) - q))


@sc.field_operator
def tendency(q: F, u: F, v: F, rdx: sc.float64, rdy: sc.float64, nu: sc.float64) -> F:
    diffusion = (q(I + 1) + q(I - 1) - 2.0 * q) * (rdx * rdx) + (q(J + 1) + q(J - 1) - 2.0 * q) * (
        rdy * rdy
    )
    return nu * diffusion - (upwind_x(q, u) * rdx + upwind_y(q, v) * rdy)


@sc.field_operator
def rk_update(q0: F, q: F, tend: F, dt: sc.float64, a: sc.float64, b: sc.float64) -> F:
    return a * q0 + b * (q + dt * tend)


@sc.program
def rk_stage(
    q0: F,
    q: F,
    u: F,
    v: F,
    out: F,
    dt: sc.float64,
    a: sc.float64,
    b: sc.float64,
    rdx: sc.float64,
    rdy: sc.float64,
    nu: sc.float64,
) -> None:
    tend = tendency(q, u, v, rdx, rdy, nu)
    rk_update(q0, q, tend, dt, a, b, out=out)


@sc.field_operator
def below(q: F, r: sc.float64) -> F:
    """The coefficient of x_(k-1): none at the bottom level."""
    return sc.where(sc.index(K) == 0, 0.0 * q, -r + 0.0 * q)


@sc.field_operator
def above(q: F, r: sc.float64, top: sc.int64) -> F:
    """The coefficient of x_(k+1): none at the top level."""
    return sc.where(sc.index(K) == top, 0.0 * q, -r + 0.0 * q)


@sc.field_operator
def diagonal(q: F, r: sc.float64, top: sc.int64) -> F:
    """1 + r for each neighbour a level has."""
    neighbours = sc.where(sc.index(K) == 0, 1.0, 2.0) - sc.where(sc.index(K) == top, 1.0, 0.0)
    return 1.0 + r * neighbours + 0.0 * q


@sc.program
def vertical_diffusion(q: F, out: F, r: sc.float64, top: sc.int64) -> None:
    a = below(q, r)
    b = diagonal(q, r, top)
    c = above(q, r, top)
    c_prime, d_prime = thomas_forward(a, b, c, q)
    thomas_backward(c_prime, d_prime, out=out)


PROGRAMS = (rk_stage, vertical_diffusion)
