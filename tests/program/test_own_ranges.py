"""Fields over their own ranges on the embedded executor, against NumPy references written
here: ICON's half levels (fields of nlev + 1 and nlev levels in one call), fields whose
index space starts after 0 (`sc.as_field(..., start=)`, as gt4py's origin tests write
them) or, for inputs, below 0 (read at negative offsets from the points from 0 on),
temporaries between such calls, and the errors that name the argument. The compiled
toolchains run the same programs: tests/runtime/test_own_ranges_compiled.py."""

from __future__ import annotations

import numpy as np
import pytest

import stencilchain as sc

Cell = sc.Dimension("Cell")
K = sc.Dimension("K", kind=sc.VERTICAL)
CK = sc.Field[[Cell, K], sc.float64]
I = sc.Dimension("I")
IF = sc.Field[[I], sc.int32]

N_CELLS, NLEV = 5, 6


@sc.field_operator
def interpolate(w: CK, theta: CK) -> CK:
    """Full levels from half levels: level k between half levels k and k + 1."""
    return 0.5 * (w + w(K + 1)) * theta


@sc.program
def to_full_levels(w: CK, theta: CK, out: CK) -> None:
    interpolate(w, theta, out=out)


@sc.field_operator
def average_down(theta: CK) -> CK:
    return 0.5 * (theta + theta(K - 1))


@sc.program
def to_half_levels(theta: CK, w: CK) -> None:
    """Half levels 1 .. nlev - 1 from full levels (0 and nlev stay as they are)."""
    average_down(theta, out=w)


@sc.program
def to_half_levels_given(theta: CK, w: CK, nlev: sc.int32) -> None:
    average_down(theta, out=w, domain={K: (1, nlev)})


@sc.program
def to_half_levels_to_the_end(theta: CK, w: CK) -> None:
    average_down(theta, out=w, domain={K: (1, None)})


@sc.field_operator
def doubled(theta: CK) -> CK:
    return 2.0 * theta


@sc.field_operator
def plus(a: CK, b: CK) -> CK:
    return a + b


@sc.program
def through_a_temporary(theta: CK, w: CK, out: CK) -> None:
    """A temporary made from a full-level field, read by a call writing half levels: it
    holds values only on the full levels, so the second call writes only those."""
    tmp = doubled(theta)
    plus(tmp, w, out=out)


@sc.field_operator
def identity(a: IF) -> IF:
    return a


@sc.program
def copy(a: IF, out: IF) -> None:
    identity(a, out=out)


@sc.program
def copy_over(a: IF, out: IF) -> None:
    identity(a, out=out, domain={I: (1, 9)})


@sc.field_operator
def one_below(a: CK) -> CK:
    return a(K - 1)


@sc.program
def from_below(a: CK, out: CK) -> None:
    one_below(a, out=out)


@sc.field_operator
def two_below(a: CK) -> CK:
    return a(K - 2)


@sc.program
def from_two_below_given(a: CK, out: CK, k0: sc.int32) -> None:
    two_below(a, out=out, domain={K: (k0, None)})


@sc.field_operator
def two_levels_below(a: CK) -> CK:
    return a(K - 2) + a(K - 1)


@sc.program
def from_two_levels_below(a: CK, out: CK) -> None:
    two_levels_below(a, out=out)


@sc.scan_operator(axis=K, init=0.0)
def running_sum(total, f: CK):  # type: ignore[no-untyped-def]
    return total + f


@sc.program
def sums_of(a: CK, out: CK) -> None:
    running_sum(a, out=out)


@sc.field_operator
def sum_from_below(a: CK) -> CK:
    return running_sum(a(K - 1))  # type: ignore[no-any-return]


@sc.program
def sums_from_below(a: CK, out: CK) -> None:
    sum_from_below(a, out=out)


@sc.field_operator
def below_but_at_the_top(a: CK) -> CK:
    return sc.concat_where(K == 0, a, a(K - 1))


@sc.program
def from_below_but_at_the_top(a: CK, out: CK) -> None:
    below_but_at_the_top(a, out=out)


@sc.field_operator
def below_in_a_low_branch(a: CK) -> CK:
    return sc.concat_where(K >= 2, a, a(K - 1))


@sc.program
def from_below_in_a_low_branch(a: CK, out: CK) -> None:
    below_in_a_low_branch(a, out=out)


