"""Field operators of scalars that return a tuple (icon4py's microphysics writes
`def params(t: float, ..., snow: bool) -> tuple[float, float, ...]` and calls it in its
graupel scan's body): inlined where they are called, in a scan's body or in a field
operator with scalar arguments, on the embedded executor against NumPy loops; what gt4py
refuses is refused here too (a program's call, a field argument). The same programs run
compiled in tests/runtime/test_scalar_functions_compiled.py."""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.errors import DefinitionError
from tests.program._support import assert_located

I, K = sc.Dimension("I"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]
HERE = os.path.abspath(__file__)
SHAPE = (4, 7)


@sc.field_operator
def coefficients(t: float, q: float, present: bool, option: sc.int32) -> tuple[float, float, float]:
    """Three coefficients, with `if`s on scalars and literals on one side, as icon4py's
    compute_snow_interception_and_collision_parameters."""
    if present:
        if option == 1:
            n0 = sc.math.minimum(sc.math.exp(-0.1 * t), 1.0e2)
        else:
            n0 = sc.math.maximum(q * 3.0, 0.5)
        rate = q * n0
        factor = sc.math.sqrt(n0)
    else:
        n0 = 8.0
        rate = 0.0
        factor = 0.0
    return n0, rate, factor


class Bounds(NamedTuple):
    low: float
    high: float


@sc.field_operator
def bounds(width: float) -> Bounds:
    return Bounds(low=-width, high=width)


@sc.field_operator
def nested(a: float, b: float) -> tuple[float, tuple[float, float]]:
    return a + b, (a * b, a - b)


@sc.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def microphysics(state: tuple[float, float], t: float, q: float, option: sc.int32):  # type: ignore[no-untyped-def]
    total, previous = state
    n0, rate, factor = coefficients(t, q, q > 0.5, option)  # scalars of this level
    return total + rate * factor, n0 + 0.5 * previous


@sc.field_operator
def clipped(f: F, width: sc.float64) -> F:
    low, high = bounds(width)  # scalar arguments: scalars, used with a field
    first, (second, third) = nested(width, 2.0)
    return sc.math.minimum(sc.math.maximum(f, low), high) * first + second - third


@sc.program
def column(
    t: F, q: F, option: sc.int32, width: sc.float64, total: F, n0: F, clip: F
) -> None:  # fmt: skip
    microphysics(t, q, option, out=(total, n0))
    clipped(t, width, out=clip)


def _coefficients(t: float, q: float, present: bool, option: int) -> tuple[float, float, float]:
    if not present:
        return 8.0, 0.0, 0.0
    n0 = min(np.exp(-0.1 * t), 1.0e2) if option == 1 else max(q * 3.0, 0.5)
    return n0, q * n0, np.sqrt(n0)


def reference(
    t: np.ndarray, q: np.ndarray, option: int, width: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NumPy loops of `column`."""
    total, n0 = np.zeros(t.shape), np.zeros(t.shape)
    for i in range(t.shape[0]):
        acc, previous = 0.0, 0.0
        for k in range(t.shape[1]):
            c, rate, factor = _coefficients(t[i, k], q[i, k], q[i, k] > 0.5, option)
            acc, previous = acc + rate * factor, c + 0.5 * previous
            total[i, k], n0[i, k] = acc, previous
    clip = np.clip(t, -width, width) * (width + 2.0) + 2.0 * width - (width - 2.0)
    return total, n0, clip


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return 40.0 * rng.random(SHAPE) - 20.0, rng.random(SHAPE)


@pytest.mark.parametrize("option", [1, 2])
def test_a_tuple_of_scalars_in_a_scan_and_a_field_operator(option: int) -> None:
    t, q = inputs()
    outs = [np.zeros(SHAPE) for _ in range(3)]
    column(t, q, np.int32(option), 3.5, *outs)
    for got, want in zip(outs, reference(t, q, option, 3.5), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-14)


def test_a_program_call_is_refused() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.program
        def bad(width: sc.float64, low: F, high: F) -> None:
            bounds(width, out=(low, high))  # L:program-call

    assert_located(info.value, "program-call", path=HERE)
    assert "computes scalars from scalars; call it inside a field or scan operator" in str(
        info.value
    )


def test_a_field_argument_is_refused() -> None:
    """gt4py types `bounds(f)` with a field `f` as an error too (a field is no float64)."""
    with pytest.raises(DefinitionError, match=r"argument 'width' of bounds: expected a float64"):

        @sc.field_operator
        def bad(f: F) -> F:
            low, high = bounds(f)
            return f + low - high


def test_a_call_from_python_is_refused() -> None:
    with pytest.raises(DefinitionError, match="call it inside a field or scan operator"):
        nested(1.0, 2.0)


def test_the_return_annotation_is_checked() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.field_operator  # L:annotation
        def bad(a: float) -> tuple[float, float]:
            return a, a, a

    assert_located(info.value, "annotation", 1, path=HERE)
    assert "annotated to return tuple[float64, float64] but returns tuple[float64" in str(
        info.value
    )


def test_a_literal_needs_its_dtype() -> None:
    """stencilchain's literals take the dtype of what they meet: one returned as it is
    needs the annotation to say which (under gt4py's rules it has its own)."""
    with pytest.raises(DefinitionError, match=r"returns the literal 0.0; annotate its return"):

        @sc.field_operator
        def bad(a: float):  # type: ignore[no-untyped-def]
            return a, 0.0

    @sc.field_operator
    def good(a: float) -> tuple[float, sc.float32]:
        return a, 0.0

    assert good.inline is not None
    assert [e.type for e in good.inline.exprs] == [sc.float64, sc.float32]
