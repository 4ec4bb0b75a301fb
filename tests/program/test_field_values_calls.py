"""sc.FieldValue passed wherever an array is, on the embedded executor: program arguments,
out=, tables and offset fields; and the misuse errors (other dimensions, an output's origin below 0)."""

from __future__ import annotations

import numpy as np
import pytest

import stencilchain as sc

I = sc.Dimension("I")
K = sc.Dimension("K", kind=sc.VERTICAL)
IK = sc.Field[[I, K], sc.float64]


@sc.field_operator
def up(a: IK, b: IK) -> IK:
    return a(K + 1) - b


@sc.program
def diff(a: IK, b: IK, out: IK) -> None:
    up(a, b, out=out)


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    return rng.random((4, 6)), rng.random((4, 6))


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros_like(a)
    out[:, :-1] = a[:, 1:] - b[:, :-1]
    return out


def test_field_values_as_arguments_and_out() -> None:
    a, b = inputs()
    out = np.zeros_like(a)
    diff(sc.as_field((I, K), a), b, out=sc.as_field((I, K), out))
    np.testing.assert_array_equal(out, reference(a, b))


def test_field_values_with_an_explicit_start_of_zero() -> None:
    a, b = inputs()
    out = np.zeros_like(a)
    diff(sc.as_field((I, K), a, start={K: 0}), sc.as_field((I, K), b), out)
    np.testing.assert_array_equal(out, reference(a, b))


def test_field_values_are_checked_like_arrays() -> None:
    a, b = inputs()
    with pytest.raises(sc.ArgumentError, match=r"argument 'b' .*expected dtype float64"):
        diff(a, sc.as_field((I, K), b.astype(np.float32)), np.zeros_like(a))
    read_only = np.zeros_like(a)
    read_only.flags.writeable = False
    with pytest.raises(sc.ArgumentError, match=r"argument 'out' .*read-only"):
        diff(a, b, sc.as_field((I, K), read_only))


def test_a_field_value_over_other_dimensions() -> None:
    a, b = inputs()
    with pytest.raises(
        sc.ArgumentError, match=r"argument 'a' .*over \(K, I\) for a field over \(I, K\)"
    ):
        diff(sc.as_field((K, I), a.T), b, np.zeros_like(a))


def test_an_origin_below_zero_is_refused_for_an_output() -> None:
    # other origins: tests/program/test_own_ranges.py
    a, b = inputs()
    out = np.zeros_like(a)
    with pytest.raises(sc.ArgumentError, match=r"argument 'out' .*starts at K -1, below 0"):
        diff(a, b, sc.as_field((I, K), out, start={K: -1}))
    assert not out.any()
    # an input may start below 0: `a` over K [-1, 5), read at K + 1 up to K 4
    diff(sc.as_field((I, K), a, start={K: -1}), b, out)
    expected = np.zeros_like(a)
    expected[:, :4] = a[:, 2:] - b[:, :4]
    np.testing.assert_array_equal(out, expected)
