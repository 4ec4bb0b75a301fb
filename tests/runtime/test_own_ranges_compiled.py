"""Fields over their own ranges on every CPU toolchain, in C, Fortran and sliced layouts,
equal to the embedded executor (which tests/program/test_own_ranges.py checks against
NumPy): half levels, origins (inputs starting below 0 too), a temporary between them,
scans in field operators, keyword calls, the same program called with one size again,
fields over part of the dimensions a neighbour table indexes, and the errors, which name
the argument (or the table and the field) as on the embedded executor and leave the
outputs untouched."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from tests.program import test_own_ranges as cases
from tests.program import test_own_ranges_tables as tables

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]
K, I, Cell = cases.K, cases.I, cases.Cell
Edge, Vertex = tables.Edge, tables.Vertex


def _layout(a: np.ndarray, kind: str) -> np.ndarray:
    if kind == "F":
        return np.asfortranarray(a)
    if kind == "sliced":  # every other cell of a larger array
        big = np.zeros((a.shape[0] * 2, *a.shape[1:]), a.dtype)
        big[::2] = a
        return big[::2]
    return np.ascontiguousarray(a)


def _both(
    run: Callable[..., None],
    program: Any,
    make: Callable[[], tuple[Any, ...]],
    outs: tuple[int, ...],
) -> None:
    """Run `program` embedded and through `run` on the same inputs; compare the outputs."""
    embedded_args, compiled_args = make(), make()
    program(*embedded_args)
    run(*compiled_args)
    for k in outs:
        a, b = embedded_args[k], compiled_args[k]
        np.testing.assert_array_equal(getattr(b, "array", b), getattr(a, "array", a))


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_half_levels(fixture: str, kind: str, request: pytest.FixtureRequest) -> None:
    toolchain = request.getfixturevalue(fixture)
    w, theta = cases.levels()

    def full() -> tuple[Any, ...]:
        return _layout(w, kind), _layout(theta, kind), _layout(np.zeros_like(theta), kind)

    def half() -> tuple[Any, ...]:
        return _layout(theta, kind), _layout(np.full_like(w, -7.0), kind)

    def given() -> tuple[Any, ...]:
        return (*half(), np.int32(cases.NLEV))

    def temporary() -> tuple[Any, ...]:
        return _layout(theta, kind), _layout(w, kind), _layout(np.full_like(w, -7.0), kind)

    _both(cases.to_full_levels.with_backend(toolchain), cases.to_full_levels, full, (2,))
    _both(cases.to_half_levels.with_backend(toolchain), cases.to_half_levels, half, (1,))
    _both(
        cases.to_half_levels_given.with_backend(toolchain), cases.to_half_levels_given, given, (1,)
    )
    _both(
        cases.through_a_temporary.with_backend(toolchain),
        cases.through_a_temporary,
        temporary,
        (2,),
    )


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_origins(fixture: str, request: pytest.FixtureRequest) -> None:
    toolchain = request.getfixturevalue(fixture)
    inp = np.arange(10, dtype=np.int32) * 3

    def out_after_zero() -> tuple[Any, ...]:
        return inp, sc.as_field((I,), np.zeros(7, np.int32), start={I: 1})

    def in_after_zero() -> tuple[Any, ...]:
        return sc.as_field((I,), np.full(8, 42, np.int32), start={I: 1}), np.arange(
            10, dtype=np.int32
        )

    _both(cases.copy.with_backend(toolchain), cases.copy, out_after_zero, (1,))
    _both(cases.copy_over.with_backend(toolchain), cases.copy_over, in_after_zero, (1,))


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_scans_in_field_operators(fixture: str, request: pytest.FixtureRequest) -> None:
    """Scans that field operators call, beside half levels: over the calls' narrowed domains."""
    toolchain = request.getfixturevalue(fixture)
    w, theta = cases.levels()

    def make() -> tuple[Any, ...]:
        return w, theta, np.full_like(theta, -7.0), np.full_like(theta, -7.0)

    program = cases.scans_beside_half_levels
    _both(program.with_backend(toolchain), program, make, (2, 3))


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_branches_beside_half_levels(fixture: str, request: pytest.FixtureRequest) -> None:
    """A branch's reads checked against the field it reads, and the error naming it."""
    toolchain = request.getfixturevalue(fixture)
    w, theta = cases.levels()
    program = cases.branches_beside_half_levels
    run = program.with_backend(toolchain)

    def make() -> tuple[Any, ...]:
        return (w, theta, np.full_like(theta, -7.0), np.full_like(theta, -7.0), np.int32(5))

    _both(run, program, make, (2, 3))
    out, out2 = np.full_like(theta, -7.0), np.full_like(theta, -7.0)
    with pytest.raises(sc.DomainError) as embedded:
        program(w, theta, out, out2, np.int32(cases.NLEV))
    with pytest.raises(sc.DomainError) as compiled:
        run(w, theta, out, out2, np.int32(cases.NLEV))
    assert str(compiled.value) == str(embedded.value)
    assert "of argument 'theta' leaves its range [0, 6) along K" in str(compiled.value)
    assert (out == -7.0).all() and (out2 == -7.0).all()
    # a branch reading the shorter field at its point only
    program = cases.half_levels_from_full_ones
    run = program.with_backend(toolchain)

    def at_the_point(n: int) -> tuple[Any, ...]:
        return (theta, w, np.full_like(w, -7.0), np.full_like(w, -7.0), np.int32(n))

    _both(run, program, lambda: at_the_point(cases.NLEV), (2, 3))
    embedded_args, compiled_args = at_the_point(cases.NLEV + 1), at_the_point(cases.NLEV + 1)
    with pytest.raises(sc.DomainError) as embedded:
        program(*embedded_args)
    with pytest.raises(sc.DomainError) as compiled:
        run(*compiled_args)
    assert str(compiled.value) == str(embedded.value)
    assert (compiled_args[2] == -7.0).all() and (compiled_args[3] == -7.0).all()


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_keywords_and_one_size_again(fixture: str, request: pytest.FixtureRequest) -> None:
    run = cases.to_full_levels.with_backend(request.getfixturevalue(fixture))
    w, theta = cases.levels()
    out = np.zeros_like(theta)
    run(out=out, theta=theta, w=w)
    np.testing.assert_array_equal(out, 0.5 * (w[:, :-1] + w[:, 1:]) * theta)
    same = np.zeros_like(w)
    run(w, np.ones_like(w), same)  # one size per dimension: the program as traced
    np.testing.assert_array_equal(same[:, :-1], 0.5 * (w[:, :-1] + w[:, 1:]))
    run(w, theta, out)  # and the specialisation once more, from the native path's rejection
    np.testing.assert_array_equal(out, 0.5 * (w[:, :-1] + w[:, 1:]) * theta)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_errors_name_the_argument(fixture: str, request: pytest.FixtureRequest) -> None:
    toolchain = request.getfixturevalue(fixture)
    w, theta = cases.levels()
    half = np.full_like(w, -7.0)
    with pytest.raises(sc.DomainError, match=r"argument 'theta' leaves its range \[0, 6\) along K"):
        cases.to_half_levels_given.with_backend(toolchain)(theta, half, np.int32(cases.NLEV + 1))
    with pytest.raises(sc.DomainError, match=r"argument 'theta' leaves its range \[0, 6\) along K"):
        cases.to_half_levels_to_the_end.with_backend(toolchain)(theta, half)
    assert (half == -7.0).all()
    run = cases.to_full_levels.with_backend(toolchain)
    out = np.zeros_like(theta)
    with pytest.raises(sc.ArgumentError, match=r"argument 'out' .*starts at K -2, below 0"):
        run(w, theta, sc.as_field((Cell, K), out, start={K: -2}))
    with pytest.raises(sc.ArgumentError, match=r"argument 'theta' .*expected dtype float64"):
        run(w, theta.astype(np.float32), out)
    with pytest.raises(sc.ArgumentError, match=r"argument 'out' .*shares memory"):
        run(w, theta, w[:, : cases.NLEV])
    assert not out.any()


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_inputs_below_zero(fixture: str, kind: str, request: pytest.FixtureRequest) -> None:
    toolchain = request.getfixturevalue(fixture)
    a = cases.below_zero()
    mixed = np.random.default_rng(17).random((cases.N_CELLS - 1, cases.NLEV + 2))

    def out() -> np.ndarray:
        return _layout(np.full((cases.N_CELLS, cases.NLEV), -7.0), kind)

    def below(data: np.ndarray, start: dict[sc.Dimension, int]) -> sc.FieldValue:
        return sc.as_field((Cell, K), _layout(data, kind), start=start)

    _both(
        cases.from_below.with_backend(toolchain),
        cases.from_below,
        lambda: (below(a, {K: -1}), out()),
        (1,),
    )
    _both(  # over K [-1, NLEV - 3): the inferred domain stops 2 levels early
        cases.from_below.with_backend(toolchain),
        cases.from_below,
        lambda: (below(a[:, : cases.NLEV - 2], {K: -1}), out()),
        (1,),
    )
    _both(
        cases.from_two_below_given.with_backend(toolchain),
        cases.from_two_below_given,
        lambda: (below(a, {K: -1}), out(), np.int32(1)),
        (1,),
    )
    _both(
        cases.from_two_levels_below.with_backend(toolchain),
        cases.from_two_levels_below,
        lambda: (below(mixed, {Cell: 1, K: -2}), out()),
        (1,),
    )
    _both(  # below 0 along Cell, beside a concat_where along K
        cases.from_below_but_at_the_top.with_backend(toolchain),
        cases.from_below_but_at_the_top,
        lambda: (below(a[:, 1:], {Cell: -1}), out()),
        (1,),
    )
    # below 0 along K, the dimension of a concat_where
    for program in (cases.from_below_but_at_the_top, cases.from_below_in_a_low_branch):
        _both(program.with_backend(toolchain), program, lambda: (below(a, {K: -1}), out()), (1,))
    for program in (cases.sums_of, cases.sums_from_below):  # scans
        _both(program.with_backend(toolchain), program, lambda: (below(a, {K: -1}), out()), (1,))
    # and against the reference of the embedded tests
    got = out()
    cases.from_two_levels_below.with_backend(toolchain)(below(mixed, {Cell: 1, K: -2}), got)
    expected = np.full((cases.N_CELLS, cases.NLEV), -7.0)
    expected[1:, :] = mixed[:, : cases.NLEV] + mixed[:, 1 : cases.NLEV + 1]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_inputs_below_zero_errors(fixture: str, request: pytest.FixtureRequest) -> None:
    toolchain = request.getfixturevalue(fixture)
    a = sc.as_field((Cell, K), cases.below_zero(), start={K: -1})
    out = np.full((cases.N_CELLS, cases.NLEV), -7.0)
    with pytest.raises(sc.DomainError) as embedded:
        cases.from_two_below_given(a, out, np.int32(0))
    with pytest.raises(sc.DomainError) as compiled:
        cases.from_two_below_given.with_backend(toolchain)(a, out, np.int32(0))
    assert str(compiled.value) == str(embedded.value)
    assert "of argument 'a' leaves its range [-1, 6) along K" in str(compiled.value)
    assert (out == -7.0).all()
    with pytest.raises(sc.ArgumentError) as embedded_arg:
        cases.from_below(a, sc.as_field((Cell, K), np.zeros((cases.N_CELLS, 7)), start={K: -1}))
    with pytest.raises(sc.ArgumentError) as compiled_arg:
        cases.from_below.with_backend(toolchain)(
            a, sc.as_field((Cell, K), np.zeros((cases.N_CELLS, 7)), start={K: -1})
        )
    assert str(compiled_arg.value) == str(embedded_arg.value)
    assert "argument 'out' of from_below()" in str(compiled_arg.value)
    assert "for an output" in str(compiled_arg.value)
    assert (out == -7.0).all()


