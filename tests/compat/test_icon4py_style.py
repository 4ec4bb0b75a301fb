"""The "done when" of issue 22: icon4py-style field operators and programs (icon4py_style.py,
gt4py code with only its imports changed) run on run_gtfn_cpu and run_dace_cpu, in C and
Fortran layouts, with results equal to the embedded executor and to NumPy references
written here with loops over the tables."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain.compat.gt4py as gtx
from tests.compat import icon4py_style as icon
from tests.compat._support import (
    LAYOUTS,
    TOOLCHAINS,
    gather_sum,
    laid_out,
    toolchain,
    torus,
    with_missing,
)

NLEV = 6


def _mesh_inputs(rng: np.random.Generator) -> dict[str, Any]:
    m = torus(4, 3)
    c2e2co = np.concatenate([np.arange(m.n_cells, dtype=np.int32)[:, None], m.c2e2c], axis=1)
    return {
        "mesh": m,
        "c2e": m.c2e,
        "e2c": m.e2c,
        "c2e2co": with_missing(c2e2co, rng),
    }


def _provider(t: dict[str, Any]) -> dict[str, Any]:
    m = t["mesh"]
    return {
        "C2E": gtx.as_connectivity([icon.CellDim, icon.C2EDim], icon.EdgeDim, t["c2e"]),
        "E2C": t["e2c"],  # a plain table: checked by the program at every call
        "C2E2CO": gtx.as_connectivity(
            domain={icon.CellDim: m.n_cells, icon.C2E2CODim: 4},
            codomain=icon.CellDim,
            data=t["c2e2co"],
            skip_value=-1,
        ),
        "Koff": icon.KDim,
    }


def _run(program: Any, backend: Any, args: list[Any], provider: dict[str, Any]) -> None:
    (program if backend is None else program.with_backend(backend))(*args, offset_provider=provider)


@pytest.mark.parametrize("order", LAYOUTS)
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_divergence_and_gradient(name: str, order: str, request: pytest.FixtureRequest) -> None:
    rng = np.random.default_rng(3)
    t = _mesh_inputs(rng)
    m = t["mesh"]
    e = rng.random((m.n_edges, NLEV))
    geofac = rng.random((m.n_cells, 3))
    hs, he, vs, ve = 2, m.n_cells - 1, 1, NLEV
    div, grad = np.zeros((m.n_cells, NLEV)), np.zeros((m.n_edges, NLEV))
    args = [laid_out(a, order) for a in (e, geofac, div, grad)] + [hs, he, vs, ve]
    _run(icon.divergence_and_gradient, toolchain(request, name), args, _provider(t))

    want_div = np.zeros_like(div)
    want_div[hs:he, vs:ve] = gather_sum(e, m.c2e, geofac)[hs:he, vs:ve]
    want_grad = np.zeros_like(grad)
    want_grad[:, vs:ve] = (want_div[m.e2c[:, 1]] - want_div[m.e2c[:, 0]])[:, vs:ve]
    np.testing.assert_allclose(args[2], want_div, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(args[3], want_grad, rtol=1e-13, atol=1e-14)
    if name != "embedded":
        embedded = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        embedded[2][:], embedded[3][:] = 0.0, 0.0
        _run(icon.divergence_and_gradient, None, embedded, _provider(t))
        np.testing.assert_array_equal(args[2], embedded[2])
        np.testing.assert_allclose(args[3], embedded[3], rtol=1e-15, atol=0)


@pytest.mark.parametrize("order", LAYOUTS)
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_half_levels_mixed_precision(name: str, order: str, request: pytest.FixtureRequest) -> None:
    """Interface fields (wgtfac_c, theta_ic) on NLEV + 1 levels beside full-level fields on
    NLEV in the same calls; the gradient reads the top interface level, which the caller
    set (as the other interface level the interpolation does not write)."""
    rng = np.random.default_rng(4)
    nc = 7
    wgtfac = rng.random((nc, NLEV + 1)).astype(np.float32)
    theta = 250.0 + 50.0 * rng.random((nc, NLEV))
    inv_ddqz = rng.random((nc, NLEV))
    theta_ic0 = (250.0 + 50.0 * rng.random((nc, NLEV + 1))).astype(np.float32)
    dtheta = np.zeros((nc, NLEV))
    inputs = (wgtfac, theta, inv_ddqz, theta_ic0.copy(), dtheta)
    args = [laid_out(a, order) for a in inputs] + [NLEV]
    _run(icon.half_levels, toolchain(request, name), args, {"Koff": icon.KDim})

    th32 = theta.astype(np.float32)
    want_ic = theta_ic0.copy()
    for k in range(1, NLEV):
        want_ic[:, k] = (
            wgtfac[:, k] * th32[:, k] + (np.float32(1.0) - wgtfac[:, k]) * th32[:, k - 1]
        )
    want_dz = np.zeros_like(dtheta)
    for k in range(NLEV):
        want_dz[:, k] = (want_ic[:, k] - want_ic[:, k + 1]).astype(np.float64) * inv_ddqz[:, k]
    assert args[3].dtype == np.float32 and args[3].shape == (nc, NLEV + 1)
    np.testing.assert_allclose(args[3], want_ic, rtol=2e-6)
    np.testing.assert_allclose(args[4], want_dz, rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(args[3][:, [0, NLEV]], theta_ic0[:, [0, NLEV]])
    if name != "embedded":
        embedded = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        embedded[3][:], embedded[4][:] = theta_ic0, 0.0
        _run(icon.half_levels, None, embedded, {"Koff": icon.KDim})
        np.testing.assert_allclose(args[3], embedded[3], rtol=1e-6, atol=0)
        np.testing.assert_allclose(args[4], embedded[4], rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("order", LAYOUTS)
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_smooth_and_integrate(name: str, order: str, request: pytest.FixtureRequest) -> None:
    rng = np.random.default_rng(5)
    t = _mesh_inputs(rng)
    m = t["mesh"]
    nc = m.n_cells
    c_field = rng.random((nc, NLEV)) - 0.4
    geofac = rng.random((nc, 4)) - 0.3
    rho, dz = rng.random((nc, NLEV)), rng.random(nc)
    k_weight = np.arange(NLEV, dtype=np.int32) * 2
    outs = [np.zeros((nc, NLEV)) for _ in range(4)]
    nflatlev = 2
    args = [laid_out(a, order) for a in (c_field, geofac, rho, dz, k_weight, *outs)]
    args += [nflatlev, NLEV]
    _run(icon.smooth_and_integrate, toolchain(request, name), args, _provider(t))

    smoothed = np.maximum(gather_sum(c_field, t["c2e2co"], geofac), 0.0)
    boundary = (np.arange(NLEV) < nflatlev) | (np.arange(NLEV) >= NLEV - 1)
    smoothed[:, boundary] = c_field[:, boundary]
    mass = np.cumsum(rho * dz[:, None], axis=1)
    moment = np.cumsum(mass * dz[:, None], axis=1)
    weighted = smoothed * (k_weight + 1)
    for got, want in zip(args[5:9], (smoothed, mass, moment, weighted)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    if name != "embedded":
        embedded = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        for a in embedded[5:9]:
            a[:] = 0.0
        _run(icon.smooth_and_integrate, None, embedded, _provider(t))
        for got, want in zip(args[5:9], embedded[5:9]):
            np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)
