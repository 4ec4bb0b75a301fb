"""Implicit sedimentation of a precipitating hydrometeor, as in ICON's microphysics: a
scan with a 3-tuple state, called inside a field operator that computes its inputs with
K shifts.

In every column (i, j) the levels k = 0 .. nk-1 run from the model top down; `z_ifc[k]`
is the height of the upper interface of level k, so the layer thickness is
`dz[k] = z_ifc[k] - z_ifc[k+1]` (a K + 1 shift: the last level has no lower interface
here, so the call covers k = 0 .. nk-2). With the mass density `rq = rho q` and the fall
speed `v = v0 (rho q)^0.2 sqrt(rho0 / rho)`, one implicit upwind step of length `dt`,
from the top down, is

    v_eff[k] = (v[k] + v[k-1]) / 2                 (the speed at the upper interface)
    rq'[k]   = (rq[k] + F[k-1] / c[k]) / (1 + v_eff[k] / c[k]),   c[k] = dz[k] / dt
    F[k]     = rq'[k] v_eff[k]                     (the flux out through the lower interface)

with F[-1] = 0 and v[-1] = 0 above the top. The scan's state is (F, rq', v) of the level
above; the field operator turns rq' back into a mixing ratio.

Dimensions: I, J, K (array axes 0, 1, 2); the scan runs along K.
Scan operator: `implicit_fall` (forward, a 3-tuple state).
Field operator: `sediment` computes c = dz / dt with a K + 1 shift, rq and v, calls the
scan and divides by rho.
Program: `sedimentation(q, rho, z_ifc, q_new, flux, dt)`.
"""

from __future__ import annotations

import numpy as np

import stencilchain as sc

I = sc.Dimension("I")
J = sc.Dimension("J")
K = sc.Dimension("K")

Field3D = sc.Field[[I, J, K], sc.float64]

DEFAULT_SHAPE = (16, 12, 20)
V0 = 4.0  # fall speed of 1 kg/m3 of hydrometeor mass at the reference density, m/s
RHO0 = 1.2  # reference air density, kg/m3


@sc.scan_operator(axis=K, forward=True, init=(0.0, 0.0, 0.0))
def implicit_fall(state, rq: Field3D, v: Field3D, c: Field3D):  # type: ignore[no-untyped-def]
    flux_above, _rq_above, v_above = state
    v_eff = 0.5 * (v + v_above)
    rq_new = (rq + flux_above / c) / (1.0 + v_eff / c)
    return rq_new * v_eff, rq_new, v


@sc.field_operator
def sediment(q: Field3D, rho: Field3D, z_ifc: Field3D, dt: sc.float64):  # type: ignore[no-untyped-def]
    rq = rho * q
    v = V0 * rq**0.2 * sc.math.sqrt(RHO0 / rho)
    flux, rq_new, _v = implicit_fall(rq, v, (z_ifc - z_ifc(K + 1)) / dt)
    return rq_new / rho, flux


@sc.program
def sedimentation(
    q: Field3D, rho: Field3D, z_ifc: Field3D, q_new: Field3D, flux: Field3D, dt: sc.float64
) -> None:
    sediment(q, rho, z_ifc, dt, out=(q_new, flux))


PROGRAM = sedimentation


def make_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray | float]:
    """Mixing ratios up to 2 g/kg, air density falling from 1.2 kg/m3 at the ground to 0.6
    at the top, interfaces 200 to 400 m apart (the top one highest), outputs zeros, dt = 30 s."""
    nk = shape[2]
    down = np.linspace(0.0, 1.0, nk)  # 0 at the top level, 1 at the ground
    rho = np.broadcast_to(0.6 + 0.6 * down, shape) + 0.02 * rng.random(shape)
    thickness = rng.uniform(200.0, 400.0, shape)
    z_ifc = np.flip(np.cumsum(np.flip(thickness, axis=2), axis=2), axis=2)
    return {
        "q": rng.uniform(0.0, 2e-3, shape),
        "rho": np.ascontiguousarray(rho),
        "z_ifc": z_ifc,
        "q_new": np.zeros(shape),
        "flux": np.zeros(shape),
        "dt": 30.0,
    }


def reference(
    q: np.ndarray,
    rho: np.ndarray,
    z_ifc: np.ndarray,
    q_new: np.ndarray,
    flux: np.ndarray,
    dt: float,
) -> dict[str, np.ndarray]:
    """The expected `q_new` and `flux` on levels 0 .. nk-2 (the others untouched): the
    implicit step, a loop over K from the top, vectorized over I and J."""
    q_new, flux = q_new.copy(), flux.copy()
    flux_above = np.zeros(q.shape[:2])
    v_above = np.zeros(q.shape[:2])
    for k in range(q.shape[2] - 1):
        rq = rho[..., k] * q[..., k]
        v = V0 * rq**0.2 * np.sqrt(RHO0 / rho[..., k])
        c = (z_ifc[..., k] - z_ifc[..., k + 1]) / dt
        v_eff = 0.5 * (v + v_above)
        rq_new = (rq + flux_above / c) / (1.0 + v_eff / c)
        flux_above = flux[..., k] = rq_new * v_eff
        q_new[..., k] = rq_new / rho[..., k]
        v_above = v
    return {"q_new": q_new, "flux": flux}
