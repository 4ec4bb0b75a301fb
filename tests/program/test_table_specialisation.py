"""Tables of any width for one program (a connectivity declared with `max_neighbors=None`
and/or `skip_values=None`): one specialisation per (width, has -1 entries) of the call's
table, chosen at call time, on the embedded executor against NumPy loops over the table;
misuse is a DefinitionError at the user's line or an ArgumentError naming the table."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.errors import ArgumentError, DefinitionError

from ._support import assert_located

Cell, Edge = sc.Dimension("Cell"), sc.Dimension("Edge")
K = sc.Dimension("K", kind=sc.VERTICAL)
C2EDim = sc.Dimension("C2EDim", kind=sc.LOCAL)
# the width and the skip values of each call's table (gt4py's offset_provider)
C2E = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=None, skip_values=None)  # fmt: skip
HERE = os.path.abspath(__file__)

EdgeK = sc.Field[[Edge, K], sc.float64]
CellK = sc.Field[[Cell, K], sc.float64]
Weights = sc.Field[[Cell, C2EDim], sc.float64]


@sc.field_operator
def gather(e: EdgeK, w: Weights) -> tuple[CellK, CellK]:
    total = sc.neighbor_sum(w * e(C2E), axis=C2EDim) + e(C2E[1])
    spread = sc.max_over(e(C2E), axis=C2EDim) - w[C2EDim(0)] * e(C2E[0])
    return total, spread


@sc.program
def mesh_sums(e: EdgeK, w: Weights, c2e: sc.Table[C2E], total: CellK, spread: CellK) -> None:
    gather(e, w, out=(total, spread))


def reference(e: np.ndarray, w: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Loops over each cell's slots: a missing neighbour (-1) adds nothing to the sum,
    is left out of the maximum and reads 0 at a slot."""
    n_cells, width = table.shape
    total = np.zeros((n_cells, e.shape[1]))
    spread = np.zeros((n_cells, e.shape[1]))
    for c in range(n_cells):
        best = np.full(e.shape[1], -np.inf)
        for s in range(width):
            n = table[c, s]
            if n >= 0:
                total[c] += w[c, s] * e[n]
                best = np.maximum(best, e[n])
        first = e[table[c, 0]] if table[c, 0] >= 0 else 0.0
        second = e[table[c, 1]] if table[c, 1] >= 0 else 0.0
        total[c] += second
        spread[c] = best - w[c, 0] * first
    return total, spread


def inputs(width: int, skips: bool, seed: int = 0) -> tuple[np.ndarray, ...]:
    """A mesh of 9 cells and 13 edges whose table has `width` slots, some of them -1 (in
    slots 1 and above, never a whole row) where `skips`."""
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 13, (9, width)).astype(np.int32)
    if skips:
        table[rng.random((9, width)) < 0.3] = -1
        table[:, 0] = rng.integers(0, 13, 9)
        table[2, 1] = -1
    return rng.random((13, 4)), rng.random((9, width)), table


CASES = [(2, False), (3, False), (3, True), (4, True), (6, True)]


@pytest.mark.parametrize(("width", "skips"), CASES)
def test_each_table_width_and_skip_property(width: int, skips: bool) -> None:
    e, w, table = inputs(width, skips)
    outs = [np.full((9, 4), np.nan) for _ in range(2)]
    mesh_sums(e, w, table, *outs)
    for got, want in zip(outs, reference(e, w, table)):
        np.testing.assert_allclose(got, want, rtol=1e-14)


def test_one_specialisation_per_width_and_skip_property() -> None:
    calls: list[Any] = []

    class Counting:
        name = "counting"

        def executor(self, program: Any) -> Any:
            calls.append(program)
            return sc.backends.run_embedded.executor(program)

    run = mesh_sums.with_backend(Counting())
    for width, skips in [(3, False), (3, True), (4, True), (3, False), (4, True), (3, True)]:
        e, w, table = inputs(width, skips, seed=width)
        outs = [np.zeros((9, 4)) for _ in range(2)]
        run(e, w, c2e=table, total=outs[0], spread=outs[1])
        for got, want in zip(outs, reference(e, w, table)):
            np.testing.assert_allclose(got, want, rtol=1e-14)
    made = [(p.ir.params[2].type.connectivity.max_neighbors, p.ir.params[2].type.connectivity.skip_values) for p in calls]  # type: ignore[attr-defined]  # fmt: skip
    assert made == [(3, False), (3, True), (4, True)]
    assert len({p.fingerprint() for p in calls}) == 3


