"""Staggered dimensions and half shifts on the embedded executor, against NumPy references
written here: gt4py's staggered feature tests (tests/next_tests/.../test_staggered.py,
written in stencilchain's DSL), ICON-style half levels (`w` on nlev + 1 half levels next to
`theta` on nlev full levels, each over its own dimension), and the errors of mixing a
dimension with its staggered counterpart. The compiled toolchains run the same programs:
tests/runtime/test_staggered_compiled.py."""

from __future__ import annotations

import numpy as np
import pytest

import stencilchain as sc

I = sc.Dimension("I")
IHalf = sc.staggered(I)
J = sc.Dimension("J")
K = sc.Dimension("K", kind=sc.VERTICAL)
KHalf = sc.staggered(K)
Cell = sc.Dimension("Cell")
IF = sc.Field[[I], sc.int32]
IHF = sc.Field[[IHalf], sc.int32]
FULL = sc.Field[[Cell, K], sc.float64]
HALF = sc.Field[[Cell, KHalf], sc.float64]

SIZE = 10
N_CELLS, NLEV = 4, 6


# --- gt4py's staggered feature tests ---------------------------------------------------


@sc.field_operator
def copy_half(a: IHF) -> IHF:
    pair = (a, a)
    return pair[0]


@sc.program
def copy_half_field(a: IHF, out: IHF) -> None:
    copy_half(a, out=out)


@sc.field_operator
def shift_to_half(a: IF) -> IHF:
    return a(IHalf + 0.5)


@sc.program
def half_shift_plus(a: IF, out: IHF) -> None:
    shift_to_half(a, out=out)


@sc.field_operator
def shift_there_and_back(a: IHF) -> IHF:
    return a(I + 0.5)(IHalf - 0.5)


@sc.program
def half_shift_back(a: IHF, out: IHF) -> None:
    shift_there_and_back(a, out=out)


@sc.field_operator
def shift_within_half(a: IHF) -> IHF:
    return a(IHalf + 1)


@sc.program
def half_shift_plus1(a: IHF, out: IHF) -> None:
    shift_within_half(a, out=out)


@sc.field_operator
def shift_below(a: IF) -> IHF:
    return a(IHalf - 0.5)


@sc.program
def half_shift_minus(a: IF, out: IHF) -> None:
    shift_below(a, out=out)


@sc.field_operator
def half_to_centre(a: IHF) -> IF:
    return 2 * a(I + 0.5)


@sc.program
def half_shift_half2center(a: IHF, out: IF) -> None:
    half_to_centre(a, out=out)


@sc.field_operator
def vertical(a: sc.Field[[K], sc.int32]) -> sc.Field[[KHalf], sc.int32]:
    return a(KHalf + 0.5)


@sc.program
def half_shift_vertical(a: sc.Field[[K], sc.int32], out: sc.Field[[KHalf], sc.int32]) -> None:
    vertical(a, out=out)


@sc.field_operator
def multi_dim(a: sc.Field[[I, J], sc.int32]) -> sc.Field[[IHalf, J], sc.int32]:
    return a(IHalf + 0.5)


@sc.program
def half_shift_multi_dim(
    a: sc.Field[[I, J], sc.int32], out: sc.Field[[IHalf, J], sc.int32]
) -> None:
    multi_dim(a, out=out)


def _ints(n: int, seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).integers(-50, 50, n).astype(np.int32)


def test_copy_half_field() -> None:
    a, out = _ints(SIZE), np.zeros(SIZE, np.int32)
    copy_half_field(a, out)
    np.testing.assert_array_equal(out, a)


def test_half_shift_plus_reads_the_point_above() -> None:
    """`a(IHalf + 0.5)`: half point h sits below point h of I, so it reads a[h]."""
    a, out = _ints(SIZE), np.zeros(SIZE, np.int32)
    half_shift_plus(a, out)
    np.testing.assert_array_equal(out, a)


def test_half_shift_there_and_back_is_the_identity() -> None:
    a, out = _ints(SIZE), np.zeros(SIZE, np.int32)
    half_shift_back(a, out)
    np.testing.assert_array_equal(out, a)


def test_whole_shift_within_the_staggered_dimension() -> None:
    """gt4py's `a` over IHalf (1, size + 1): a field value starting at 1."""
    data, out = _ints(SIZE), np.zeros(SIZE, np.int32)
    half_shift_plus1(sc.as_field([IHalf], data, start={IHalf: 1}), out)
    np.testing.assert_array_equal(out, data)


