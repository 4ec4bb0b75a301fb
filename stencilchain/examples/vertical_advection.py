"""Upwind vertical advection of a tracer on a stretched vertical grid, with one-sided
differences at the first and last levels (`sc.concat_where`).

In every column (i, j), the tendency of a tracer `phi` advected by a vertical velocity `w`
(positive towards increasing k) is

    tendency[k] = -w[k] * (phi[k] - phi[k-1]) / dz[k]   where w[k] > 0 (upwind: from below)
    tendency[k] = -w[k] * (phi[k+1] - phi[k]) / dz[k]   elsewhere (from above)

with layers that thicken with height, dz[k] = dz0 * (1 + stretch * k) (`sc.index(K)`). At
k = 0 there is no level below and at k = nk-1 none above: the difference is one-sided
there whatever the sign of w, and a column of one level has no vertical gradient (0).

Each branch of a concat_where is evaluated only where it is selected, so the interior's
reads of phi[k-1] and phi[k+1] never happen at the first and last levels: the inferred
domain is every level, not [1, nk-1).

Dimensions: I, J, K (array axes 0, 1, 2).
Program: `vertical_advection(phi, w, dz0, stretch, tendency)`.
"""

from __future__ import annotations

import numpy as np

import stencilchain as sc

I = sc.Dimension("I")
J = sc.Dimension("J")
K = sc.Dimension("K")

Field3D = sc.Field[[I, J, K], sc.float64]

DEFAULT_SHAPE = (32, 32, 20)


@sc.field_operator
def upwind_tendency(phi: Field3D, w: Field3D, dz0: sc.float64, stretch: sc.float64) -> Field3D:
    level = sc.astype(sc.index(K), sc.float64)
    inverse_dz = 1.0 / (dz0 * (1.0 + stretch * level))
    from_below = phi - phi(K - 1)
    from_above = phi(K + 1) - phi
    upwind = sc.where(w > 0.0, from_below, from_above)
    difference = sc.concat_where(
        K == 0, from_above, sc.concat_where(K == sc.size(K) - 1, from_below, upwind)
    )
    single_level = (K == 0) & (K == sc.size(K) - 1)
    return sc.concat_where(single_level, 0.0, -w * inverse_dz * difference)


@sc.program
def vertical_advection(
    phi: Field3D, w: Field3D, dz0: sc.float64, stretch: sc.float64, tendency: Field3D
) -> None:
    upwind_tendency(phi, w, dz0, stretch, out=tendency)


PROGRAM = vertical_advection


def make_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray | float]:
    """A random tracer, a vertical velocity of both signs, 50 m layers thickening by 10 %
    per level, the tendency zeros."""
    return {
        "phi": rng.random(shape),
        "w": rng.uniform(-1.0, 1.0, shape),
        "dz0": 50.0,
        "stretch": 0.1,
        "tendency": np.zeros(shape),
    }


def reference(
    phi: np.ndarray, w: np.ndarray, dz0: float, stretch: float, tendency: np.ndarray
) -> dict[str, np.ndarray]:
    """The expected tendency, with NumPy slicing."""
    nk = phi.shape[2]
    if nk == 1:
        return {"tendency": np.zeros(phi.shape)}
    from_below = np.empty(phi.shape)
    from_above = np.empty(phi.shape)
    from_below[..., 1:] = phi[..., 1:] - phi[..., :-1]
    from_above[..., :-1] = phi[..., 1:] - phi[..., :-1]
    difference = np.empty(phi.shape)
    difference[..., 1:-1] = np.where(
        w[..., 1:-1] > 0.0, from_below[..., 1:-1], from_above[..., 1:-1]
    )
    difference[..., 0] = from_above[..., 0]
    difference[..., -1] = from_below[..., -1]
    dz = dz0 * (1.0 + stretch * np.arange(nk, dtype=np.float64))
    return {"tendency": -w * (1.0 / dz) * difference}