def test_specialise_tables_is_what_a_call_runs() -> None:
    spec = mesh_sums.specialise_tables(c2e=(4, True))
    conn = spec.ir.params[2].type.connectivity  # type: ignore[union-attr]
    assert (conn.max_neighbors, conn.skip_values) == (4, True)
    e, w, table = inputs(4, True)
    same = mesh_sums.specialise_tables(c2e=table)
    assert same.fingerprint() == spec.fingerprint()
    outs = [np.zeros((9, 4)) for _ in range(2)]
    spec(e, w, table, *outs)
    for got, want in zip(outs, reference(e, w, table)):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    # the specialisation checks its tables as a declared connectivity does
    with pytest.raises(ArgumentError, match="has 3 columns, but C2E is declared with max_neighbors=4"):  # fmt: skip
        spec(e[:, :], w[:, :3], table[:, :3].copy(), *outs)
    with pytest.raises(ArgumentError, match="give 'c2e'"):
        mesh_sums.specialise_tables()
    with pytest.raises(ArgumentError, match="cannot be specialised"):
        mesh_sums.specialise_tables(c2e=(0, True))


NoSkips = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=None)
Width4 = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=4, skip_values=None)  # fmt: skip


@sc.field_operator
def total_no_skips(e: EdgeK) -> CellK:
    return sc.neighbor_sum(e(NoSkips), axis=C2EDim)


@sc.program
def sums_no_skips(e: EdgeK, c2e: sc.Table[NoSkips], out: CellK) -> None:
    total_no_skips(e, out=out)


@sc.field_operator
def total_width4(e: EdgeK) -> CellK:
    return sc.neighbor_sum(e(Width4), axis=C2EDim)


@sc.program
def sums(e: EdgeK, c2e: sc.Table[Width4], out: CellK) -> None:
    total_width4(e, out=out)


def test_the_skip_property_comes_from_the_table() -> None:
    """Declared without skip values, a -1 is refused; open, it picks the skip
    specialisation; with a declared width, only the skip property is open."""
    e, w, table = inputs(4, True)
    want = reference(e, np.ones_like(w), table)[0] - np.where(
        table[:, 1:2] >= 0, e[table[:, 1]], 0.0
    )
    out = np.zeros((9, 4))
    with pytest.raises(ArgumentError, match="declared without skip values"):
        sums_no_skips(e, table, out)
    assert (out == 0).all()
    sums(e, table, out)
    np.testing.assert_allclose(out, want, rtol=1e-14)
    with pytest.raises(ArgumentError, match=r"argument 'c2e' of sums\(\): the table of C2E has 3 columns, but C2E is declared with max_neighbors=4"):  # fmt: skip
        sums(e, table[:, :3].copy(), out)


def test_frozen_tables_and_static_parameters() -> None:
    e, w, table = inputs(3, True)
    frozen = sc.frozen_table(table)
    outs = [np.zeros((9, 4)) for _ in range(2)]
    for _ in range(2):
        mesh_sums(e, w, frozen, *outs)
        for got, want in zip(outs, reference(e, w, table)):
            np.testing.assert_allclose(got, want, rtol=1e-14)

    @sc.field_operator
    def scaled(e: EdgeK, a: sc.float64) -> CellK:
        return a * sc.neighbor_sum(e(C2E), axis=C2EDim)

    @sc.program(static_params=("a",))
    def static_sums(e: EdgeK, c2e: sc.Table[C2E], out: CellK, a: sc.float64) -> None:
        scaled(e, a, out=out)

    for width, skips, a in [(3, True, 2.0), (5, False, 2.0), (3, True, -1.0)]:
        e, w, table = inputs(width, skips, seed=width)
        out = np.zeros((9, 4))
        static_sums(e, table, out, a)
        want = a * reference(e, np.ones_like(w), table)[0] - a * np.where(
            table[:, 1:2] >= 0, e[table[:, 1]], 0.0
        )
        np.testing.assert_allclose(out, want, rtol=1e-14)


def test_bad_tables_are_argument_errors_naming_them() -> None:
    e, w, table = inputs(3, True)
    outs = [np.zeros((9, 4)) for _ in range(2)]
    with pytest.raises(ArgumentError, match=r"argument 'c2e' of mesh_sums\(\): the table of C2E has 1 columns, but field operator gather reads slot C2E\[1\]; pass a table with at least 2 columns"):  # fmt: skip
        mesh_sums(e, w[:, :1].copy(), table[:, :1].copy(), *outs)
    with pytest.raises(ArgumentError, match=r"argument 'c2e' of mesh_sums\(\): expected dtype int32, got int64"):  # fmt: skip
        mesh_sums(e, w, table.astype(np.int64), *outs)
    with pytest.raises(ArgumentError, match="expected 2 dimension"):
        mesh_sums(e, w, table[:, 0].copy(), *outs)
    with pytest.raises(ArgumentError, match="expected an array"):
        mesh_sums(e, w, table.tolist(), *outs)
    with pytest.raises(ArgumentError, match="has no columns"):
        mesh_sums(e, w[:, :0].copy(), np.zeros((9, 0), np.int32), *outs)
    with pytest.raises(ArgumentError, match="C2EDim"):  # weights of another width
        mesh_sums(e, w[:, :2].copy(), table, *outs)
    with pytest.raises(ArgumentError, match="takes 5 arguments"):
        mesh_sums(e, w, table, outs[0])
    assert all((o == 0).all() for o in outs)