@sc.program
def from_below_in_a_low_branch_given(a: CK, out: CK, k0: sc.int32) -> None:
    below_in_a_low_branch(a, out=out, domain={K: (k0, NLEV)})


@sc.scan_operator(axis=K, forward=False, init=0.0)
def falling_sum(total, f: CK):  # type: ignore[no-untyped-def]
    return 0.5 * total + f


@sc.field_operator
def sums_of_differences(w: CK) -> CK:
    """A scan of a computed argument (made by a call of its own) of half levels."""
    return running_sum(w(K + 1) - w)  # type: ignore[no-any-return]


@sc.field_operator
def falling_above_the_top(theta: CK) -> CK:
    """A backward scan in a branch from level 1 on, its result read one level up."""
    return sc.concat_where(K >= 1, falling_sum(theta)(K - 1), theta)  # type: ignore[no-any-return]


@sc.program
def scans_beside_half_levels(w: CK, theta: CK, out: CK, out2: CK) -> None:
    sums_of_differences(w, out=out)
    falling_above_the_top(theta, out=out2)


@sc.field_operator
def half_above_in_a_branch(w: CK, theta: CK) -> CK:
    """A branch reading a half-level field beyond the full levels' range, and theta."""
    return sc.concat_where(K < sc.size(K) - 1, w(K + 1) + theta, theta)  # noqa: SIM300


@sc.field_operator
def two_above_in_a_branch(w: CK, theta: CK) -> CK:
    return sc.concat_where(K >= 1, theta(K + 1), w)


@sc.program
def branches_beside_half_levels(w: CK, theta: CK, out: CK, out2: CK, n: sc.int32) -> None:
    half_above_in_a_branch(w, theta, out=out)
    two_above_in_a_branch(w, theta, out=out2, domain={K: (0, n)})


@sc.field_operator
def full_levels_from_one(theta: CK, w: CK) -> CK:
    """A branch reading a full-level field at its point only (no offset)."""
    return sc.concat_where(K >= 1, theta, w)


@sc.program
def half_levels_from_full_ones(theta: CK, w: CK, out: CK, out2: CK, n: sc.int32) -> None:
    full_levels_from_one(theta, w, out=out)
    full_levels_from_one(theta, w, out=out2, domain={K: (0, n)})


def levels() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    return rng.random((N_CELLS, NLEV + 1)), rng.random((N_CELLS, NLEV))


def test_full_levels_from_half_levels() -> None:
    w, theta = levels()
    out = np.zeros((N_CELLS, NLEV))
    to_full_levels(w, theta, out)
    np.testing.assert_array_equal(out, 0.5 * (w[:, :-1] + w[:, 1:]) * theta)


def test_half_levels_from_full_levels_inferred() -> None:
    _, theta = levels()
    w = np.full((N_CELLS, NLEV + 1), -7.0)
    to_half_levels(theta, w)
    expected = np.full((N_CELLS, NLEV + 1), -7.0)
    expected[:, 1:NLEV] = 0.5 * (theta[:, 1:] + theta[:, :-1])
    np.testing.assert_array_equal(w, expected)


def test_half_levels_over_a_domain_from_a_scalar() -> None:
    _, theta = levels()
    w = np.full((N_CELLS, NLEV + 1), -7.0)
    to_half_levels_given(theta, w, np.int32(NLEV))
    expected = np.full((N_CELLS, NLEV + 1), -7.0)
    expected[:, 1:NLEV] = 0.5 * (theta[:, 1:] + theta[:, :-1])
    np.testing.assert_array_equal(w, expected)


def test_scans_in_field_operators_run_over_their_calls_narrowed_domains() -> None:
    """Scans that field operators call (lowered into calls of their own: the scan's
    computed argument, the scan, the rest) beside half levels run over the nlev full
    levels that their calls' domains are narrowed to, not the nlev + 1 of the index space."""
    w, theta = levels()
    out, out2 = np.full((N_CELLS, NLEV), -7.0), np.full((N_CELLS, NLEV), -7.0)
    scans_beside_half_levels(w, theta, out, out2)
    np.testing.assert_allclose(out, np.cumsum(np.diff(w, axis=1), axis=1), rtol=1e-13)
    falling = np.zeros((N_CELLS, NLEV))
    total = np.zeros(N_CELLS)
    for k in reversed(range(NLEV)):  # from the branch's last level down
        total = 0.5 * total + theta[:, k]
        falling[:, k] = total
    expected = np.empty((N_CELLS, NLEV))
    expected[:, 0] = theta[:, 0]
    expected[:, 1:] = falling[:, :-1]
    np.testing.assert_allclose(out2, expected, rtol=1e-13)


