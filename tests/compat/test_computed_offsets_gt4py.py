"""Computed offsets of `as_offset` as icon4py writes them, in gt4py's spelling: its
`truly_horizontal_diffusion_nabla_of_theta_over_steep_points` and
`compute_hydrostatic_correction_term` (only the imports changed; wpfloat = vpfloat =
float64), `theta_v(C2E2C[0])(as_offset(Koff, zd_vertoffset[C2E2CDim(0)] + 1))`, with
icon4py's test data (offsets to every level but the last), embedded and on every CPU
toolchain, in C and Fortran order, against NumPy references written here after icon4py's.
An offset whose `+ 1` leaves the column is an ArgumentError before anything is written,
unless the read is in a branch of `where` not taken: ICON's metrics leave `zd_vertoffset`
0 where a cell is not steep, and `apply_diffusion_to_theta_and_exner` reads the steep
points' term only `where(zd_diffcoef != 0.0, ...)`."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import Dims, Field, astype
from stencilchain.compat.gt4py.experimental import as_offset

from ._support import laid_out, torus

wpfloat = vpfloat = gtx.float64
CellDim = gtx.Dimension("Cell")
EdgeDim = gtx.Dimension("Edge")
KDim = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
C2E2CDim = gtx.Dimension("C2E2C", kind=gtx.DimensionKind.LOCAL)
E2CDim = gtx.Dimension("E2C", kind=gtx.DimensionKind.LOCAL)
C2E2C = gtx.FieldOffset("C2E2C", source=CellDim, target=(CellDim, C2E2CDim))
E2C = gtx.FieldOffset("E2C", source=CellDim, target=(EdgeDim, E2CDim))
Koff = gtx.FieldOffset("Koff", source=KDim, target=(KDim,))
CellKField = Field[Dims[CellDim, KDim], wpfloat]
EdgeKField = Field[Dims[EdgeDim, KDim], wpfloat]

TOOLCHAINS = ["embedded", "gtfn_cpu", "gtfn_cpu_no_transforms"]
if importlib.util.find_spec("dace") is not None:
    TOOLCHAINS += ["dace_cpu", "dace_cpu_noopt"]
NLEV = 6


@gtx.field_operator
def _truly_horizontal_diffusion_nabla_of_theta_over_steep_points(
    zd_vertoffset: gtx.Field[gtx.Dims[CellDim, C2E2CDim, KDim], gtx.int32],
    zd_diffcoef: CellKField,
    geofac_n2s_c: Field[Dims[CellDim], wpfloat],
    geofac_n2s_nbh: gtx.Field[gtx.Dims[CellDim, C2E2CDim], wpfloat],
    vcoef: gtx.Field[gtx.Dims[CellDim, C2E2CDim, KDim], wpfloat],
    theta_v: CellKField,
    z_temp: CellKField,
) -> CellKField:
    z_temp_wp = astype(z_temp, wpfloat)

    theta_v_0 = theta_v(C2E2C[0])(as_offset(Koff, zd_vertoffset[C2E2CDim(0)]))
    theta_v_1 = theta_v(C2E2C[1])(as_offset(Koff, zd_vertoffset[C2E2CDim(1)]))
    theta_v_2 = theta_v(C2E2C[2])(as_offset(Koff, zd_vertoffset[C2E2CDim(2)]))

    theta_v_0_m1 = theta_v(C2E2C[0])(as_offset(Koff, zd_vertoffset[C2E2CDim(0)] + 1))
    theta_v_1_m1 = theta_v(C2E2C[1])(as_offset(Koff, zd_vertoffset[C2E2CDim(1)] + 1))
    theta_v_2_m1 = theta_v(C2E2C[2])(as_offset(Koff, zd_vertoffset[C2E2CDim(2)] + 1))

    sum_tmp = (
        theta_v * geofac_n2s_c
        + geofac_n2s_nbh[C2E2CDim(0)]
        * (vcoef[C2E2CDim(0)] * theta_v_0 + (wpfloat("1.0") - vcoef[C2E2CDim(0)]) * theta_v_0_m1)
        + geofac_n2s_nbh[C2E2CDim(1)]
        * (vcoef[C2E2CDim(1)] * theta_v_1 + (wpfloat("1.0") - vcoef[C2E2CDim(1)]) * theta_v_1_m1)
        + geofac_n2s_nbh[C2E2CDim(2)]
        * (vcoef[C2E2CDim(2)] * theta_v_2 + (wpfloat("1.0") - vcoef[C2E2CDim(2)]) * theta_v_2_m1)
    )
    z_temp_wp = z_temp_wp + zd_diffcoef * sum_tmp
    return astype(z_temp_wp, vpfloat)


@gtx.program(grid_type=gtx.GridType.UNSTRUCTURED)
def truly_horizontal_diffusion_nabla_of_theta_over_steep_points(
    zd_vertoffset: gtx.Field[gtx.Dims[CellDim, C2E2CDim, KDim], gtx.int32],
    zd_diffcoef: CellKField,
    geofac_n2s_c: Field[Dims[CellDim], wpfloat],
    geofac_n2s_nbh: gtx.Field[gtx.Dims[CellDim, C2E2CDim], wpfloat],
    vcoef: gtx.Field[gtx.Dims[CellDim, C2E2CDim, KDim], wpfloat],
    theta_v: CellKField,
    z_temp: CellKField,
    horizontal_start: gtx.int32,
    horizontal_end: gtx.int32,
    vertical_start: gtx.int32,
    vertical_end: gtx.int32,
) -> None:
    _truly_horizontal_diffusion_nabla_of_theta_over_steep_points(
        zd_vertoffset=zd_vertoffset,
        zd_diffcoef=zd_diffcoef,
        geofac_n2s_c=geofac_n2s_c,
        geofac_n2s_nbh=geofac_n2s_nbh,
        vcoef=vcoef,
        theta_v=theta_v,
        z_temp=z_temp,
        out=z_temp,
        domain={
            CellDim: (horizontal_start, horizontal_end),
            KDim: (vertical_start, vertical_end),
        },
    )


@gtx.field_operator
def _masked_steep_points(
    zd_vertoffset: gtx.Field[gtx.Dims[CellDim, C2E2CDim, KDim], gtx.int32],
    zd_diffcoef: CellKField,
    geofac_n2s_c: Field[Dims[CellDim], wpfloat],
    geofac_n2s_nbh: gtx.Field[gtx.Dims[CellDim, C2E2CDim], wpfloat],
    vcoef: gtx.Field[gtx.Dims[CellDim, C2E2CDim, KDim], wpfloat],
    theta_v: CellKField,
    z_temp: CellKField,
) -> CellKField:
    """As icon4py's `_apply_diffusion_to_theta_and_exner` calls it."""
    return gtx.where(
        zd_diffcoef != 0.0,
        _truly_horizontal_diffusion_nabla_of_theta_over_steep_points(
            zd_vertoffset, zd_diffcoef, geofac_n2s_c, geofac_n2s_nbh, vcoef, theta_v, z_temp
        ),
        z_temp,
    )


