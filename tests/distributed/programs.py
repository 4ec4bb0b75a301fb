"""Programs for the distributed tests that the examples do not cover: one whose second
call reads, in the halo, what the first wrote, with a temporary used by both stages."""

from __future__ import annotations

import stencilchain as sc
from stencilchain.examples.laplacian import laplacian

I, J = sc.Dimension("I"), sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]


@sc.field_operator
def east_sum(t: F) -> F:
    return t(I + 1) + t


@sc.field_operator
def combine(a: F, t: F, weight: sc.float64) -> F:
    return a(J - 1) * weight + t(J + 1) - a(I - 1)


@sc.program
def carried_temporary(f: F, a: F, out: F, weight: sc.float64) -> None:
    t = laplacian(f)
    east_sum(t, out=a)
    combine(a, t, weight, out=out)


# On a partitioned mesh: E2C allows no skip values, so the outer halo edges' rows get a
# stand-in neighbour (never read by an owned cell), and the edges' mean is read back
# through C2E.
Cell, Edge = sc.Dimension("Cell"), sc.Dimension("Edge")
E2CDim = sc.Dimension("E2CDim", kind=sc.LOCAL)
C2EDim = sc.Dimension("C2EDim", kind=sc.LOCAL)
E2C = sc.Connectivity("E2C", source=Cell, target=(Edge, E2CDim), max_neighbors=2)
C2E = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=3)
CellF = sc.Field[[Cell], sc.float64]
EdgeF = sc.Field[[Edge], sc.float64]


@sc.field_operator
def edge_mean(u: CellF) -> EdgeF:
    return 0.5 * sc.neighbor_sum(u(E2C), axis=E2CDim)


@sc.field_operator
def cell_sum(m: EdgeF) -> CellF:
    return sc.neighbor_sum(m(C2E), axis=C2EDim)


@sc.program
def through_edges(u: CellF, e2c: sc.Table[E2C], c2e: sc.Table[C2E], out: CellF) -> None:
    m = edge_mean(u)
    cell_sum(m, out=out)