def test_a_branchs_reads_stay_inside_the_field_it_reads() -> None:
    """A concat_where branch's reads of a half-level field are checked against that field's
    nlev + 1 levels, not against the nlev of the other fields the call reads."""
    w, theta = levels()
    out, out2 = np.full((N_CELLS, NLEV), -7.0), np.full((N_CELLS, NLEV), -7.0)
    branches_beside_half_levels(w, theta, out, out2, np.int32(NLEV - 1))
    np.testing.assert_array_equal(out, w[:, 1:] + theta)
    expected = np.full((N_CELLS, NLEV), -7.0)
    expected[:, 0] = w[:, 0]
    expected[:, 1 : NLEV - 1] = theta[:, 2:NLEV]
    np.testing.assert_array_equal(out2, expected)
    out, out2 = np.full((N_CELLS, NLEV), -7.0), np.full((N_CELLS, NLEV), -7.0)
    with pytest.raises(
        sc.DomainError,
        match=r"call of two_above_in_a_branch in branches_beside_half_levels\(\): domain K: "
        r"\[0, 6\) with reads from K\+1 to K\+1 in a concat_where branch selected where K is "
        r"in \[1, inf\), at K in \[1, 6\), of argument 'theta' leaves its range \[0, 6\) "
        r"along K",
    ):
        branches_beside_half_levels(w, theta, out, out2, np.int32(NLEV))
    assert (out == -7.0).all() and (out2 == -7.0).all()


def test_a_branch_reading_a_shorter_field_at_its_point_is_checked() -> None:
    """Found while fixing the fuzzer's findings: a branch reading a full-level field with
    no offset, over half levels, read past the field's last level (its window was dropped
    as inside the halo) and wrote what lay beyond; now an inferred domain stops at the
    field's last level and a given one beyond it is the DomainError naming the field."""
    w, theta = levels()
    out, out2 = np.full_like(w, -7.0), np.full_like(w, -7.0)
    half_levels_from_full_ones(theta, w, out, out2, np.int32(NLEV))
    expected = np.full_like(w, -7.0)
    expected[:, 0] = w[:, 0]
    expected[:, 1:NLEV] = theta[:, 1:]
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(out2, expected)
    out, out2 = np.full_like(w, -7.0), np.full_like(w, -7.0)
    with pytest.raises(
        sc.DomainError,
        match=r"call of full_levels_from_one in half_levels_from_full_ones\(\): domain K: "
        r"\[0, 7\) .* of argument 'theta' leaves its range \[0, 6\) along K",
    ):
        half_levels_from_full_ones(theta, w, out, out2, np.int32(NLEV + 1))
    assert (out == -7.0).all() and (out2 == -7.0).all()


def test_a_domain_beyond_an_arguments_range_names_it() -> None:
    _, theta = levels()
    w = np.full((N_CELLS, NLEV + 1), -7.0)
    with pytest.raises(sc.DomainError, match=r"argument 'theta' leaves its range \[0, 6\) along K"):
        to_half_levels_given(theta, w, np.int32(NLEV + 1))
    with pytest.raises(sc.DomainError, match=r"argument 'theta' leaves its range \[0, 6\) along K"):
        to_half_levels_to_the_end(theta, w)
    assert (w == -7.0).all()  # nothing written


def test_a_temporary_holds_values_only_where_its_arguments_do() -> None:
    w, theta = levels()
    out = np.full((N_CELLS, NLEV + 1), -7.0)
    through_a_temporary(theta, w, out)
    expected = np.full((N_CELLS, NLEV + 1), -7.0)
    expected[:, :NLEV] = 2.0 * theta + w[:, :NLEV]
    np.testing.assert_array_equal(out, expected)


def test_an_output_that_starts_after_zero() -> None:
    # gt4py's test_out_field_arg_with_non_zero_domain_start
    size = 10
    inp = np.arange(size, dtype=np.int32) * 3
    out = np.zeros(size - 3, np.int32)
    copy(inp, sc.as_field((I,), out, start={I: 1}))
    np.testing.assert_array_equal(out, inp[1:-2])


