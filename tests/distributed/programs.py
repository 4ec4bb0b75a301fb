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
