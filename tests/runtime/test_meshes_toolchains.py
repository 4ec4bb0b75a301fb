"""Unstructured-mesh programs on the compiled toolchains: not compiled yet, which each
toolchain says plainly (an UnsupportedError naming the construct and the embedded
executor), before it builds anything."""

from __future__ import annotations

import pytest

import stencilchain as sc

Cell, Edge = sc.Dimension("Cell"), sc.Dimension("Edge")
C2EDim = sc.Dimension("C2EDim", kind=sc.LOCAL)
C2E = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=3)


@sc.field_operator
def cell_sum(e: sc.Field[[Edge], sc.float64]) -> sc.Field[[Cell], sc.float64]:
    return sc.neighbor_sum(e(C2E), axis=C2EDim)


@sc.program
def sums(
    e: sc.Field[[Edge], sc.float64], c2e: sc.Table[C2E], out: sc.Field[[Cell], sc.float64]
) -> None:
    cell_sum(e, out=out)


@pytest.mark.parametrize("fixture", ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu"])
def test_compiled_toolchains_refuse_neighbour_reads_plainly(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    toolchain = request.getfixturevalue(fixture)
    with pytest.raises(sc.UnsupportedError, match=r"neighbour .* embedded executor"):
        toolchain.compile(sums.ir)