def test_an_input_that_starts_after_zero() -> None:
    # gt4py's test_in_field_arg_with_non_zero_domain_start
    inp = np.full(8, 42, np.int32)
    out = np.arange(10, dtype=np.int32)
    expected = out.copy()
    expected[1:9] = inp
    copy_over(sc.as_field((I,), inp, start={I: 1}), out)
    np.testing.assert_array_equal(out, expected)


def test_ranges_by_keyword_and_again_plain() -> None:
    w, theta = levels()
    out = np.zeros((N_CELLS, NLEV))
    to_full_levels(out=out, theta=theta, w=w)
    np.testing.assert_array_equal(out, 0.5 * (w[:, :-1] + w[:, 1:]) * theta)
    same = np.zeros((N_CELLS, NLEV + 1))
    to_full_levels(w, np.ones((N_CELLS, NLEV + 1)), same)  # one size again: as traced
    np.testing.assert_array_equal(same[:, :-1], 0.5 * (w[:, :-1] + w[:, 1:]))


def test_a_specialisation_is_the_traced_program_with_own_reads() -> None:
    from stencilchain.program.own_ranges import specialise_ranges

    program = to_full_levels.ir
    spec = specialise_ranges(program, {"theta": ((0, 0), (0, 1)), "out": ((0, 0), (0, 1))})
    assert spec.ranges == (("out", ((0, 0), (0, 1))), ("theta", ((0, 0), (0, 1))))
    k = next(dd for dd in spec.calls[0].domain.dims if dd.dim == K)
    assert {own.name for own in k.own} == {"theta", "out"}
    assert spec.fingerprint() != program.fingerprint()
    assert not program.ranges and all(not dd.own for dd in program.calls[0].domain.dims)


def test_misuse_names_the_argument() -> None:
    w, theta = levels()
    out = np.zeros((N_CELLS, NLEV))
    with pytest.raises(sc.ArgumentError, match=r"argument 'out' .*starts at K -2, below 0"):
        to_full_levels(w, theta, sc.as_field((Cell, K), out, start={K: -2}))
    with pytest.raises(sc.ArgumentError, match=r"argument 'w' .*over \(K, Cell\)"):
        to_full_levels(sc.as_field((K, Cell), w.T), theta, out)
    with pytest.raises(sc.ArgumentError, match=r"argument 'theta' .*expected dtype float64"):
        to_full_levels(w, theta.astype(np.float32), out)
    read_only = np.zeros((N_CELLS, NLEV))
    read_only.flags.writeable = False
    with pytest.raises(sc.ArgumentError, match=r"argument 'out' .*read-only"):
        to_full_levels(w, theta, read_only)
    with pytest.raises(sc.ArgumentError, match=r"argument 'out' .*shares memory"):
        to_full_levels(w, theta, w[:, :NLEV])
    assert not out.any()


Edge = sc.Dimension("Edge")
C2EDim = sc.Dimension("C2E", kind=sc.LOCAL)
C2E = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=2)


@sc.field_operator
def edge_sum(e: sc.Field[[Edge, K], sc.float64]) -> CK:
    return sc.neighbor_sum(e(C2E), axis=C2EDim)


@sc.program
def sum_edges(e: sc.Field[[Edge, K], sc.float64], c2e: sc.Table[C2E], out: CK) -> None:
    edge_sum(e, out=out)


def test_ranges_along_a_table_dimension_are_checked_against_its_entries() -> None:
    """Along the dimensions a table indexes fields may cover their own ranges (more in
    tests/program/test_own_ranges_tables.py); an entry read outside one is refused."""
    c2e = np.array([[0, 1], [1, 2], [2, 0]], dtype=np.int32)
    e = np.random.default_rng(3).random((3, NLEV + 1))
    out = np.zeros((3, NLEV))
    sum_edges(e, c2e, out)  # K: half levels in, full levels out
    np.testing.assert_array_equal(out, (e[c2e[:, 0]] + e[c2e[:, 1]])[:, :NLEV])
    with pytest.raises(sc.ArgumentError, match=r"argument 'c2e' .*3 rows.*\[0, 4\) along Cell"):
        sum_edges(e, c2e, np.zeros((4, NLEV)))
    with pytest.raises(
        sc.ArgumentError,
        match=r"argument 'c2e' .*holds 2 at row 1, slot 1.*argument 'e', which spans \[0, 2\)",
    ):
        sum_two(e[:2], e, c2e, out)


@sc.field_operator
def edge_sum_of_two(a: sc.Field[[Edge, K], sc.float64], b: sc.Field[[Edge, K], sc.float64]) -> CK:
    return sc.neighbor_sum(a(C2E) + b(C2E), axis=C2EDim)


