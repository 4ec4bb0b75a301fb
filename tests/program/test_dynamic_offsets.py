"""Data-dependent vertical offsets, `f(sc.as_offset(K, off))`, on the embedded executor:
`f` read at `k + off[point]` (ICON's steep-terrain diffusion), shifted afterwards, through a
called field operator, with int32 and int64 offsets; against NumPy loops. An offset that
leaves the array is an ArgumentError before anything is written; misuse is a
DefinitionError at the user's line."""

from __future__ import annotations

import os

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.errors import ArgumentError, DefinitionError

from . import test_meshes_embedded as mesh
from ._support import assert_located

Cell = sc.Dimension("Cell")
K = sc.Dimension("K", kind=sc.VERTICAL)
CellK = sc.Field[[Cell, K], sc.float64]
CellKI = sc.Field[[Cell, K], sc.int32]
CellKI64 = sc.Field[[Cell, K], sc.int64]
CellF = sc.Field[[Cell], sc.float64]
HERE = os.path.abspath(__file__)
N_CELLS, N_K = 5, 7
EdgeKI = sc.Field[[mesh.Edge, mesh.K], sc.int32]


@sc.field_operator
def steep(theta: CellK, off: CellKI) -> CellK:
    return theta(sc.as_offset(K, off)) - theta + 0.5 * theta(sc.as_offset(K, off))(K + 1)


@sc.field_operator
def through_a_call(theta: CellK, off: CellKI, off64: CellKI64) -> CellK:
    return steep(theta, off) * theta(sc.as_offset(K, off64))


@sc.program
def steep_points(theta: CellK, off: CellKI, off64: CellKI64, diff: CellK, product: CellK) -> None:
    steep(theta, off, out=diff)
    through_a_call(theta, off, off64, out=product)


def inputs(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Offsets that keep every read inside the column, some of them reaching its ends."""
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal((N_CELLS, N_K))
    k = np.arange(N_K)
    off = rng.integers(-k, N_K - k, size=(N_CELLS, N_K)).astype(np.int32)
    off[0] = -k  # every level reads the first
    off[1] = N_K - 1 - k  # every level reads the last
    off64 = rng.integers(-k, N_K - k, size=(N_CELLS, N_K)).astype(np.int64)
    return theta, off, off64


def references(
    theta: np.ndarray, off: np.ndarray, off64: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Over the levels 0 .. N_K - 2 (the shift K + 1 narrows the domain by one)."""
    diff = np.full((N_CELLS, N_K), np.nan)
    product = np.full((N_CELLS, N_K), np.nan)
    for c in range(N_CELLS):
        for k in range(N_K - 1):
            above = theta[c, k + 1 + off[c, k + 1]]
            diff[c, k] = theta[c, k + off[c, k]] - theta[c, k] + 0.5 * above
            product[c, k] = diff[c, k] * theta[c, k + off64[c, k]]
    return diff, product


def test_reads_at_data_dependent_levels() -> None:
    theta, off, off64 = inputs(1)
    outs = [np.full((N_CELLS, N_K), np.nan) for _ in range(2)]
    steep_points(theta, off, off64, *outs)
    for got, want in zip(outs, references(theta, off, off64)):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)


def test_the_ir_prints_the_offset_and_the_inferred_domain() -> None:
    text = str(steep_points.ir)
    assert "theta(as_offset(K, off))" in text and "K: [0, end-1)" in text


@pytest.mark.parametrize("bad", [N_K, -1])
def test_an_offset_leaving_the_array_is_refused_before_anything_is_written(bad: int) -> None:
    theta, off, off64 = inputs(2)
    off[3, 2] = bad - 2  # level 2 would read bad
    outs = [np.zeros((N_CELLS, N_K)) for _ in range(2)]
    with pytest.raises(ArgumentError, match=r"argument 'off' of steep_points\(\)") as info:
        steep_points(theta, off, off64, *outs)
    assert f"at (3, 2) reads index {bad} along K" in str(info.value)
    assert all((o == 0).all() for o in outs)


@sc.field_operator
def at_neighbour_offsets(theta: mesh.CellK, off: EdgeKI) -> mesh.CellK:
    """The offset read through a table (ICON's `zd_vertoffset(C2CEC[0])`), as a slot or as
    one slot of a local field: a missing neighbour's offset is 0."""
    first = theta(sc.as_offset(mesh.K, off(mesh.C2E[1])))
    return first + theta(sc.as_offset(mesh.K, off(mesh.C2E)[mesh.C2EDim(2)]))


@sc.program
def neighbour_offsets(
    theta: mesh.CellK, off: EdgeKI, c2e: sc.Table[mesh.C2E], out: mesh.CellK
) -> None:
    at_neighbour_offsets(theta, off, out=out)