def test_half_shift_minus_reads_the_point_below() -> None:
    """`a(IHalf - 0.5)` reads a[h - 1]: gt4py's `a` over I (-1, size - 1), an input starting
    below 0, for `out` over IHalf (0, size)."""
    a = _ints(SIZE)
    out = np.zeros(SIZE, np.int32)
    half_shift_minus(sc.as_field([I], a, start={I: -1}), out)
    np.testing.assert_array_equal(out, a)


def test_half_shift_minus_into_an_output_from_one() -> None:
    """The same shift with `a` from 0 and `out` starting at 1."""
    a = _ints(SIZE)
    out = sc.as_field([IHalf], np.zeros(SIZE, np.int32), start={IHalf: 1})
    half_shift_minus(a, out)
    np.testing.assert_array_equal(out.array, a)


def test_half_shift_minus_infers_the_points_it_can_write() -> None:
    a, out = _ints(SIZE), np.full(SIZE, -7, np.int32)
    half_shift_minus(a, out)
    expected = np.full(SIZE, -7, np.int32)
    expected[1:] = a[:-1]
    np.testing.assert_array_equal(out, expected)


def test_half_to_centre() -> None:
    data, out = _ints(SIZE), np.zeros(SIZE, np.int32)
    half_shift_half2center(sc.as_field([IHalf], data, start={IHalf: 1}), out)
    np.testing.assert_array_equal(out, 2 * data)


def test_vertical_and_multi_dimensional() -> None:
    a, out = _ints(SIZE), np.zeros(SIZE, np.int32)
    half_shift_vertical(a, out)
    np.testing.assert_array_equal(out, a)
    b = np.random.default_rng(5).integers(0, 9, (SIZE, 7)).astype(np.int32)
    out2 = np.zeros_like(b)
    half_shift_multi_dim(b, out2)
    np.testing.assert_array_equal(out2, b)


# --- ICON-style half levels --------------------------------------------------------------


@sc.field_operator
def to_half(theta: FULL) -> HALF:
    """The mean of the full levels on either side of each half level."""
    return 0.5 * (theta(KHalf - 0.5) + theta(KHalf + 0.5))


@sc.program
def interpolate_to_half_levels(theta: FULL, w: HALF) -> None:
    to_half(theta, out=w)


@sc.program
def interpolate_to_given_half_levels(theta: FULL, w: HALF, nlev: sc.int32) -> None:
    to_half(theta, out=w, domain={KHalf: (1, nlev)})


@sc.field_operator
def vertical_difference(w: HALF, dz: FULL) -> FULL:
    return (w(K + 0.5) - w(K - 0.5)) / dz


@sc.program
def divergence(w: HALF, dz: FULL, out: FULL) -> None:
    vertical_difference(w, dz, out=out)


@sc.field_operator
def with_boundaries(theta: FULL) -> HALF:
    inner = 0.5 * (theta(KHalf - 0.5) + theta(KHalf + 0.5))
    return sc.concat_where(
        KHalf == 0,
        theta(KHalf + 0.5),
        sc.concat_where(KHalf == sc.size(KHalf) - 1, theta(KHalf - 0.5), inner),
    )


@sc.program
def half_levels_with_boundaries(theta: FULL, w: HALF) -> None:
    with_boundaries(theta, out=w)


@sc.field_operator
def level_index(theta: FULL) -> HALF:
    return sc.astype(sc.index(KHalf), sc.float64) + theta(KHalf - 0.5)


@sc.program
def through_a_half_level_temporary(theta: FULL, dz: FULL, out: FULL) -> None:
    """A temporary over half levels, read back on full levels."""
    w = to_half(theta)
    vertical_difference(w, dz, out=out)


@sc.program
def index_on_half_levels(theta: FULL, w: HALF) -> None:
    level_index(theta, out=w)


def levels() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(17)
    theta = rng.random((N_CELLS, NLEV))
    w = rng.random((N_CELLS, NLEV + 1))
    dz = 1.0 + rng.random((N_CELLS, NLEV))
    return theta, w, dz


def test_full_levels_to_half_levels() -> None:
    theta, _, _ = levels()
    w = np.full((N_CELLS, NLEV + 1), -7.0)
    interpolate_to_half_levels(theta, w)
    expected = np.full((N_CELLS, NLEV + 1), -7.0)
    expected[:, 1:NLEV] = 0.5 * (theta[:, :-1] + theta[:, 1:])
    np.testing.assert_array_equal(w, expected)
    w2 = np.full((N_CELLS, NLEV + 1), -7.0)
    interpolate_to_given_half_levels(theta, w2, np.int32(NLEV))
    np.testing.assert_array_equal(w2, expected)