@sc.program
def sum_two(
    e: sc.Field[[Edge, K], sc.float64],
    f: sc.Field[[Edge, K], sc.float64],
    c2e: sc.Table[C2E],
    out: CK,
) -> None:
    edge_sum_of_two(e, f, out=out)


# --- inputs that start below 0 --------------------------------------------------------


def below_zero() -> np.ndarray:
    """A field over K from -1: NLEV + 1 levels, the first one below 0."""
    return np.random.default_rng(13).random((N_CELLS, NLEV + 1))


def test_an_input_that_starts_below_zero_is_read_below_every_point() -> None:
    a = below_zero()
    out = np.full((N_CELLS, NLEV), -7.0)
    from_below(sc.as_field((Cell, K), a, start={K: -1}), out)
    # out[k] = a(k - 1), which is a's row k (a's row 0 is K -1)
    np.testing.assert_array_equal(out, a[:, :NLEV])


def test_an_inferred_domain_stops_where_an_input_below_zero_ends() -> None:
    a = below_zero()[:, :NLEV]  # over K [-1, NLEV - 1)
    out = np.full((N_CELLS, NLEV), -7.0)
    from_below(sc.as_field((Cell, K), a, start={K: -1}), out)
    expected = np.full((N_CELLS, NLEV), -7.0)
    expected[:, :NLEV] = a  # out[k] = a(k - 1) for k in [0, NLEV)
    np.testing.assert_array_equal(out, expected)
    short = below_zero()[:, : NLEV - 2]  # over [-1, NLEV - 3): out's last 2 levels stay
    out = np.full((N_CELLS, NLEV), -7.0)
    from_below(sc.as_field((Cell, K), short, start={K: -1}), out)
    expected = np.full((N_CELLS, NLEV), -7.0)
    expected[:, : NLEV - 2] = short
    np.testing.assert_array_equal(out, expected)


def test_a_given_domain_reading_below_an_input_below_zero_names_it() -> None:
    a = below_zero()
    field = sc.as_field((Cell, K), a, start={K: -1})
    out = np.full((N_CELLS, NLEV), -7.0)
    from_two_below_given(field, out, np.int32(1))  # reads from K -1 on: inside
    expected = np.full((N_CELLS, NLEV), -7.0)
    expected[:, 1:] = a[:, : NLEV - 1]
    np.testing.assert_array_equal(out, expected)
    out = np.full((N_CELLS, NLEV), -7.0)
    with pytest.raises(
        sc.DomainError,
        match=r"domain K: \[0, 6\) with reads from K-2 to K-2 of argument 'a' leaves its "
        r"range \[-1, 6\) along K",
    ):
        from_two_below_given(field, out, np.int32(0))
    assert (out == -7.0).all()  # nothing written


def test_an_output_that_starts_below_zero_is_refused() -> None:
    a = below_zero()
    out = np.zeros((N_CELLS, NLEV + 1))
    with pytest.raises(
        sc.ArgumentError,
        match=r"argument 'out' of from_below\(\): .*starts at K -1, below 0, for an output: "
        r"every domain lies in \[0, size\) along K, so its points below 0 are outside every "
        r"domain; start it at 0",
    ):
        from_below(
            sc.as_field((Cell, K), a, start={K: -1}), sc.as_field((Cell, K), out, start={K: -1})
        )
    assert not out.any()


def test_an_input_below_zero_along_one_dimension_and_after_zero_along_another() -> None:
    a = np.random.default_rng(17).random((N_CELLS - 1, NLEV + 2))  # Cell [1, 5), K [-2, 6)
    out = np.full((N_CELLS, NLEV), -7.0)
    from_two_levels_below(sc.as_field((Cell, K), a, start={Cell: 1, K: -2}), out)
    expected = np.full((N_CELLS, NLEV), -7.0)
    # out[c, k] = a(c, k - 2) + a(c, k - 1): a's rows c - 1, columns k and k + 1
    expected[1:, :] = a[:, :NLEV] + a[:, 1 : NLEV + 1]
    np.testing.assert_array_equal(out, expected)


