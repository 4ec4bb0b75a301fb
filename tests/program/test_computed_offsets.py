"""Computed data-dependent offsets, `f(sc.as_offset(K, off + 1))`, on the embedded executor:
an offset field's entries plus or minus scalars (literals, program scalars and expressions
of them), read through a slot of a local field as ICON writes it
(`theta_v(C2E2C[0])(as_offset(Koff, zd_vertoffset[C2E2CDim(0)] + 1))`), through a table,
beside half levels; against NumPy loops. An offset that leaves the array is an
ArgumentError naming the argument and the addend before anything is written; what stays
refused is a DefinitionError at the user's line."""

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
HERE = os.path.abspath(__file__)
N_CELLS, N_K = 5, 7


# --- literals and scalars ----------------------------------------------------------------


@sc.field_operator
def interpolate(theta: CellK, off: CellKI, w: CellK) -> CellK:
    """ICON's vertical interpolation between the levels `k + off` and `k + off + 1`."""
    return w * theta(sc.as_offset(K, off)) + (1.0 - w) * theta(sc.as_offset(K, off + 1))


@sc.field_operator
def moved(theta: CellK, off: CellKI, k0: sc.int32) -> CellK:
    """Scalars on either side, subtracted, and a program expression passed for `k0`."""
    return theta(sc.as_offset(K, 1 + off - k0)) + theta(sc.as_offset(K, (off + k0) - 2))


@sc.program
def computed(
    theta: CellK, off: CellKI, w: CellK, k0: sc.int32, between: CellK, shifted: CellK
) -> None:
    interpolate(theta, off, w, out=between)
    moved(theta, off, k0 + 1, out=shifted)