def test_half_levels_to_full_levels() -> None:
    _, w, dz = levels()
    out = np.zeros((N_CELLS, NLEV))
    divergence(w, dz, out)
    np.testing.assert_array_equal(out, (w[:, 1:] - w[:, :-1]) / dz)


def test_half_levels_with_their_boundaries() -> None:
    theta, _, _ = levels()
    w = np.full((N_CELLS, NLEV + 1), -7.0)
    half_levels_with_boundaries(theta, w)
    expected = np.empty((N_CELLS, NLEV + 1))
    expected[:, 0] = theta[:, 0]
    expected[:, NLEV] = theta[:, NLEV - 1]
    expected[:, 1:NLEV] = 0.5 * (theta[:, :-1] + theta[:, 1:])
    np.testing.assert_array_equal(w, expected)


def test_a_temporary_over_half_levels() -> None:
    theta, _, dz = levels()
    out = np.full((N_CELLS, NLEV), -7.0)
    through_a_half_level_temporary(theta, dz, out)
    half = np.full((N_CELLS, NLEV + 1), np.nan)
    half[:, 1:NLEV] = 0.5 * (theta[:, :-1] + theta[:, 1:])
    expected = (half[:, 1:] - half[:, :-1]) / dz
    written = ~np.isnan(expected)
    np.testing.assert_array_equal(out[written], expected[written])
    np.testing.assert_array_equal(out[~written], -7.0)


def test_the_index_along_a_staggered_dimension() -> None:
    theta, _, _ = levels()
    w = np.full((N_CELLS, NLEV + 1), -7.0)
    index_on_half_levels(theta, w)
    expected = np.full((N_CELLS, NLEV + 1), -7.0)
    expected[:, 1:] = np.arange(1, NLEV + 1) + theta
    np.testing.assert_array_equal(w, expected)


# --- the rules ---------------------------------------------------------------------------


def test_staggered_dimensions() -> None:
    assert IHalf.name == "IHalf" and IHalf.base == I and IHalf.kind == I.kind
    assert sc.staggered(IHalf) == I and sc.staggered(I) == IHalf
    assert KHalf.kind == sc.VERTICAL
    assert IHalf != sc.Dimension("IHalf")  # a plain dimension of that name is another
    assert repr(IHalf + 0.5) == "IHalf + 0.5" and repr(I - 1.5) == "I - 1.5"
    with pytest.raises(sc.DefinitionError, match="local dimension"):
        sc.staggered(sc.Dimension("C2EDim", kind=sc.LOCAL))
    with pytest.raises(TypeError, match="staggered counterpart"):
        sc.Field[[I, IHalf], sc.float64]
    with pytest.raises(ValueError, match="staggered counterpart"):
        sc.as_field([I, IHalf], np.zeros((2, 2)))


def _trace(body: object) -> None:
    @sc.field_operator
    def fop(a: IF, b: IHF) -> IHF:
        return body(a, b)  # type: ignore[operator, no-any-return]

    @sc.program
    def prog(a: IF, b: IHF, out: IHF) -> None:
        fop(a, b, out=out)


def test_mixing_a_dimension_with_its_counterpart_is_an_error() -> None:
    with pytest.raises(sc.DefinitionError, match="mismatched dimensions"):
        _trace(lambda a, b: a + b)
    with pytest.raises(sc.DefinitionError, match="over IHalf already"):
        _trace(lambda a, b: b(IHalf + 0.5))
    with pytest.raises(sc.DefinitionError, match=r"half shift, f\(IHalf \+ 0.5\)"):
        _trace(lambda a, b: a(IHalf + 1))
    with pytest.raises(sc.DefinitionError, match="a shift offset is a whole number"):
        _trace(lambda a, b: a(IHalf + 0.25))
    with pytest.raises(sc.DefinitionError, match="appears twice"):
        _trace(lambda a, b: a(IHalf + 0.5, I + 1))


def test_an_argument_over_the_counterpart_is_an_error() -> None:
    with pytest.raises(sc.DefinitionError, match="IHalf"):

        @sc.program
        def prog(a: IF, out: IHF) -> None:
            shift_to_half(out, out=out)


def test_a_field_value_over_the_counterpart_is_taken_as_its_base() -> None:
    """The arrays of both share the index space: a field value over IHalf runs a program
    whose parameter is over IHalf (its IR, like every backend's, is over I)."""
    data = _ints(SIZE)
    out = np.zeros(SIZE, np.int32)
    copy_half_field(sc.as_field([IHalf], data), out)
    np.testing.assert_array_equal(out, data)
    with pytest.raises(sc.ArgumentError, match="field value over"):
        copy_half_field(sc.as_field([J], data), out)
