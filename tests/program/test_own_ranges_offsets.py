"""Data-dependent offsets (`sc.as_offset`) over fields over their own ranges, on the
embedded executor against NumPy loops: half levels read at `k + off` up to the top half
level, a shorter field and one that starts after 0 read through offsets, and offsets that
leave the range of the field they shift: an ArgumentError naming the offset argument and
that field, before anything is written."""

from __future__ import annotations

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.errors import ArgumentError

Cell = sc.Dimension("Cell")
K = sc.Dimension("K", kind=sc.VERTICAL)
CK = sc.Field[[Cell, K], sc.float64]
CKI = sc.Field[[Cell, K], sc.int32]
N_CELLS, NLEV = 4, 6


@sc.field_operator
def at_offsets(w: CK, off: CKI) -> CK:
    return w(sc.as_offset(K, off)) + 0.5 * w


@sc.program
def half_level_offsets(w: CK, off: CKI, out: CK) -> None:
    """`w` on NLEV + 1 half levels, `off` and `out` on NLEV full levels."""
    at_offsets(w, off, out=out)


@sc.field_operator
def through_offsets(theta: CK, off: CKI, w: CK) -> CK:
    return theta(sc.as_offset(K, off)) * w


@sc.program
def shorter_through_offsets(theta: CK, off: CKI, w: CK, out: CK) -> None:
    """`theta` over part of the levels, read only through the offsets."""
    through_offsets(theta, off, w, out=out)


def offsets(rng: np.random.Generator, levels: int, lo: int, hi: int) -> np.ndarray:
    """int32 offsets of `levels` levels whose reads `k + off` lie in `[lo, hi)`, reaching
    both ends."""
    k = np.arange(levels)
    off = rng.integers(lo - k, hi - k, size=(N_CELLS, levels)).astype(np.int32)
    off[0] = lo - k
    off[1] = hi - 1 - k
    return off


def test_half_levels_read_at_data_dependent_levels_up_to_the_top_one() -> None:
    rng = np.random.default_rng(3)
    w = rng.random((N_CELLS, NLEV + 1))
    off = offsets(rng, NLEV, 0, NLEV + 1)  # row 1 reads the top half level, NLEV
    out = np.full((N_CELLS, NLEV), -7.0)
    half_level_offsets(w, off, out)
    expected = np.empty((N_CELLS, NLEV))
    for c in range(N_CELLS):
        for k in range(NLEV):
            expected[c, k] = w[c, k + off[c, k]] + 0.5 * w[c, k]
    np.testing.assert_array_equal(out, expected)


def test_an_offset_past_the_top_half_level_is_refused_before_anything_is_written() -> None:
    rng = np.random.default_rng(4)
    w = rng.random((N_CELLS, NLEV + 1))
    off = offsets(rng, NLEV, 0, NLEV + 1)
    off[2, 3] = NLEV + 1 - 3  # reads level NLEV + 1
    out = np.full((N_CELLS, NLEV), -7.0)
    with pytest.raises(ArgumentError) as info:
        half_level_offsets(w, off, out)
    message = str(info.value)
    assert "argument 'off' of half_level_offsets()" in message
    assert f"at (2, 3) reads index {NLEV + 1} along K, outside [0, {NLEV + 1})" in message
    np.testing.assert_array_equal(out, -7.0)


def shorter_reference(
    theta: np.ndarray, start: int, off: np.ndarray, w: np.ndarray, levels: int
) -> np.ndarray:
    out = np.full((N_CELLS, NLEV), -7.0)
    for c in range(N_CELLS):
        for k in range(levels):
            out[c, k] = theta[c, k + off[c, k] - start] * w[c, k]
    return out


