"""Python `if`/`else` and conditional expressions on scalar values: traced both ways,
joined with sc.where, decided at run time (stencilchain.program.branches)."""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import ir

from ._support import assert_error_at

I, K = sc.Dimension("I"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]
F32 = sc.Field[[I, K], sc.float32]
FK = sc.Field[[K], sc.float64]
HERE = os.path.abspath(__file__)


assert_at = functools.partial(assert_error_at, path=HERE)


@sc.field_operator
def limited(f: F, g: F, clip: sc.bool_, scale: sc.float64) -> F:
    if clip:  # noqa: SIM108 (the statement form is what this tests)
        h = sc.math.minimum(f, g)
    else:
        h = f + g
    return h * scale if scale > 0.0 else h


@sc.program
def run_limited(f: F, g: F, clip: sc.bool_, scale: sc.float64, out: F) -> None:
    limited(f, g, clip, scale, out=out)


def limited_reference(f: np.ndarray, g: np.ndarray, clip: bool, scale: float) -> np.ndarray:
    h = np.minimum(f, g) if clip else f + g
    return h * scale if scale > 0.0 else h


@pytest.mark.parametrize("clip", [True, False])
@pytest.mark.parametrize("scale", [2.5, -1.0])
def test_both_sides_run_at_call_time(clip: bool, scale: float) -> None:
    rng = np.random.default_rng(7)
    f, g = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    out = np.empty((4, 5))
    run_limited(f, g, clip, scale, out)
    np.testing.assert_array_equal(out, limited_reference(f, g, clip, scale))


def test_one_definition_holds_every_path() -> None:
    """The branch is in the IR (not decided while tracing): one program, one fingerprint,
    whatever the arguments."""
    text = str(run_limited.ir)
    assert "where(clip" in text and "scale > 0" in text, text
    body = run_limited.ir.field_operator("limited").body
    assert isinstance(body, ir.Where)


@sc.field_operator
def tuple_branch(f: F, swap: sc.bool_) -> tuple[F, F]:
    return (f * 2.0, f) if swap else (f, f * 2.0)


@sc.field_operator
def nested(f: F, a: sc.int32, b: sc.int32) -> F:
    if a > 0:
        if b > 0:
            return f + 1.0
        return f + 2.0
    elif a == b and b < 0:  # `and` on scalars is traced both ways too
        return f + 3.0
    return f + 4.0


@sc.field_operator
def coefficient(f: F, nu: FK, use_nu: sc.bool_) -> F:
    return nu * f if use_nu else f  # a K-only field on one side: broadcast


@sc.program
def several(
    f: F, nu: FK, swap: sc.bool_, a: sc.int32, b: sc.int32, use_nu: sc.bool_,
    x: F, y: F, z: F, w: F,
) -> None:  # fmt: skip
    tuple_branch(f, swap, out=(x, y))
    nested(f, a, b, out=z)
    coefficient(f, nu, use_nu, out=w)


@pytest.mark.parametrize("swap", [True, False])
@pytest.mark.parametrize(("a", "b"), [(1, 1), (1, -1), (-1, -1), (-2, -1), (0, 0)])
@pytest.mark.parametrize("use_nu", [True, False])
def test_tuples_nested_ifs_and_broadcast_sides(swap: bool, a: int, b: int, use_nu: bool) -> None:
    f = np.arange(12.0).reshape(3, 4)
    nu = np.array([0.5, 1.0, 1.5, 2.0])
    x, y, z, w = (np.empty((3, 4)) for _ in range(4))
    several(f, nu, swap, np.int32(a), np.int32(b), use_nu, x, y, z, w)
    np.testing.assert_array_equal(x, f * 2.0 if swap else f)
    np.testing.assert_array_equal(y, f if swap else f * 2.0)
    expected = 1.0 if a > 0 and b > 0 else 2.0 if a > 0 else 3.0 if a == b and b < 0 else 4.0
    np.testing.assert_array_equal(z, f + expected)
    np.testing.assert_array_equal(w, nu * f if use_nu else f)


@sc.scan_operator(axis=K, forward=True, init=0.0)
def capped_sum(total, f: F, cap: sc.float64):  # type: ignore[no-untyped-def]
    if total + f > cap:  # in a scan, every value is a scalar at the current level
        return cap
    return total + f


@sc.program
def cumulative(f: F, cap: sc.float64, out: F) -> None:
    capped_sum(f, cap, out=out)


def test_if_in_a_scan_body_on_level_values() -> None:
    f = np.arange(1.0, 13.0).reshape(3, 4)
    out = np.empty_like(f)
    cumulative(f, 10.0, out)
    expected = np.empty_like(f)
    total = np.zeros(3)
    for k in range(4):
        total = np.minimum(total + f[:, k], 10.0)
        expected[:, k] = total
    np.testing.assert_array_equal(out, expected)


def test_if_on_a_field_says_to_use_where() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def bad(f: F) -> F:
            return f if f > 0.0 else -f  # L:field-if

    assert_at(info.value, "field-if", "on a field", "sc.where")


def test_if_on_a_non_bool_scalar_says_to_compare() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def bad(f: F, s: sc.float64) -> F:
            if s:  # L:float-if
                return f
            return -f

    assert_at(info.value, "float-if", "float64 scalar", "compare")


def test_sides_that_do_not_combine_are_refused_at_the_if() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def bad(f: F, g: F32, flag: sc.bool_) -> F:
            if flag:  # L:mixed
                return f
            return g

    assert_at(info.value, "mixed", "field operator bad", "two sides of this `if`")


def test_sides_with_different_tuple_lengths_are_refused() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def bad(f: F, flag: sc.bool_) -> tuple[F, F]:
            return (f, f) if flag else (f, f, f)  # L:lengths

    assert_at(info.value, "lengths", "a tuple of 2", "a tuple of 3")


def test_both_sides_are_type_checked() -> None:
    """The side not taken by a default argument is still traced: its error surfaces."""
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def bad(f: F, g: FK, flag: sc.bool_) -> F:
            if flag:
                return f
            return f // 2.0  # L:else-side

    assert_at(info.value, "else-side", "`//`")


def test_too_many_paths_are_refused() -> None:
    """`and` on traced values still splits the paths (only `if` statements and conditional
    expressions are joined where they end)."""
    with pytest.raises(sc.DefinitionError, match="more than 256 paths"):

        @sc.field_operator
        def many(f: F, n: sc.int32) -> F:
            for bit in range(9):
                f = f + 1.0 if (n >> bit) & 1 == 1 and n > 0 else f
            return f
