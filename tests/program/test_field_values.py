"""sc.FieldValue and sc.as_field: an array over dimensions with an origin per dimension."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import stencilchain as sc

Cell = sc.Dimension("Cell")
K = sc.Dimension("K", kind=sc.VERTICAL)


def test_as_field_keeps_the_array_and_its_origin() -> None:
    a = np.arange(12.0).reshape(3, 4)
    f = sc.as_field((Cell, K), a, start={K: -1})
    assert f.array is a and f.ndarray is a and f.asnumpy() is a
    assert f.dims == (Cell, K) and f.start == (0, -1)
    assert f.shape == (3, 4) and f.ndim == 2 and f.dtype == np.float64
    assert f.domain == {Cell: (0, 3), K: (-1, 3)}
    assert np.asarray(f) is a


def test_a_field_value_is_immutable() -> None:
    f = sc.as_field((Cell,), np.zeros(3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.start = (1,)  # type: ignore[misc]
    assert f.start == (0,)


def test_a_zero_dimensional_field_value() -> None:
    f = sc.as_field((), np.array(2.5))
    assert f.dims == () and f.start == () and f.domain == {} and f.shape == ()


@pytest.mark.parametrize(
    ("dims", "array", "start", "error", "message"),
    [
        ((Cell, K), np.zeros(3), None, ValueError, "2 dimension"),
        ((Cell, Cell), np.zeros((2, 2)), None, ValueError, "appears twice"),
        (("Cell",), np.zeros(3), None, TypeError, "sc.Dimension"),
        ((Cell,), [1.0, 2.0], None, TypeError, "must be an array"),
        ((Cell,), np.zeros(3), {K: 1}, ValueError, "not one of"),
        ((Cell,), np.zeros(3), {Cell: 1.5}, TypeError, "must be an integer"),
    ],
)
def test_as_field_misuse(
    dims: object, array: object, start: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        sc.as_field(dims, array, start=start)  # type: ignore[arg-type]


def test_slicing_a_field_value_keeps_its_index_space() -> None:
    """`f[1:]` counts from the field's first point, as NumPy does in the array, and the
    slice starts where it starts in the field's index space: a view, not a copy."""
    a = np.arange(20.0).reshape(5, 4)
    f = sc.as_field((Cell, K), a, start={K: -1})
    part = f[1:, :2]
    assert part.domain == {Cell: (1, 5), K: (-1, 1)}
    assert np.shares_memory(part.array, a)
    np.testing.assert_array_equal(part.array, a[1:, :2])
    assert f[-2:].domain == {Cell: (3, 5), K: (-1, 3)}
    assert f[:, 10:].domain == {Cell: (0, 5), K: (3, 3)}  # an empty slice starts at the end
    with pytest.raises(TypeError, match=r"sliced along Cell by 1: slice it with slices of step 1"):
        f[1]
    with pytest.raises(TypeError, match="along K by slice"):
        f[:, ::2]
    with pytest.raises(IndexError, match="3 slices for a field over 2 dimensions"):
        f[:, :, :]


@sc.field_operator
def plus_one(x: sc.Field[[Cell, K], sc.float64]) -> sc.Field[[Cell, K], sc.float64]:
    return x + 1.0


@sc.program
def add_one(x: sc.Field[[Cell, K], sc.float64], out: sc.Field[[Cell, K], sc.float64]) -> None:
    plus_one(x, out=out)


def test_a_sliced_field_value_is_a_field_over_its_own_range() -> None:
    a = np.random.default_rng(2).random((6, 3))
    out = np.full((6, 3), -1.0)
    add_one(sc.as_field((Cell, K), a)[1:], sc.as_field((Cell, K), out)[2:5])
    expected = np.full((6, 3), -1.0)
    expected[2:5] = a[2:5] + 1.0
    np.testing.assert_array_equal(out, expected)