@gtx.program(grid_type=gtx.GridType.UNSTRUCTURED)
def masked_steep_points(
    zd_vertoffset: gtx.Field[gtx.Dims[CellDim, C2E2CDim, KDim], gtx.int32],
    zd_diffcoef: CellKField,
    geofac_n2s_c: Field[Dims[CellDim], wpfloat],
    geofac_n2s_nbh: gtx.Field[gtx.Dims[CellDim, C2E2CDim], wpfloat],
    vcoef: gtx.Field[gtx.Dims[CellDim, C2E2CDim, KDim], wpfloat],
    theta_v: CellKField,
    z_temp: CellKField,
    out: CellKField,
    horizontal_start: gtx.int32,
    horizontal_end: gtx.int32,
    vertical_start: gtx.int32,
    vertical_end: gtx.int32,
) -> None:
    _masked_steep_points(
        zd_vertoffset,
        zd_diffcoef,
        geofac_n2s_c,
        geofac_n2s_nbh,
        vcoef,
        theta_v,
        z_temp,
        out=out,
        domain={
            CellDim: (horizontal_start, horizontal_end),
            KDim: (vertical_start, vertical_end),
        },
    )


@gtx.field_operator
def _compute_hydrostatic_correction_term(
    theta_v: CellKField,
    ikoffset: gtx.Field[gtx.Dims[EdgeDim, E2CDim, KDim], gtx.int32],
    zdiff_gradp: gtx.Field[gtx.Dims[EdgeDim, E2CDim, KDim], vpfloat],
    theta_v_ic: CellKField,
    inv_ddqz_z_full: CellKField,
    inv_dual_edge_length: Field[Dims[EdgeDim], wpfloat],
    grav_o_cpd: wpfloat,
) -> EdgeKField:
    zdiff_gradp_wp = zdiff_gradp

    theta_v_0 = theta_v(E2C[0])(as_offset(Koff, ikoffset[E2CDim(0)]))
    theta_v_1 = theta_v(E2C[1])(as_offset(Koff, ikoffset[E2CDim(1)]))

    theta_v_ic_0 = theta_v_ic(E2C[0])(as_offset(Koff, ikoffset[E2CDim(0)]))
    theta_v_ic_1 = theta_v_ic(E2C[1])(as_offset(Koff, ikoffset[E2CDim(1)]))

    theta_v_ic_p1_0 = theta_v_ic(E2C[0])(as_offset(Koff, ikoffset[E2CDim(0)] + 1))
    theta_v_ic_p1_1 = theta_v_ic(E2C[1])(as_offset(Koff, ikoffset[E2CDim(1)] + 1))

    inv_ddqz_z_full_0_wp = astype(
        inv_ddqz_z_full(E2C[0])(as_offset(Koff, ikoffset[E2CDim(0)])), wpfloat
    )
    inv_ddqz_z_full_1_wp = astype(
        inv_ddqz_z_full(E2C[1])(as_offset(Koff, ikoffset[E2CDim(1)])), wpfloat
    )

    z_theta_0 = (
        theta_v_0
        + zdiff_gradp_wp[E2CDim(0)] * (theta_v_ic_0 - theta_v_ic_p1_0) * inv_ddqz_z_full_0_wp
    )
    z_theta_1 = (
        theta_v_1
        + zdiff_gradp_wp[E2CDim(1)] * (theta_v_ic_1 - theta_v_ic_p1_1) * inv_ddqz_z_full_1_wp
    )
    z_hydro_corr_wp = (
        grav_o_cpd
        * inv_dual_edge_length
        * (z_theta_1 - z_theta_0)
        * wpfloat("4.0")
        / ((z_theta_0 + z_theta_1) * (z_theta_0 + z_theta_1))
    )
    return astype(z_hydro_corr_wp, vpfloat)


