"""A tridiagonal solve in every column (Thomas algorithm), as two vertical scans.

Solves, in every column (i, j), the system

    a[k] x[k-1] + b[k] x[k] + c[k] x[k+1] = d[k],   k = 0 .. nk-1

(a[0] and c[nk-1] are not used), as an implicit vertical diffusion or a vertical
dycore step does, e.g. Press et al., "Numerical Recipes", sec. 2.4:

    forward sweep:         c'[k] = c[k] / (b[k] - a[k] c'[k-1])
                           d'[k] = (d[k] - a[k] d'[k-1]) / (b[k] - a[k] c'[k-1])
    backward substitution: x[k] = d'[k] - c'[k] x[k+1]

with c'[-1] = d'[-1] = 0 and x[nk] = 0. Stable for diagonally dominant systems.

Dimensions: I, J, K (array axes 0, 1, 2); the scans run along K.
Scan operators: `thomas_forward` (a 2-tuple state, upwards) and `thomas_backward`
(a scalar state, downwards, `forward=False`).
Program: `tridiagonal_solve(a, b, c, d, x)`: the forward sweep makes two temporaries
(c', d') that the backward substitution reads.
"""

from __future__ import annotations

import numpy as np

import stencilchain as sc

I = sc.Dimension("I")
J = sc.Dimension("J")
K = sc.Dimension("K")

Field3D = sc.Field[[I, J, K], sc.float64]

DEFAULT_SHAPE = (32, 32, 20)


@sc.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def thomas_forward(state, a: Field3D, b: Field3D, c: Field3D, d: Field3D):  # type: ignore[no-untyped-def]
    c_below, d_below = state
    denominator = b - a * c_below
    return c / denominator, (d - a * d_below) / denominator


@sc.scan_operator(axis=K, forward=False, init=0.0)
def thomas_backward(x_above, c_prime: Field3D, d_prime: Field3D):  # type: ignore[no-untyped-def]
    return d_prime - c_prime * x_above


@sc.program
def tridiagonal_solve(a: Field3D, b: Field3D, c: Field3D, d: Field3D, x: Field3D) -> None:
    c_prime, d_prime = thomas_forward(a, b, c, d)
    thomas_backward(c_prime, d_prime, out=x)


PROGRAM = tridiagonal_solve


def make_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray | float]:
    """Off-diagonals `a`, `c` random in [-1, 0) (zero where they leave the column), a
    diagonally dominant `b` = 2.5 + |a| + |c|, a random right-hand side `d`, `x` zeros."""
    a = rng.uniform(-1.0, 0.0, shape)
    c = rng.uniform(-1.0, 0.0, shape)
    a[..., 0] = 0.0
    c[..., -1] = 0.0
    return {
        "a": a,
        "b": 2.5 + np.abs(a) + np.abs(c),
        "c": c,
        "d": rng.random(shape),
        "x": np.zeros(shape),
    }


def reference(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, x: np.ndarray
) -> dict[str, np.ndarray]:
    """The expected `x`: the Thomas algorithm, a loop over K vectorized over I and J."""
    nk = a.shape[2]
    c_prime = np.empty(a.shape)
    d_prime = np.empty(a.shape)
    c_below = np.zeros(a.shape[:2])
    d_below = np.zeros(a.shape[:2])
    for k in range(nk):
        denominator = b[..., k] - a[..., k] * c_below
        c_below = c_prime[..., k] = c[..., k] / denominator
        d_below = d_prime[..., k] = (d[..., k] - a[..., k] * d_below) / denominator
    expected = np.empty(a.shape)
    x_above = np.zeros(a.shape[:2])
    for k in range(nk - 1, -1, -1):
        x_above = expected[..., k] = d_prime[..., k] - c_prime[..., k] * x_above
    return {"x": expected}