def test_slot_beyond_a_declared_width_still_fails_at_definition() -> None:
    with pytest.raises(DefinitionError) as info:
        C2E[-1]  # L:slot
    assert_located(info.value, "slot", path=HERE)
    assert "0 or above" in str(info.value)


def test_bad_declarations_are_definition_errors_at_the_line() -> None:
    with pytest.raises(DefinitionError) as info:
        sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=0)  # L:width
    assert_located(info.value, "width", path=HERE)
    assert "or None: the width of each call's table" in str(info.value)
    with pytest.raises(DefinitionError) as info:
        sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), skip_values="yes")  # type: ignore[arg-type]  # L:skips
    assert_located(info.value, "skips", path=HERE)


def test_compiled_ahead_for_given_tables_without_jit() -> None:
    """gt4py's `compile(offset_provider=[...])` and its error for another table."""
    run = mesh_sums.with_backend(sc.backends.run_embedded, jit=False)
    e, w, table = inputs(4, True)
    run.compile(c2e=[table, (3, False)])  # type: ignore[attr-defined]
    assert sorted(run.executors) == [((3, False),), ((4, True),)]  # type: ignore[attr-defined]
    outs = [np.zeros((9, 4)) for _ in range(2)]
    run(e, w, table, *outs)
    for got, want in zip(outs, reference(e, w, table)):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    e, w, table = inputs(3, True)
    outs = [np.zeros((9, 4)) for _ in range(2)]
    with pytest.raises(ArgumentError) as info:
        run(e, w, table, *outs)
    assert str(info.value) == (
        "mesh_sums() has no specialisation for the tables c2e=(3, True) ((max_neighbors, "
        "skip_values); compiled: c2e=(4, True); c2e=(3, False)); compile it first, or use "
        "with_backend(..., jit=True)"
    )
    assert all((o == 0).all() for o in outs)
    with pytest.raises(ArgumentError, match="give the tables of every open table parameter"):
        run.compile()  # type: ignore[attr-defined]


def test_tables_that_take_their_dtype_from_the_call() -> None:
    """`dtype_from_table=True` (stencilchain.compat.gt4py's tables): the key is (width,
    has -1, dtype), the specialisation's table parameter is declared with that dtype."""
    from stencilchain.program.table_specialisation import TableDispatch, specialise_tables

    made: list[Any] = []

    def make(spec: Any) -> Any:
        made.append(spec)
        return sc.backends.run_embedded.executor(sc.Program.from_ir(spec, mesh_sums.fn))

    run = TableDispatch(mesh_sums.ir, make, dtype_from_table=True)
    for width, skips, dtype in [(3, True, np.int32), (3, True, np.int64), (3, True, np.int32)]:
        e, w, table = inputs(width, skips, seed=width)
        outs = [np.zeros((9, 4)) for _ in range(2)]
        run(e, w, table.astype(dtype), *outs)
        for got, want in zip(outs, reference(e, w, table)):
            np.testing.assert_allclose(got, want, rtol=1e-14)
    assert sorted(run.executors) == [((3, True, "int32"),), ((3, True, "int64"),)]
    assert [p.params[2].type.dtype.name for p in made] == ["int32", "int64"]
    assert made[0].fingerprint() != made[1].fingerprint()
    with pytest.raises(ArgumentError, match="holds int32 or int64 entries, got dtype float64"):
        run(e, w, table.astype(np.float64), *outs)
    spec = specialise_tables(mesh_sums.ir, {"c2e": (4, False, "int64")}, dtype_from_table=True)
    assert repr(spec.params[2].type) == "Table[C2E, int64]"
    with pytest.raises(ArgumentError, match=r"cannot be specialised for \(max_neighbors, skip_values, dtype\)"):  # fmt: skip
        specialise_tables(mesh_sums.ir, {"c2e": (4, False)}, dtype_from_table=True)
    with pytest.raises(ArgumentError, match="cannot be specialised"):
        specialise_tables(mesh_sums.ir, {"c2e": (4, False, "int64")})
    ahead = TableDispatch(mesh_sums.ir, make, jit=False, dtype_from_table=True)
    ahead.compile(c2e=[(3, True, "int64")])
    with pytest.raises(ArgumentError, match=r"c2e=\(3, True, 'int32'\) \(\(max_neighbors, skip_values, dtype\); compiled: c2e=\(3, True, 'int64'\)\)"):  # fmt: skip
        ahead(e, w, table, *outs)
