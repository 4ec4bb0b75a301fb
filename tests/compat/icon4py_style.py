"""Field operators and programs as icon4py writes them, in gt4py.next's spelling.

Only the imports differ from gt4py code: `import gt4py.next as gtx` became the line below,
and `from gt4py.next import ...` / `from gt4py.next.experimental import concat_where` the
two after it. Unstructured (C2E, E2C, C2E2CO with missing neighbours), offset_provider,
half levels (interface fields with nlev + 1 levels beside full-level fields with nlev, in
one call, as icon4py passes them), scans with a tuple state, concat_where on scalar
bounds, mixed precision (vpfloat = float32 against wpfloat = float64) by astype, domain
bounds from int32 program parameters."""

import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import Dims, Field, astype, broadcast, int32, neighbor_sum, where
from stencilchain.compat.gt4py.experimental import concat_where

wpfloat = gtx.float64
vpfloat = gtx.float32

CellDim = gtx.Dimension("Cell")
EdgeDim = gtx.Dimension("Edge")
KDim = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
C2EDim = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
E2CDim = gtx.Dimension("E2C", kind=gtx.DimensionKind.LOCAL)
C2E2CODim = gtx.Dimension("C2E2CO", kind=gtx.DimensionKind.LOCAL)
C2E = gtx.FieldOffset("C2E", source=EdgeDim, target=(CellDim, C2EDim))
E2C = gtx.FieldOffset("E2C", source=CellDim, target=(EdgeDim, E2CDim))
C2E2CO = gtx.FieldOffset("C2E2CO", source=CellDim, target=(CellDim, C2E2CODim))
Koff = gtx.FieldOffset("Koff", source=KDim, target=(KDim,))


@gtx.field_operator
def _cell_average(
    e_field: Field[Dims[EdgeDim, KDim], wpfloat],
    geofac_div: Field[Dims[CellDim, C2EDim], wpfloat],
) -> Field[Dims[CellDim, KDim], wpfloat]:
    return neighbor_sum(e_field(C2E) * geofac_div, axis=C2EDim)


@gtx.field_operator
def _edge_difference(
    c_field: Field[Dims[CellDim, KDim], wpfloat],
) -> Field[Dims[EdgeDim, KDim], wpfloat]:
    return c_field(E2C[1]) - c_field(E2C[0])


@gtx.field_operator
def _smooth_cells(
    c_field: Field[Dims[CellDim, KDim], wpfloat],
    geofac_n2s: Field[Dims[CellDim, C2E2CODim], wpfloat],
) -> Field[Dims[CellDim, KDim], wpfloat]:
    return neighbor_sum(geofac_n2s * c_field(C2E2CO), axis=C2E2CODim)


@gtx.field_operator
def _interpolate_to_half_levels(
    wgtfac_c: Field[Dims[CellDim, KDim], vpfloat],
    theta: Field[Dims[CellDim, KDim], wpfloat],
) -> Field[Dims[CellDim, KDim], vpfloat]:
    theta_vp = astype(theta, vpfloat)
    return wgtfac_c * theta_vp + (vpfloat(1.0) - wgtfac_c) * theta_vp(Koff[-1])


@gtx.field_operator
def _vertical_gradient(
    theta_ic: Field[Dims[CellDim, KDim], vpfloat],
    inv_ddqz: Field[Dims[CellDim, KDim], wpfloat],
) -> Field[Dims[CellDim, KDim], wpfloat]:
    return astype(theta_ic - theta_ic(Koff[1]), wpfloat) * inv_ddqz


@gtx.field_operator
def _boundary_or_smoothed(
    c_field: Field[Dims[CellDim, KDim], wpfloat],
    geofac_n2s: Field[Dims[CellDim, C2E2CODim], wpfloat],
    nflatlev: int32,
    nlev: int32,
) -> Field[Dims[CellDim, KDim], wpfloat]:
    smoothed = _smooth_cells(c_field, geofac_n2s)
    return concat_where(
        (KDim < nflatlev) | (KDim >= nlev - 1), c_field, where(smoothed > 0.0, smoothed, 0.0)
    )


@gtx.scan_operator(axis=KDim, forward=True, init=(0.0, 0.0))
def _column_integral(state: tuple[float, float], rho: float, dz: float) -> tuple[float, float]:
    mass = state[0] + rho * dz
    return mass, state[1] + mass * dz


@gtx.field_operator
def _column_mass(
    rho: Field[Dims[CellDim, KDim], wpfloat],
    dz: Field[Dims[CellDim], wpfloat],
) -> tuple[Field[Dims[CellDim, KDim], wpfloat], Field[Dims[CellDim, KDim], wpfloat]]:
    return _column_integral(rho, broadcast(dz, (CellDim, KDim)))


@gtx.field_operator
def _index_weighted(
    c_field: Field[Dims[CellDim, KDim], wpfloat], k_weight: Field[Dims[KDim], int32]
) -> Field[Dims[CellDim, KDim], wpfloat]:
    return c_field * astype(k_weight + 1, wpfloat)


@gtx.program(grid_type=gtx.GridType.UNSTRUCTURED)
def divergence_and_gradient(
    e_field: Field[Dims[EdgeDim, KDim], wpfloat],
    geofac_div: Field[Dims[CellDim, C2EDim], wpfloat],
    div: Field[Dims[CellDim, KDim], wpfloat],
    grad: Field[Dims[EdgeDim, KDim], wpfloat],
    horizontal_start: int32,
    horizontal_end: int32,
    vertical_start: int32,
    vertical_end: int32,
):
    _cell_average(
        e_field,
        geofac_div,
        out=div,
        domain={CellDim: (horizontal_start, horizontal_end), KDim: (vertical_start, vertical_end)},
    )
    _edge_difference(div, out=grad, domain={KDim: (vertical_start, vertical_end)})


@gtx.program
def half_levels(
    wgtfac_c: Field[Dims[CellDim, KDim], vpfloat],
    theta: Field[Dims[CellDim, KDim], wpfloat],
    inv_ddqz: Field[Dims[CellDim, KDim], wpfloat],
    theta_ic: Field[Dims[CellDim, KDim], vpfloat],
    dtheta_dz: Field[Dims[CellDim, KDim], wpfloat],
    nlev: int32,
):
    _interpolate_to_half_levels(wgtfac_c, theta, out=theta_ic, domain={KDim: (1, nlev)})
    _vertical_gradient(theta_ic, inv_ddqz, out=dtheta_dz, domain={KDim: (0, nlev)})


@gtx.program
def smooth_and_integrate(
    c_field: Field[Dims[CellDim, KDim], wpfloat],
    geofac_n2s: Field[Dims[CellDim, C2E2CODim], wpfloat],
    rho: Field[Dims[CellDim, KDim], wpfloat],
    dz: Field[Dims[CellDim], wpfloat],
    k_weight: Field[Dims[KDim], int32],
    smoothed: Field[Dims[CellDim, KDim], wpfloat],
    mass: Field[Dims[CellDim, KDim], wpfloat],
    moment: Field[Dims[CellDim, KDim], wpfloat],
    weighted: Field[Dims[CellDim, KDim], wpfloat],
    nflatlev: int32,
    nlev: int32,
):
    _boundary_or_smoothed(c_field, geofac_n2s, nflatlev, nlev, out=smoothed)
    _column_mass(rho, dz, out=(mass, moment))
    _index_weighted(smoothed, k_weight, out=weighted)