def test_a_specialisation_for_an_input_below_zero_starts_at_zero() -> None:
    from stencilchain.program.own_ranges import specialise_ranges

    program = from_two_levels_below.ir
    k = next(dd for dd in program.calls[0].domain.dims if dd.dim == K)
    assert k.resolve(10) == (2, 10) and k.halo == (2, 0)
    spec = specialise_ranges(program, {"a": ((0, 0), (-2, 0))})
    k = next(dd for dd in spec.calls[0].domain.dims if dd.dim == K)
    assert k.resolve(10) == (0, 10) and k.halo == (0, 0)
    spec = specialise_ranges(program, {"a": ((0, 0), (-1, 0))})  # a reads K -2 from K 1 on
    k = next(dd for dd in spec.calls[0].domain.dims if dd.dim == K)
    assert k.resolve(10) == (1, 10)
    spec = specialise_ranges(program, {"a": ((0, 0), (-3, 0))})  # never below 0
    k = next(dd for dd in spec.calls[0].domain.dims if dd.dim == K)
    assert k.resolve(10) == (0, 10)


def test_a_scan_over_an_input_below_zero() -> None:
    a = below_zero()
    out = np.full((N_CELLS, NLEV), -7.0)
    sums_of(sc.as_field((Cell, K), a, start={K: -1}), out)  # reads levels 0 on
    np.testing.assert_allclose(out, np.cumsum(a[:, 1:], axis=1), rtol=1e-14)
    # a scan that a field operator calls starts where its call's domain, narrowed by the
    # fields' ranges, starts: at level 0, reading a(K - 1) at level -1 (docs/dsl.md) ...
    out = np.full((N_CELLS, NLEV), -7.0)
    sums_from_below(sc.as_field((Cell, K), a, start={K: -1}), out)
    np.testing.assert_allclose(out, np.cumsum(a[:, :NLEV], axis=1), rtol=1e-14)
    # ... and at level 1 when a starts at 0
    out = np.full((N_CELLS, NLEV), -7.0)
    sums_from_below(a[:, 1:], out)
    expected = np.full((N_CELLS, NLEV), -7.0)
    expected[:, 1:] = np.cumsum(a[:, 1:NLEV], axis=1)
    np.testing.assert_allclose(out, expected, rtol=1e-14)


def test_an_input_below_zero_along_a_concat_where_dimension() -> None:
    a = below_zero()
    out = np.full((N_CELLS, NLEV), -7.0)
    # concat_where(K == 0, a, a(K - 1)): level 0 reads a at 0, the others at K - 1
    from_below_but_at_the_top(sc.as_field((Cell, K), a, start={K: -1}), out)
    expected = np.empty((N_CELLS, NLEV))
    expected[:, 0] = a[:, 1]
    expected[:, 1:] = a[:, 1:NLEV]
    np.testing.assert_array_equal(out, expected)
    # concat_where(K >= 2, a, a(K - 1)) reads level -1 at level 0, so starts there (over
    # fields from 0 it starts at level 1)
    out = np.full((N_CELLS, NLEV), -7.0)
    from_below_in_a_low_branch(sc.as_field((Cell, K), a, start={K: -1}), out)
    expected[:, :2] = a[:, :2]
    expected[:, 2:] = a[:, 3:]
    np.testing.assert_array_equal(out, expected)
    out = np.full((N_CELLS, NLEV), -7.0)
    from_below_in_a_low_branch(a[:, 1:], out)
    expected[:, 0] = -7.0
    expected[:, 1] = a[:, 1]
    np.testing.assert_array_equal(out, expected)
    # a given domain reading below 0 in a branch: the DomainError, unless the field is there
    out = np.full((N_CELLS, NLEV), -7.0)
    with pytest.raises(
        sc.DomainError,
        match=r"in a concat_where branch .* at K in \[0, 2\), leaves the array of size 6 along K",
    ):
        from_below_in_a_low_branch_given(a[:, 1:], out, np.int32(0))
    assert (out == -7.0).all()
    from_below_in_a_low_branch_given(sc.as_field((Cell, K), a, start={K: -1}), out, np.int32(0))
    expected[:, 0] = a[:, 0]
    np.testing.assert_array_equal(out, expected)
    # below 0 along another dimension (Cell [-1, 4)), from 0 along K
    out = np.zeros((N_CELLS, NLEV))
    from_below_but_at_the_top(sc.as_field((Cell, K), a[:, 1:], start={Cell: -1}), out)
    expected = np.zeros((N_CELLS, NLEV))
    expected[:-1, 0] = a[1:, 1]
    expected[:-1, 1:] = a[1:, 1:NLEV]
    np.testing.assert_array_equal(out, expected)
