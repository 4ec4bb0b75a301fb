"""Zero-dimensional fields, `sc.Field[[], dtype]`: a parameter read as a scalar broadcast
over the domain, a result written as one value, a temporary over no dimension; embedded
executor against NumPy, and the misuse errors."""

from __future__ import annotations

import numpy as np
import pytest

import stencilchain as sc

Cell = sc.Dimension("Cell")
K = sc.Dimension("K", kind=sc.VERTICAL)
CK = sc.Field[[Cell, K], sc.float64]
S = sc.Field[[], sc.float64]
SHAPE = (4, 5)


@sc.field_operator
def scaled(a: CK, s: S) -> CK:
    return a * s + s


@sc.field_operator
def combined(s: S, t: S) -> S:
    return s + 2.0 * t


@sc.field_operator
def pair(s: S, a: CK) -> tuple[S, CK]:
    return s * 3.0, a - s


@sc.program
def read_and_write(a: CK, s: S, t: S, x: CK, r: S) -> None:
    scaled(a, s, out=x)
    combined(s, t, out=r)


@sc.program
def through_a_temporary(a: CK, s: S, t: S, x: CK) -> None:
    u = combined(s, t)
    scaled(a, u, out=x)


@sc.program
def tuple_of_zero_and_two(a: CK, s: S, r: S, x: CK) -> None:
    pair(s, a, out=(r, x))


@sc.field_operator
def lap(f: CK) -> CK:
    return -4.0 * f + f(Cell + 1) + f(Cell - 1) + f(K + 1) + f(K - 1)


@sc.field_operator
def smoothed(f: CK, nu: S) -> CK:
    return f - nu * lap(lap(f))


@sc.program
def compound(f: CK, nu: S, out: CK) -> None:
    smoothed(f, nu, out=out)


def compound_reference(f: np.ndarray, nu: float) -> np.ndarray:
    def lap_np(g: np.ndarray) -> np.ndarray:
        return -4.0 * g[1:-1, 1:-1] + g[2:, 1:-1] + g[:-2, 1:-1] + g[1:-1, 2:] + g[1:-1, :-2]

    out = np.zeros_like(f)
    out[2:-2, 2:-2] = f[2:-2, 2:-2] - nu * lap_np(lap_np(f))
    return out


def inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.random(SHAPE), np.array(1.5), np.array(-0.25)


def test_read_as_a_scalar_and_written_as_one_value() -> None:
    a, s, t = inputs()
    x, r = np.zeros(SHAPE), np.array(0.0)
    read_and_write(a, s, t, x, r)
    np.testing.assert_array_equal(x, a * 1.5 + 1.5)
    assert r.shape == () and r[()] == 1.5 + 2.0 * -0.25


def test_a_temporary_over_no_dimension() -> None:
    a, s, t = inputs()
    x = np.zeros(SHAPE)
    through_a_temporary(a, s, t, x)
    u = 1.5 + 2.0 * -0.25
    np.testing.assert_array_equal(x, a * u + u)


def test_a_tuple_of_a_zero_dimensional_and_a_two_dimensional_field() -> None:
    a, s, _ = inputs()
    r, x = np.array(0.0), np.zeros(SHAPE)
    tuple_of_zero_and_two(a, s, r, x)
    assert r[()] == 4.5
    np.testing.assert_array_equal(x, a - 1.5)


def test_a_coefficient_of_a_compound_stencil() -> None:
    f = np.random.default_rng(3).random((9, 10))
    out = np.zeros_like(f)
    compound(f, np.array(0.1), out)
    np.testing.assert_allclose(out, compound_reference(f, 0.1), rtol=1e-13, atol=1e-13)


def test_a_field_value_over_no_dimension() -> None:
    a, s, t = inputs()
    x, r = np.zeros(SHAPE), np.array(0.0)
    read_and_write(a, sc.as_field((), s), t, x, sc.as_field((), r))
    assert r[()] == 1.0


@pytest.mark.parametrize(
    ("position", "value", "message"),
    [
        (1, np.float64(1.5), "argument 's' .*expected a numpy array"),
        (1, 1.5, "argument 's' .*expected a numpy array"),
        (1, np.ones(1), r"argument 's' .*expected 0 dimension\(s\)"),
        (1, np.array(1.5, np.float32), "argument 's' .*expected dtype float64"),
    ],
)
def test_misuse_at_the_call(position: int, value: object, message: str) -> None:
    a, s, t = inputs()
    args: list[object] = [a, s, t, np.zeros(SHAPE), np.array(0.0)]
    args[position] = value
    with pytest.raises(sc.ArgumentError, match=message):
        read_and_write(*args)


def test_a_read_only_result() -> None:
    a, s, t = inputs()
    r = np.array(0.0)
    r.flags.writeable = False
    with pytest.raises(sc.ArgumentError, match=r"argument 'r' .*read-only"):
        read_and_write(a, s, t, np.zeros(SHAPE), r)


def test_a_shift_of_a_zero_dimensional_field_is_a_definition_error() -> None:
    with pytest.raises(sc.DefinitionError, match="K"):

        @sc.field_operator
        def shifted(s: S) -> S:
            return s(K + 1)  # type: ignore[no-any-return]


def test_a_scalar_for_a_zero_dimensional_field_in_a_call() -> None:
    """gt4py's test_implicit_broadcast_mixed_dim: a literal (or a scalar) passed for a
    zero-dimensional field parameter of a field operator called in another is that
    field's value; in a program's call a zero-dimensional field stays an array."""

    @sc.field_operator
    def outer(a: CK, s: sc.float64) -> CK:
        return scaled(a, 2.0) + scaled(a, s)

    @sc.program
    def run(a: CK, s: sc.float64, x: CK) -> None:
        outer(a, s, out=x)

    a, x = np.random.default_rng(3).random(SHAPE), np.zeros(SHAPE)
    run(a, 0.5, x)
    np.testing.assert_allclose(x, (a * 2.0 + 2.0) + (a * 0.5 + 0.5))
    with pytest.raises(
        sc.DefinitionError, match=r"argument 's' of scaled: mismatched dtypes float64 and float32"
    ):

        @sc.field_operator
        def wrong_dtype(a: CK) -> CK:
            return scaled(a, np.float32(2.0))