@gtx.program(grid_type=gtx.GridType.UNSTRUCTURED)
def compute_hydrostatic_correction_term(
    theta_v: CellKField,
    ikoffset: gtx.Field[gtx.Dims[EdgeDim, E2CDim, KDim], gtx.int32],
    zdiff_gradp: gtx.Field[gtx.Dims[EdgeDim, E2CDim, KDim], vpfloat],
    theta_v_ic: CellKField,
    inv_ddqz_z_full: CellKField,
    inv_dual_edge_length: Field[Dims[EdgeDim], wpfloat],
    grav_o_cpd: wpfloat,
    z_hydro_corr: EdgeKField,
    horizontal_start: gtx.int32,
    horizontal_end: gtx.int32,
    vertical_start: gtx.int32,
    vertical_end: gtx.int32,
) -> None:
    _compute_hydrostatic_correction_term(
        theta_v=theta_v,
        ikoffset=ikoffset,
        zdiff_gradp=zdiff_gradp,
        theta_v_ic=theta_v_ic,
        inv_ddqz_z_full=inv_ddqz_z_full,
        inv_dual_edge_length=inv_dual_edge_length,
        grav_o_cpd=grav_o_cpd,
        out=z_hydro_corr,
        domain={
            EdgeDim: (horizontal_start, horizontal_end),
            KDim: (vertical_start, vertical_end),
        },
    )


@pytest.fixture(params=TOOLCHAINS)
def backend(request: pytest.FixtureRequest) -> Any:
    return None if request.param == "embedded" else request.getfixturevalue(request.param)