@pytest.mark.parametrize("start", [0, 2])
def test_a_shorter_field_read_only_through_offsets(start: int) -> None:
    """`theta` over `[start, NLEV - 1)`: every read `k + off` stays there, at every level
    of the domain (the other fields' levels: `theta` is read only through the offsets)."""
    rng = np.random.default_rng(5)
    theta = rng.random((N_CELLS, NLEV - 1 - start))
    w = rng.random((N_CELLS, NLEV))
    off = offsets(rng, NLEV, start, NLEV - 1)
    out = np.full((N_CELLS, NLEV), -7.0)
    field = sc.as_field((Cell, K), theta, start={K: start})
    shorter_through_offsets(field, off, w, out)
    np.testing.assert_array_equal(out, shorter_reference(theta, start, off, w, NLEV))


@pytest.mark.parametrize(("start", "bad"), [(0, NLEV - 1), (2, 1)])
def test_an_offset_outside_a_shorter_fields_range_names_it(start: int, bad: int) -> None:
    rng = np.random.default_rng(6)
    theta = rng.random((N_CELLS, NLEV - 1 - start))
    w = rng.random((N_CELLS, NLEV))
    off = offsets(rng, NLEV, start, NLEV - 1)
    off[3, 4] = bad - 4
    out = np.full((N_CELLS, NLEV), -7.0)
    field = sc.as_field((Cell, K), theta, start={K: start})
    with pytest.raises(ArgumentError) as info:
        shorter_through_offsets(field, off, w, out)
    message = str(info.value)
    assert "argument 'off' of shorter_through_offsets()" in message
    assert (
        f"at (3, 4) reads index {bad} along K, outside [{start}, {NLEV - 1}), the range of 'theta'"
    ) in message
    np.testing.assert_array_equal(out, -7.0)


def test_an_input_below_zero_is_read_through_offsets_from_zero_on() -> None:
    """Its points below 0 are read by static shifts only: an offset reaching one is
    refused (the index space starts at 0), one reaching 0 reads its second row."""
    rng = np.random.default_rng(7)
    theta = rng.random((N_CELLS, NLEV))  # over [-1, NLEV - 1)
    w = rng.random((N_CELLS, NLEV))
    off = offsets(rng, NLEV, 0, NLEV - 1)
    out = np.full((N_CELLS, NLEV), -7.0)
    field = sc.as_field((Cell, K), theta, start={K: -1})
    shorter_through_offsets(field, off, w, out)
    np.testing.assert_array_equal(out, shorter_reference(theta, -1, off, w, NLEV))
    off[0, 0] = -1
    with pytest.raises(ArgumentError, match=r"reads index -1 along K, outside \[0, 5\)"):
        shorter_through_offsets(field, off, w, np.zeros((N_CELLS, NLEV)))


@sc.field_operator
def doubled(theta: CK) -> CK:
    return 2.0 * theta


@sc.program
def offsets_of_a_temporary(theta: CK, off: CKI, w: CK, out: CK) -> None:
    twice = doubled(theta)
    through_offsets(twice, off, w, out=out)


def test_a_temporary_read_through_offsets_needs_fields_of_one_size() -> None:
    """A temporary holds values where a call wrote it, which fields over their own ranges
    narrow: read through offsets, every field along K must span the index space."""
    rng = np.random.default_rng(8)
    theta, w = rng.random((N_CELLS, NLEV)), rng.random((N_CELLS, NLEV))
    off = offsets(rng, NLEV, 0, NLEV)
    out = np.full((N_CELLS, NLEV), -7.0)
    offsets_of_a_temporary(theta, off, w, out)  # one size: runs
    k = np.arange(NLEV)
    np.testing.assert_array_equal(out, 2.0 * np.take_along_axis(theta, k + off, axis=1) * w)
    out[...] = -7.0
    longer = rng.random((N_CELLS, NLEV + 1))
    with pytest.raises(ArgumentError) as info:
        offsets_of_a_temporary(theta, off, longer, out)
    message = str(info.value)
    assert "through_offsets reads temporary" in message
    assert "through an offset" in message
    np.testing.assert_array_equal(out, -7.0)