def mesh_inputs(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    c2e, _ = mesh.tables(rng)
    k = np.arange(mesh.N_K)
    theta = rng.standard_normal((mesh.N_CELLS, mesh.N_K))
    off = rng.integers(-k, mesh.N_K - k, size=(mesh.N_EDGES, mesh.N_K)).astype(np.int32)
    return theta, off, c2e


def mesh_reference(theta: np.ndarray, off: np.ndarray, c2e: np.ndarray) -> np.ndarray:
    out = np.zeros_like(theta)
    for c in range(theta.shape[0]):
        for k in range(theta.shape[1]):
            o1 = off[c2e[c, 1], k] if c2e[c, 1] >= 0 else 0
            o2 = off[c2e[c, 2], k] if c2e[c, 2] >= 0 else 0
            out[c, k] = theta[c, k + o1] + theta[c, k + o2]
    return out


def test_offsets_read_through_a_table() -> None:
    theta, off, c2e = mesh_inputs(5)
    out = np.full_like(theta, np.nan)
    neighbour_offsets(theta, off, c2e, out)
    np.testing.assert_allclose(out, mesh_reference(theta, off, c2e), rtol=1e-14, atol=1e-15)


# --- misuse ------------------------------------------------------------------------------


def test_an_offset_computed_otherwise_than_plus_or_minus_scalars() -> None:
    """`off + 1` is an offset (tests/program/test_computed_offsets.py); `off * 2` is not."""
    with pytest.raises(DefinitionError, match="field parameter as it is passed in") as info:

        @sc.field_operator
        def f(theta: CellK, off: CellKI) -> CellK:
            return theta(sc.as_offset(K, off * 2))  # L:computed

    assert_located(info.value, "computed", path=HERE)


def test_a_float_offset() -> None:
    with pytest.raises(DefinitionError, match="int32 or int64") as info:

        @sc.field_operator
        def f(theta: CellK) -> CellK:
            return theta(sc.as_offset(K, theta))  # L:float

    assert_located(info.value, "float", path=HERE)


def test_an_offset_not_over_the_dimension() -> None:
    with pytest.raises(DefinitionError, match="not over K") as info:

        @sc.field_operator
        def f(theta: CellK, off: sc.Field[[Cell], sc.int32]) -> CellK:
            return theta(sc.as_offset(K, off))  # L:not-over

    assert_located(info.value, "not-over", path=HERE)


def test_a_literal_offset() -> None:
    with pytest.raises(DefinitionError, match=r"f\(K \+ 1\)") as info:

        @sc.field_operator
        def f(theta: CellK) -> CellK:
            return theta(sc.as_offset(K, 1))  # L:literal

    assert_located(info.value, "literal", path=HERE)


def test_an_offset_with_other_offsets_in_one_shift() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.field_operator
        def f(theta: CellK, off: CellKI) -> CellK:
            return theta(sc.as_offset(K, off), Cell + 1)  # L:with-others

    assert_located(info.value, "with-others", path=HERE)
    assert "a shift by sc.as_offset takes nothing else, got (sc.as_offset(K, field " in str(
        info.value
    )
    assert "shift one at a time, e.g. f(I + 1)(sc.as_offset(K, off))" in str(info.value)


def test_a_shift_along_the_dimension_before_the_offset() -> None:
    with pytest.raises(DefinitionError, match="pass off \\+ 1"):

        @sc.field_operator
        def f(theta: CellK, off: CellKI) -> CellK:
            return theta(K + 1)(sc.as_offset(K, off))

        @sc.program
        def p(theta: CellK, off: CellKI, out: CellK) -> None:
            f(theta, off, out=out)


def test_a_field_without_the_dimension() -> None:
    with pytest.raises(DefinitionError, match="not over K") as info:

        @sc.field_operator
        def f(x: CellF, off: CellKI) -> CellK:
            return x(sc.as_offset(K, off))  # L:no-dim

    assert_located(info.value, "no-dim", path=HERE)


@sc.field_operator
def make_offsets(off: CellKI) -> CellKI:
    return off * 0


@sc.field_operator
def read_at(theta: CellK, off: CellKI) -> CellK:
    return theta(sc.as_offset(K, off))


def test_an_offset_computed_by_the_program() -> None:
    with pytest.raises(DefinitionError, match="it is a temporary"):

        @sc.program
        def p(theta: CellK, off: CellKI, out: CellK) -> None:
            zero = make_offsets(off)
            read_at(theta, zero, out=out)


def test_an_offset_written_by_the_program() -> None:
    with pytest.raises(DefinitionError, match="written by a call"):

        @sc.program
        def p(theta: CellK, off: CellKI, out: CellK) -> None:
            make_offsets(off, out=off)
            read_at(theta, off, out=out)


# One offset field along two dimensions (gt4py's test_offset_field): each dimension's
# entries are checked against the fields that dimension's shift reads, the offset field
# itself among them where the outer shift reads it.
@sc.field_operator
def two_ways(theta: CellK, off: CellKI) -> CellK:
    return theta(sc.as_offset(Cell, off))(sc.as_offset(K, off))


@sc.program
def shifted_two_ways(theta: CellK, off: CellKI, out: CellK) -> None:
    two_ways(theta, off, out=out, domain={Cell: (0, N_CELLS - 1), K: (0, N_K - 1)})


def two_ways_inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """theta over (Cell, K); offsets in {0, 1}, 0 on the last cell and level (every entry
    is checked, wherever the domain reads it)."""
    rng = np.random.default_rng(seed)
    off = rng.integers(0, 2, (N_CELLS, N_K)).astype(np.int32)
    off[-1, :] = off[:, -1] = 0
    return rng.random((N_CELLS, N_K)), off


def two_ways_reference(theta: np.ndarray, off: np.ndarray) -> np.ndarray:
    out = np.zeros_like(theta)
    for c in range(N_CELLS - 1):
        for k in range(N_K - 1):
            kk = k + off[c, k]  # the outer shift along K reads the inner one at kk
            out[c, k] = theta[c + off[c, kk], kk]
    return out


def test_one_offset_field_along_two_dimensions() -> None:
    theta, off = two_ways_inputs(7)
    out = np.zeros_like(theta)
    shifted_two_ways(theta, off, out)
    np.testing.assert_array_equal(out, two_ways_reference(theta, off))
    off[N_CELLS - 2, 0] = 2  # reads cell N_CELLS (outside) along Cell, level 2 along K
    with pytest.raises(sc.ArgumentError, match=r"argument 'off'.* along Cell"):
        shifted_two_ways(theta, off, np.zeros_like(theta))