# --- along the dimensions a neighbour table indexes ------------------------------------


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_along_tables(fixture: str, kind: str, request: pytest.FixtureRequest) -> None:
    """gt4py's fields from an origin read through E2V, an output over part of the rows,
    composed shifts, skip values beside half levels, C2C, and a temporary read through a
    table (tests/program/test_own_ranges_tables.py checks them against NumPy)."""
    toolchain = request.getfixturevalue(fixture)
    e2v, c2e, c2c = tables.e2v_table(), tables.c2e_table(), tables.c2c_table()
    rng = np.random.default_rng(21)
    a, c = rng.random(tables.N_VERTICES), rng.random(tables.N_CELLS)
    e = rng.random((tables.N_EDGES - 1, tables.NLEV + 1))
    start, stop = tables.edges_from_origin(e2v, all_slots=True)
    origin = tables.ORIGIN

    def part(dim: sc.Dimension, data: np.ndarray, first: int) -> sc.FieldValue:
        return sc.as_field((dim,), _layout(data, kind), start={dim: first})

    def edges() -> np.ndarray:
        return np.full(tables.N_EDGES, -7.0)

    def from_origin() -> tuple[Any, ...]:
        return part(Vertex, a[origin:], origin), e2v, part(Edge, edges()[start:stop], start)

    for program in (tables.shift_e2v, tables.sum_e2v, tables.through_a_temporary):
        _both(program.with_backend(toolchain), program, from_origin, (2,))
    _both(  # the entries before the origin select the other branch
        tables.guarded_shift.with_backend(toolchain),
        tables.guarded_shift,
        lambda: (part(Vertex, a[origin:], origin), e2v, _layout(edges(), kind)),
        (2,),
    )
    _both(  # the rows [3, N_EDGES - 1) of the table
        tables.sum_e2v.with_backend(toolchain),
        tables.sum_e2v,
        lambda: (a, e2v, part(Edge, edges()[3:-1], 3)),
        (2,),
    )
    _both(
        tables.composed.with_backend(toolchain),
        tables.composed,
        lambda: (part(Vertex, a[1:], 1), e2v, c2e, np.full(tables.N_CELLS, -7.0)),
        (3,),
    )
    _both(
        tables.sum_c2e_k.with_backend(toolchain),
        tables.sum_c2e_k,
        lambda: (
            sc.as_field((Edge, K), _layout(e, kind), start={Edge: 1}),
            c2e,
            _layout(np.full((tables.N_CELLS, tables.NLEV), -7.0), kind),
        ),
        (2,),
    )
    _both(
        tables.differences.with_backend(toolchain),
        tables.differences,
        lambda: (part(tables.Cell, c[1:], 1), c2c, np.full(3, -7.0)),
        (2,),
    )
    _both(  # read at the point too: the domain starts at cell 1
        tables.plus_next.with_backend(toolchain),
        tables.plus_next,
        lambda: (part(tables.Cell, c[1:], 1), tables.c2c_from_one(), np.full(tables.N_CELLS, -7.0)),
        (2,),
    )


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_along_tables_errors(fixture: str, request: pytest.FixtureRequest) -> None:
    """An entry read outside the field it reads: the embedded executor's ArgumentError,
    naming the table, its row and entry, and the field, before anything is written; also
    when the same arrays ran before (the entries are checked at every call)."""
    toolchain = request.getfixturevalue(fixture)
    e2v = tables.e2v_table()
    a = np.random.default_rng(22).random(tables.N_VERTICES)
    start, stop = tables.edges_from_origin(e2v, all_slots=True)
    origin = tables.ORIGIN
    run = tables.sum_e2v.with_backend(toolchain)

    def call(program: Any, table: np.ndarray, first: int) -> np.ndarray:
        out = np.full(tables.N_EDGES, -7.0)
        program(
            sc.as_field((Vertex,), a[origin:], start={Vertex: origin}),
            table,
            sc.as_field((Edge,), out[first:stop], start={Edge: first}),
        )
        return out

    with pytest.raises(sc.ArgumentError) as embedded:
        call(tables.sum_e2v, e2v, start - 1)
    with pytest.raises(sc.ArgumentError) as compiled:
        call(run, e2v, start - 1)
    assert str(compiled.value) == str(embedded.value)
    assert "argument 'e2v' of sum_e2v(): the table of E2V holds" in str(compiled.value)
    assert "of argument 'a', which spans [2, " in str(compiled.value)
    # the same shapes run, then an entry changed in place is refused at the next call
    good = e2v.copy()
    before = call(run, good, start)
    good[start + 1, 1] = origin - 1
    out = np.full(tables.N_EDGES, -7.0)
    with pytest.raises(sc.ArgumentError, match=rf"holds {origin - 1} at row {start + 1}, slot 1"):
        run(
            sc.as_field((Vertex,), a[origin:], start={Vertex: origin}),
            good,
            sc.as_field((Edge,), out[start:stop], start={Edge: start}),
        )
    assert (out == -7.0).all()
    assert (before[start:stop] != -7.0).all()
    # a table with fewer rows than the fields' index space
    with pytest.raises(sc.ArgumentError, match=r"argument 'e2v' .*has \d+ rows, but fields span"):
        run(sc.as_field((Vertex,), a[1:], start={Vertex: 1}), e2v[:-1], np.zeros(tables.N_EDGES))


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_along_tables_entries_checked_again_for_the_same_shapes(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    """Fields all starting at 0, shorter than the index space: the compiled module would
    remember the specialisation for these shapes (module_entry.h); a specialisation whose
    table reads are checked is not remembered, so an entry changed in place is refused."""
    run = tables.sum_two_fields.with_backend(request.getfixturevalue(fixture))
    e2v = tables.e2v_table()
    a = np.random.default_rng(23).random(tables.N_VERTICES)
    end = int(e2v[:4].max()) + 1
    wide = np.zeros(tables.N_VERTICES)
    for _ in range(2):
        out = np.full(4, -7.0)
        run(a[:end], wide, e2v, out)
        np.testing.assert_array_equal(out, a[e2v[:4]].sum(axis=1))
    e2v[2, 0] = end
    out = np.full(4, -7.0)
    with pytest.raises(sc.ArgumentError, match=rf"holds {end} at row 2, slot 0.*argument 'a'"):
        run(a[:end], wide, e2v, out)
    assert (out == -7.0).all()


def test_along_table_rows_only_nothing_is_checked_in_python() -> None:
    """A key with ranges along a table's rows only needs no walk of its reads (the rows
    span the index space), so its specialisation may be remembered for its shapes; one
    with a range along the source does."""
    from stencilchain.program.own_ranges import specialise_ranges
    from stencilchain.program.table_reads import TableReads

    program = tables.sum_e2v.ir
    rows_only = specialise_ranges(program, {"out": ((3, 1),)})
    assert not TableReads(rows_only).active
    from_origin = specialise_ranges(program, {"a": ((2, 0),), "out": ((3, 1),)})
    assert TableReads(from_origin).active
