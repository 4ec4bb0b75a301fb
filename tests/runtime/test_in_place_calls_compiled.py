"""Calls that write a field they also read (docs/dsl.md, "Writing a field the call reads";
docs/adr/0042): around the point (shifted, in a scan, one call per field of a tuple
result) they read a snapshot of the field from before the call; at the point only, the
field itself, without a copy. On every CPU toolchain, C and Fortran order, against NumPy
references written here."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain as sc

I, K = sc.Dimension("I"), sc.Dimension("K")
KHalf = sc.staggered(K)
F = sc.Field[[I, K], sc.float64]
FH = sc.Field[[I, KHalf], sc.float64]
NI, NK = 5, 7
TOOLCHAINS = ["embedded", "gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu"]


@sc.field_operator
def second_difference(f: F) -> F:
    return f(K - 1) - 2.0 * f + f(K + 1)


@sc.program
def second_difference_in_place(f: F) -> None:
    second_difference(f, out=f, domain={K: (1, -1)})


@sc.field_operator
def plus_one(f: F) -> F:
    return f + 1.0


@sc.program
def plus_one_in_place(f: F) -> None:
    plus_one(f, out=f)


@sc.scan_operator(axis=K, init=0.0)
def running_sum(total: float, f: float) -> float:
    return total + f


@sc.field_operator
def sum_minus_below(f: F) -> F:
    s = running_sum(f)
    return s - f(K - 1)


@sc.program
def sum_minus_below_in_place(f: F) -> None:
    sum_minus_below(f, out=f, domain={K: (1, None)})


@sc.field_operator
def swap(a: F, b: F) -> tuple[F, F]:
    return b, a


@sc.program
def swap_in_place(a: F, b: F) -> None:
    swap(a, b, out=(a, b))


@sc.program
def swap_in_place_per_field(a: F, b: F) -> None:
    swap(a, b, out=(a, b), domain=({K: (0, 3)}, {K: (2, None)}))


@sc.field_operator
def half_level_mean(w: FH) -> FH:
    return 0.5 * (w + w(KHalf + 1))


@sc.program
def half_level_mean_in_place(w: FH, theta: F) -> None:
    half_level_mean(w, out=w, domain={KHalf: (0, -1)})


def run(program: Any, name: str, request: pytest.FixtureRequest) -> Any:
    return program if name == "embedded" else program.with_backend(request.getfixturevalue(name))


def field(seed: int, order: str, nk: int = NK) -> np.ndarray:
    return np.asarray(np.random.default_rng(seed).normal(size=(NI, nk)), order=order)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_a_call_reading_around_the_field_it_writes_reads_the_values_before_it(
    name: str, order: str, request: pytest.FixtureRequest
) -> None:
    f = field(0, order)
    expected = f.copy()
    expected[:, 1:-1] = f[:, :-2] - 2.0 * f[:, 1:-1] + f[:, 2:]
    run(second_difference_in_place, name, request)(f)
    np.testing.assert_array_equal(f, expected)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_a_scan_over_the_field_its_call_writes_reads_the_values_before_it(
    name: str, order: str, request: pytest.FixtureRequest
) -> None:
    f = field(1, order)
    expected = f.copy()
    total = np.zeros(NI)
    for k in range(1, NK):
        total = total + f[:, k]
        expected[:, k] = total - f[:, k - 1]
    run(sum_minus_below_in_place, name, request)(f)
    np.testing.assert_allclose(f, expected, rtol=1e-15, atol=0)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_fields_swapped_in_place_keep_each_others_values(
    name: str, order: str, request: pytest.FixtureRequest
) -> None:
    a, b = field(2, order), field(3, order)
    a0, b0 = a.copy(), b.copy()
    run(swap_in_place, name, request)(a, b)
    np.testing.assert_array_equal(a, b0)
    np.testing.assert_array_equal(b, a0)

    # one call per field of the result (each its own domain): the second reads a snapshot
    a, b = a0.copy(), b0.copy()
    run(swap_in_place_per_field, name, request)(a, b)
    expected_a, expected_b = a0.copy(), b0.copy()
    expected_a[:, 0:3] = b0[:, 0:3]
    expected_b[:, 2:] = a0[:, 2:]
    np.testing.assert_array_equal(a, expected_a)
    np.testing.assert_array_equal(b, expected_b)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_a_half_level_field_updated_in_place_is_copied_over_its_own_levels(
    name: str, order: str, request: pytest.FixtureRequest
) -> None:
    w, theta = field(4, order, NK + 1), field(5, order)
    expected = w.copy()
    expected[:, :-1] = 0.5 * (w[:, :-1] + w[:, 1:])
    run(half_level_mean_in_place, name, request)(w, theta)
    np.testing.assert_array_equal(w, expected)


@sc.field_operator
def upper_difference(f: F) -> F:
    return f(K + 1) - f


@sc.program
def upper_difference_in_place(f: F, w: FH) -> None:
    upper_difference(f, out=f, domain={K: (0, -1)})


@pytest.mark.parametrize("name", TOOLCHAINS)
def test_a_snapshot_is_read_only_over_its_fields_own_range(
    name: str, request: pytest.FixtureRequest
) -> None:
    """Beside a half-level field the index space has NK + 1 levels; reading the full-level
    f at K + 1 up to that end leaves f's range, through its snapshot as directly."""
    f, w = field(6, "C"), field(7, "C", NK + 1)
    before = f.copy()
    with pytest.raises(sc.DomainError, match="argument 'f' leaves its range"):
        run(upper_difference_in_place, name, request)(f, w)
    np.testing.assert_array_equal(f, before)


def test_only_calls_reading_around_the_field_they_write_make_a_snapshot() -> None:
    def calls(program: Any) -> list[tuple[str, tuple[str, ...]]]:
        return [(c.callee, c.outs) for c in program.ir.calls]

    assert calls(plus_one_in_place) == [("plus_one", ("f",))]
    assert calls(swap_in_place) == [("swap", ("a", "b"))]
    assert calls(second_difference_in_place) == [
        ("snapshot_of_I_K_float64", ("f_before_second_difference",)),
        ("second_difference", ("f",)),
    ]
    made = [t.name for t in second_difference_in_place.ir.temporaries]
    assert made == ["f_before_second_difference"]