@pytest.fixture(params=["C", "F"])
def order(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _offsets(rng: np.random.Generator, rows: int, slots: int) -> np.ndarray:
    """icon4py's test data: offsets that reach every level but the last (`+ 1` reads it)."""
    out = np.zeros((rows, slots, NLEV), dtype=np.int32)
    for k in range(NLEV):
        out[:, :, k] = rng.integers(-k, NLEV - k - 1, size=(rows, slots))
    return out


def _run(program: Any, backend: Any, args: list[Any], provider: dict[str, Any]) -> None:
    (program if backend is None else program.with_backend(backend))(*args, offset_provider=provider)


def steep_points_reference(
    c2e2c: np.ndarray,
    zd_vertoffset: np.ndarray,
    zd_diffcoef: np.ndarray,
    geofac_n2s_c: np.ndarray,
    geofac_n2s_nbh: np.ndarray,
    vcoef: np.ndarray,
    theta_v: np.ndarray,
    z_temp: np.ndarray,
) -> np.ndarray:
    out = np.array(z_temp)
    for c in range(theta_v.shape[0]):
        for k in range(NLEV):
            total = theta_v[c, k] * geofac_n2s_c[c]
            for s in range(3):
                n, o, w = c2e2c[c, s], int(zd_vertoffset[c, s, k]), vcoef[c, s, k]
                inner = w * theta_v[n, k + o] + (1 - w) * theta_v[n, k + o + 1]
                total += geofac_n2s_nbh[c, s] * inner
            out[c, k] = z_temp[c, k] + zd_diffcoef[c, k] * total
    return out


def test_truly_horizontal_diffusion_over_steep_points(backend: Any, order: str) -> None:
    mesh = torus(4, 3)
    rng = np.random.default_rng(21)
    n = mesh.n_cells
    zd_vertoffset = _offsets(rng, n, 3)
    floats = [rng.random(shape) for shape in ((n, NLEV), (n,), (n, 3), (n, 3, NLEV), (n, NLEV))]
    zd_diffcoef, geofac_n2s_c, geofac_n2s_nbh, vcoef, theta_v = floats
    z_temp = rng.random((n, NLEV))
    expected = steep_points_reference(
        mesh.c2e2c, zd_vertoffset, zd_diffcoef, geofac_n2s_c, geofac_n2s_nbh, vcoef, theta_v,
        z_temp,
    )  # fmt: skip
    args = [laid_out(a, order) for a in (zd_vertoffset, *floats, z_temp)]
    provider = {"C2E2C": mesh.c2e2c, "Koff": KDim}
    program = truly_horizontal_diffusion_nabla_of_theta_over_steep_points
    _run(program, backend, [*args, 0, n, 0, NLEV], provider)
    np.testing.assert_allclose(args[-1], expected, rtol=1e-13)

    zd_vertoffset[3, 2, NLEV - 1] = 0  # `+ 1` reads one past the column
    before = laid_out(z_temp, order)
    args = [laid_out(a, order) for a in (zd_vertoffset, *floats)] + [before]
    with pytest.raises(gtx.ArgumentError, match=r"argument 'zd_vertoffset'.*offset 0 \+1"):
        _run(program, backend, [*args, 0, n, 0, NLEV], provider)
    np.testing.assert_array_equal(before, z_temp)


def test_steep_points_where_zd_diffcoef_is_not_0(backend: Any, order: str) -> None:
    """ICON's metrics: the cells that are not steep have `zd_diffcoef` and
    `zd_vertoffset` 0 on every level, so `+ 1` reads past the column on the last level
    there, in the branch not taken: the call runs, and agrees with the reference."""
    mesh = torus(4, 3)
    rng = np.random.default_rng(22)
    n = mesh.n_cells
    zd_vertoffset = _offsets(rng, n, 3)
    floats = [rng.random(shape) for shape in ((n, NLEV), (n,), (n, 3), (n, 3, NLEV), (n, NLEV))]
    zd_diffcoef, geofac_n2s_c, geofac_n2s_nbh, vcoef, theta_v = floats
    flat = rng.random(n) < 0.5
    assert flat.any() and not flat.all()
    zd_diffcoef[flat] = 0.0
    zd_vertoffset[flat] = 0
    z_temp = rng.random((n, NLEV))
    steep = steep_points_reference(
        mesh.c2e2c, np.where(flat[:, None, None], -1, zd_vertoffset), zd_diffcoef,
        geofac_n2s_c, geofac_n2s_nbh, vcoef, theta_v, z_temp,
    )  # fmt: skip
    expected = np.where(zd_diffcoef != 0.0, steep, z_temp)
    args = [laid_out(a, order) for a in (zd_vertoffset, *floats, z_temp)]
    out = laid_out(np.full((n, NLEV), np.nan), order)
    provider = {"C2E2C": mesh.c2e2c, "Koff": KDim}
    _run(masked_steep_points, backend, [*args, out, 0, n, 0, NLEV], provider)
    np.testing.assert_allclose(out, expected, rtol=1e-13)

    zd_diffcoef[np.argmax(flat), NLEV - 1] = 0.5  # taken where `+ 1` leaves the column
    args = [laid_out(a, order) for a in (zd_vertoffset, *floats, z_temp)]
    out = laid_out(np.zeros((n, NLEV)), order)
    with pytest.raises(gtx.ArgumentError, match=r"argument 'zd_vertoffset'.*branch.*taken"):
        _run(masked_steep_points, backend, [*args, out, 0, n, 0, NLEV], provider)
    assert (out == 0).all()


def hydrostatic_reference(
    e2c: np.ndarray,
    theta_v: np.ndarray,
    ikoffset: np.ndarray,
    zdiff_gradp: np.ndarray,
    theta_v_ic: np.ndarray,
    inv_ddqz_z_full: np.ndarray,
    inv_dual_edge_length: np.ndarray,
    grav_o_cpd: float,
    levels: range,
) -> np.ndarray:
    out = np.zeros((e2c.shape[0], NLEV))
    for e in range(e2c.shape[0]):
        for k in levels:
            z = []
            for s in range(2):
                c, o = e2c[e, s], int(ikoffset[e, s, k])
                gradient = (theta_v_ic[c, k + o] - theta_v_ic[c, k + o + 1]) * inv_ddqz_z_full[
                    c, k + o
                ]
                z.append(theta_v[c, k + o] + zdiff_gradp[e, s, k] * gradient)
            out[e, k] = (
                grav_o_cpd * inv_dual_edge_length[e] * (z[1] - z[0]) * 4.0 / ((z[0] + z[1]) ** 2)
            )
    return out


@pytest.mark.parametrize("vertical_start", [0, NLEV - 1])
def test_hydrostatic_correction_term_beside_half_levels(
    backend: Any, order: str, vertical_start: int
) -> None:
    """`theta_v_ic` on nlev + 1 half levels as ICON passes it; the domain of icon4py's test
    (the last level) and the whole column."""
    mesh = torus(4, 3)
    rng = np.random.default_rng(22)
    ne, nc = mesh.n_edges, mesh.n_cells
    ikoffset = _offsets(rng, ne, 2)
    theta_v = rng.random((nc, NLEV)) + 1.0
    zdiff_gradp = rng.random((ne, 2, NLEV))
    theta_v_ic = rng.random((nc, NLEV + 1)) + 1.0
    inv_ddqz_z_full = rng.random((nc, NLEV))
    inv_dual_edge_length = rng.random(ne)
    out = laid_out(np.zeros((ne, NLEV)), order)
    inputs = (theta_v, ikoffset, zdiff_gradp, theta_v_ic, inv_ddqz_z_full, inv_dual_edge_length)
    args = [laid_out(a, order) for a in inputs]
    provider = {"E2C": mesh.e2c, "Koff": KDim}
    bounds = [0, ne, vertical_start, NLEV]
    _run(compute_hydrostatic_correction_term, backend, [*args, 10.0, out, *bounds], provider)
    expected = hydrostatic_reference(mesh.e2c, *inputs, 10.0, range(vertical_start, NLEV))
    np.testing.assert_allclose(out, expected, rtol=1e-12)