def inputs(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Offsets with `k + off` in [1, N_K - 2]: `off + 1` and `off - 1` stay in the column,
    some of them reaching its ends."""
    rng = np.random.default_rng(seed)
    k = np.arange(N_K)
    off = rng.integers(1 - k, N_K - 2 - k + 1, size=(N_CELLS, N_K)).astype(np.int32)
    off[0] = 1 - k  # k + off - 1 reads the first level
    off[1] = N_K - 2 - k  # k + off + 1 reads the last
    return rng.standard_normal((N_CELLS, N_K)), off, rng.random((N_CELLS, N_K))


def references(
    theta: np.ndarray, off: np.ndarray, w: np.ndarray, k0: int
) -> tuple[np.ndarray, np.ndarray]:
    between, shifted = np.zeros_like(theta), np.zeros_like(theta)
    for c in range(N_CELLS):
        for k in range(N_K):
            o = int(off[c, k])
            between[c, k] = w[c, k] * theta[c, k + o] + (1 - w[c, k]) * theta[c, k + o + 1]
            shifted[c, k] = theta[c, k + 1 + o - (k0 + 1)] + theta[c, k + o + (k0 + 1) - 2]
    return between, shifted


def test_offsets_plus_or_minus_scalars() -> None:
    theta, off, w = inputs(1)
    outs = [np.full_like(theta, np.nan) for _ in range(2)]
    computed(theta, off, w, np.int32(1), *outs)
    for got, want in zip(outs, references(theta, off, w, 1)):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)


def test_the_ir_prints_the_computed_offset() -> None:
    assert "theta(as_offset(K, (off + 1:int32)))" in str(computed.ir)


@pytest.mark.parametrize(
    ("cell", "level", "value", "k0", "reads"),
    [
        (3, N_K - 1, 0, 1, N_K),  # off + 1: the last level reads one past the column
        (2, 0, 0, 1, -1),  # 1 + off - (k0 + 1) at level 0 reads -1
        (4, 0, 1, 2, -1),  # a program scalar moves the second shift: k0 + 1 = 3
    ],
)
def test_an_offset_leaving_the_array_with_its_addend_is_refused_before_anything_is_written(
    cell: int, level: int, value: int, k0: int, reads: int
) -> None:
    theta, off, w = inputs(2)
    if k0 == 2:  # k + off >= 2 everywhere: 1 + off - (k0 + 1) leaves the column at one
        off[:] = np.maximum(off, 2 - np.arange(N_K))
    off[cell, level] = value
    outs = [np.zeros_like(theta) for _ in range(2)]
    with pytest.raises(ArgumentError, match=r"argument 'off' of computed\(\)") as info:
        computed(theta, off, w, np.int32(k0), *outs)
    assert f"at ({cell}, {level}) reads index {reads} along K" in str(info.value)
    assert all((o == 0).all() for o in outs)


# --- ICON's steep points: a slot of a local offset field, plus one ------------------------

C2EK = sc.Field[[mesh.Cell, mesh.C2EDim, mesh.K], sc.int32]
C2EKF = sc.Field[[mesh.Cell, mesh.C2EDim, mesh.K], sc.float64]


@sc.field_operator
def steep_points(theta: mesh.EdgeK, vertoffset: C2EK, vcoef: C2EKF) -> mesh.CellK:
    """`truly_horizontal_diffusion_nabla_of_theta_over_steep_points`, on two slots."""
    total = 0.0 * theta(mesh.C2E[0])
    for slot in (0, 2):
        at = vertoffset[mesh.C2EDim(slot)]
        w = vcoef[mesh.C2EDim(slot)]
        below = theta(mesh.C2E[slot])(sc.as_offset(mesh.K, at))
        above = theta(mesh.C2E[slot])(sc.as_offset(mesh.K, at + 1))
        total = total + w * below + (1.0 - w) * above
    return total


@sc.program
def steep(
    theta: mesh.EdgeK, vertoffset: C2EK, vcoef: C2EKF, c2e: sc.Table[mesh.C2E], out: mesh.CellK
) -> None:
    steep_points(theta, vertoffset, vcoef, out=out)


def steep_inputs(seed: int) -> tuple[np.ndarray, ...]:
    """icon4py's test data: offsets to every level but the last (the `+ 1` reads it)."""
    rng = np.random.default_rng(seed)
    c2e, _ = mesh.tables(rng)
    k = np.arange(mesh.N_K)
    shape = (mesh.N_CELLS, 3, mesh.N_K)
    vertoffset = rng.integers(-k, mesh.N_K - 1 - k, size=shape).astype(np.int32)
    theta = rng.standard_normal((mesh.N_EDGES, mesh.N_K))
    return theta, vertoffset, rng.random(shape), c2e


def steep_reference(
    theta: np.ndarray, vertoffset: np.ndarray, vcoef: np.ndarray, c2e: np.ndarray
) -> np.ndarray:
    out = np.zeros((mesh.N_CELLS, mesh.N_K))
    for c in range(mesh.N_CELLS):
        for k in range(mesh.N_K):
            for slot in (0, 2):
                e, o, w = c2e[c, slot], int(vertoffset[c, slot, k]), vcoef[c, slot, k]
                if e >= 0:  # a missing neighbour reads 0
                    out[c, k] += w * theta[e, k + o] + (1 - w) * theta[e, k + o + 1]
    return out


def test_icon_steep_points() -> None:
    theta, vertoffset, vcoef, c2e = steep_inputs(3)
    out = np.full((mesh.N_CELLS, mesh.N_K), np.nan)
    steep(theta, vertoffset, vcoef, c2e, out)
    np.testing.assert_allclose(
        out, steep_reference(theta, vertoffset, vcoef, c2e), rtol=1e-14, atol=1e-15
    )


def test_icon_steep_points_with_an_offset_to_the_last_level() -> None:
    """ICON's metrics leave zd_vertoffset 0 where a point is not steep, also on the last
    level: `+ 1` reads past the column there, refused where the read is used everywhere
    (ICON masks it with `where(zd_diffcoef != 0, ...)`: below)."""
    theta, vertoffset, vcoef, c2e = steep_inputs(4)
    vertoffset[5, 1, mesh.N_K - 1] = 0
    out = np.zeros((mesh.N_CELLS, mesh.N_K))
    with pytest.raises(ArgumentError, match=r"argument 'vertoffset' of steep\(\): offset 0 \+1"):
        steep(theta, vertoffset, vcoef, c2e, out)
    assert (out == 0).all()


# --- a read in a branch of sc.where is checked where the branch is taken ----------------


@sc.field_operator
def steep_where_diffusing(
    theta: mesh.EdgeK, vertoffset: C2EK, vcoef: C2EKF, coef: mesh.CellK, z: mesh.CellK
) -> mesh.CellK:
    """ICON's `apply_diffusion_to_theta_and_exner`: the steep points' term only where
    `zd_diffcoef` is not 0."""
    return sc.where(coef != 0.0, z + coef * steep_points(theta, vertoffset, vcoef), z)


@sc.program
def masked_steep(
    theta: mesh.EdgeK,
    vertoffset: C2EK,
    vcoef: C2EKF,
    coef: mesh.CellK,
    z: mesh.CellK,
    c2e: sc.Table[mesh.C2E],
    out: mesh.CellK,
) -> None:
    steep_where_diffusing(theta, vertoffset, vcoef, coef, z, out=out)


@sc.field_operator
def steep_where_diffusing_above(
    theta: mesh.EdgeK, vertoffset: C2EK, vcoef: C2EKF, coef: mesh.CellK, z: mesh.CellK
) -> mesh.CellK:
    """The condition read one level up: not at the point, so the check covers every
    point."""
    return sc.where(coef(mesh.K + 1) != 0.0, z + steep_points(theta, vertoffset, vcoef), z)


@sc.program
def masked_above(
    theta: mesh.EdgeK,
    vertoffset: C2EK,
    vcoef: C2EKF,
    coef: mesh.CellK,
    z: mesh.CellK,
    c2e: sc.Table[mesh.C2E],
    out: mesh.CellK,
) -> None:
    steep_where_diffusing_above(
        theta, vertoffset, vcoef, coef, z, out=out, domain={mesh.K: (0, mesh.N_K - 1)}
    )


FLAT = (1, 4)  # the cells that are not steep


def masked_inputs(seed: int) -> tuple[np.ndarray, ...]:
    """ICON's metrics: where a cell is not steep, `zd_diffcoef` and `zd_vertoffset` are 0
    on every level, so `+ 1` reads one past the column on the last level there."""
    theta, vertoffset, vcoef, c2e = steep_inputs(seed)
    rng = np.random.default_rng(seed + 100)
    coef = rng.random((mesh.N_CELLS, mesh.N_K)) + 0.5
    coef[list(FLAT)] = 0.0
    vertoffset[list(FLAT)] = 0
    z = rng.standard_normal((mesh.N_CELLS, mesh.N_K))
    return theta, vertoffset, vcoef, coef, z, c2e


def masked_reference(
    theta: np.ndarray,
    vertoffset: np.ndarray,
    vcoef: np.ndarray,
    coef: np.ndarray,
    z: np.ndarray,
    c2e: np.ndarray,
) -> np.ndarray:
    out = np.array(z, dtype=np.float64)
    for c in range(mesh.N_CELLS):
        for k in range(mesh.N_K):
            if coef[c, k] == 0:
                continue
            total = 0.0
            for slot in (0, 2):
                e, o, w = c2e[c, slot], int(vertoffset[c, slot, k]), vcoef[c, slot, k]
                if e >= 0:
                    total += w * theta[e, k + o] + (1 - w) * theta[e, k + o + 1]
            out[c, k] = z[c, k] + coef[c, k] * total
    return out


def test_a_read_in_a_branch_not_taken_may_leave_the_column() -> None:
    theta, vertoffset, vcoef, coef, z, c2e = masked_inputs(7)
    assert (vertoffset[list(FLAT), :, -1] + mesh.N_K - 1 + 1 == mesh.N_K).all()
    out = np.full((mesh.N_CELLS, mesh.N_K), np.nan)
    masked_steep(theta, vertoffset, vcoef, coef, z, c2e, out)
    reference = masked_reference(theta, vertoffset, vcoef, coef, z, c2e)
    np.testing.assert_allclose(out, reference, rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(out[list(FLAT)], z[list(FLAT)])


def test_where_the_branch_is_taken_the_read_is_checked() -> None:
    theta, vertoffset, vcoef, coef, z, c2e = masked_inputs(8)
    coef[4, mesh.N_K - 1] = 0.25  # the branch is taken where `+ 1` leaves the column
    out = np.zeros((mesh.N_CELLS, mesh.N_K))
    with pytest.raises(
        ArgumentError,
        match=r"argument 'vertoffset' of masked_steep\(\): offset 0 \+1 at \(4, 0, 3\) reads "
        r"index 4 along K, outside \[0, 4\) where the sc.where branch of the read is taken",
    ):
        masked_steep(theta, vertoffset, vcoef, coef, z, c2e, out)
    assert (out == 0).all()


def test_a_condition_not_at_the_point_checks_every_point() -> None:
    """The check evaluates only conditions read at the point from the program's
    arguments: `coef(K + 1) != 0` is not one, so every entry is checked."""
    theta, vertoffset, vcoef, coef, z, c2e = masked_inputs(9)
    out = np.zeros((mesh.N_CELLS, mesh.N_K))
    with pytest.raises(ArgumentError, match=r"argument 'vertoffset' of masked_above\(\)"):
        masked_above(theta, vertoffset, vcoef, coef, z, c2e, out)
    assert (out == 0).all()


def test_a_condition_written_by_the_program_checks_every_point() -> None:
    """A condition the program writes before the read is not known before it runs."""

    @sc.field_operator
    def copy(x: mesh.CellK) -> mesh.CellK:
        return x

    @sc.program
    def written(
        theta: mesh.EdgeK,
        vertoffset: C2EK,
        vcoef: C2EKF,
        coef: mesh.CellK,
        z: mesh.CellK,
        c2e: sc.Table[mesh.C2E],
        out: mesh.CellK,
    ) -> None:
        copy(z, out=coef)
        steep_where_diffusing(theta, vertoffset, vcoef, coef, z, out=out)

    theta, vertoffset, vcoef, coef, z, c2e = masked_inputs(10)
    out = np.zeros((mesh.N_CELLS, mesh.N_K))
    with pytest.raises(ArgumentError, match=r"argument 'vertoffset' of written\(\)"):
        written(theta, vertoffset, vcoef, coef, z, c2e, out)
    assert (out == 0).all()


# --- through a table that may skip ----------------------------------------------------------

EdgeKI = sc.Field[[mesh.Edge, mesh.K], sc.int32]


@sc.field_operator
def added_after(theta: mesh.CellK, off: EdgeKI) -> mesh.CellK:
    return theta(sc.as_offset(mesh.K, off(mesh.C2E[1]) - 1))


@sc.field_operator
def added_before(theta: mesh.CellK, off: EdgeKI) -> mesh.CellK:
    return theta(sc.as_offset(mesh.K, (off - 1)(mesh.C2E[1])))


@sc.program
def after_table(theta: mesh.CellK, off: EdgeKI, c2e: sc.Table[mesh.C2E], out: mesh.CellK) -> None:
    added_after(theta, off, out=out)


@sc.program
def before_table(theta: mesh.CellK, off: EdgeKI, c2e: sc.Table[mesh.C2E], out: mesh.CellK) -> None:
    added_before(theta, off, out=out)


def table_inputs(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    c2e, _ = mesh.tables(rng)
    k = np.arange(mesh.N_K)
    theta = rng.standard_normal((mesh.N_CELLS, mesh.N_K))
    off = rng.integers(1 - k, mesh.N_K + 1 - k, size=(mesh.N_EDGES, mesh.N_K)).astype(np.int32)
    return theta, off, c2e


def table_reference(theta: np.ndarray, off: np.ndarray, c2e: np.ndarray, after: bool) -> np.ndarray:
    out = np.zeros_like(theta)
    for c in range(mesh.N_CELLS):
        for k in range(mesh.N_K):
            e = c2e[c, 1]
            o = int(off[e, k]) - 1 if e >= 0 else (-1 if after else 0)
            out[c, k] = theta[c, k + o]
    return out


def test_an_addend_above_a_table_without_missing_neighbours() -> None:
    theta, off, c2e = table_inputs(5)
    c2e[:, 1] = np.arange(mesh.N_CELLS)  # every cell has its second neighbour (the slot read)
    assert (c2e < 0).any()
    for program, after in ((after_table, True), (before_table, False)):
        out = np.full_like(theta, np.nan)
        program(theta, off, c2e, out)
        np.testing.assert_allclose(out, table_reference(theta, off, c2e, after), rtol=1e-15)


def test_a_missing_neighbours_offset_is_the_addend_above_the_table() -> None:
    """`off(C2E[1]) - 1` is -1 at a missing neighbour: level 0 would read -1, refused;
    `(off - 1)(C2E[1])` is 0 there and runs."""
    theta, off, c2e = table_inputs(6)
    assert (c2e[:, 1] < 0).any()
    out = np.zeros_like(theta)
    with pytest.raises(
        ArgumentError, match=r"argument 'off' of after_table\(\).*missing neighbour"
    ):
        after_table(theta, off, c2e, out)
    assert (out == 0).all()
    before_table(theta, off, c2e, out)
    np.testing.assert_allclose(out, table_reference(theta, off, c2e, False), rtol=1e-15)


# --- beside half levels (ICON's compute_hydrostatic_correction_term) ------------------------


@sc.field_operator
def correction(theta_ic: CellK, off: CellKI) -> CellK:
    """`theta_v_ic` on half levels (N_K + 1), read at `k + off` and `k + off + 1`."""
    return theta_ic(sc.as_offset(K, off)) - theta_ic(sc.as_offset(K, off + 1))


@sc.program
def half_levels(theta_ic: CellK, off: CellKI, out: CellK) -> None:
    correction(theta_ic, off, out=out, domain={K: (0, N_K)})


def test_half_levels_read_one_past_the_full_levels() -> None:
    rng = np.random.default_rng(7)
    k = np.arange(N_K)
    off = rng.integers(-k, N_K - k, size=(N_CELLS, N_K)).astype(np.int32)
    off[1] = N_K - 1 - k  # k + off + 1 reads the last half level
    theta_ic = rng.standard_normal((N_CELLS, N_K + 1))
    out = np.full((N_CELLS, N_K), np.nan)
    half_levels(theta_ic, off, out)
    rows = np.arange(N_CELLS)[:, None]
    at = k + off
    np.testing.assert_allclose(out, theta_ic[rows, at] - theta_ic[rows, at + 1], rtol=1e-15)
    off[2, 3] = N_K - 3  # k + off + 1 = N_K + 1: past the half levels
    with pytest.raises(ArgumentError, match=r"argument 'off'.*reads index 8 along K, outside"):
        half_levels(theta_ic, off, np.zeros((N_CELLS, N_K)))


# --- what stays refused --------------------------------------------------------------------


def test_a_product_offset() -> None:
    with pytest.raises(DefinitionError, match="plus or minus scalars") as info:

        @sc.field_operator
        def f(theta: CellK, off: CellKI) -> CellK:
            return theta(sc.as_offset(K, 2 * off))  # L:product

    assert_located(info.value, "product", path=HERE)


def test_an_offset_subtracted_from_a_scalar() -> None:
    with pytest.raises(DefinitionError, match="plus or minus scalars") as info:

        @sc.field_operator
        def f(theta: CellK, off: CellKI) -> CellK:
            return theta(sc.as_offset(K, 1 - off))  # L:negated

    assert_located(info.value, "negated", path=HERE)


def test_a_sum_of_two_offset_fields() -> None:
    with pytest.raises(DefinitionError, match="plus or minus scalars") as info:

        @sc.field_operator
        def f(theta: CellK, off: CellKI, more: CellKI) -> CellK:
            return theta(sc.as_offset(K, off + more))  # L:two-fields

    assert_located(info.value, "two-fields", path=HERE)


@sc.field_operator
def plus_one(off: CellKI) -> CellKI:
    return off + 1


@sc.field_operator
def read_at(theta: CellK, off: CellKI) -> CellK:
    return theta(sc.as_offset(K, off))


def test_an_offset_computed_by_an_earlier_call_stays_refused() -> None:
    with pytest.raises(DefinitionError, match="it is a temporary"):

        @sc.program
        def p(theta: CellK, off: CellKI, out: CellK) -> None:
            read_at(theta, plus_one(off), out=out)


def test_a_computed_offset_passed_to_a_field_operator() -> None:
    """`off + 1` computed in one field operator and passed to another that reads it as its
    offset: the same as writing it in place."""

    @sc.field_operator
    def outer(theta: CellK, off: CellKI) -> CellK:
        return read_at(theta, off + 1)

    @sc.program
    def p(theta: CellK, off: CellKI, out: CellK) -> None:
        outer(theta, off, out=out)

    theta, off, _ = inputs(8)
    out = np.full_like(theta, np.nan)
    p(theta, off, out)
    rows = np.arange(N_CELLS)[:, None]
    np.testing.assert_array_equal(out, theta[rows, np.arange(N_K) + off + 1])
    off[0, N_K - 1] = 0
    with pytest.raises(ArgumentError, match=r"offset 0 \+1 at \(0, 6\) reads index 7"):
        p(theta, off, np.zeros_like(theta))
