"""Domain bounds given by integer scalar parameters of the program, on every CPU toolchain,
against NumPy slicing: one compiled program per toolchain, called with many bound values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain as sc

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F3 = sc.Field[[I, J, K], sc.float64]


@sc.field_operator
def vdiff(f: F3) -> F3:
    return f(K + 1) - f(K - 1)


@sc.scan_operator(axis=K, init=0.0)
def running_sum(total, f: F3):  # type: ignore[no-untyped-def]
    return total + f


@sc.field_operator
def twice(f: F3) -> F3:
    return 2.0 * f


@sc.program
def in_columns(
    f: F3, d: F3, s: F3, w: F3, v: F3, k_start: sc.int32, k_end: sc.int64, i_end: sc.int32
) -> None:
    vdiff(f, out=d, domain={K: (k_start, k_end)})  # I and J inferred: the whole plane
    running_sum(f, out=s, domain={K: (k_start, k_end)})  # a scan over a range of levels
    vdiff(f, out=w, domain={I: (1, i_end), K: (1, -1)})  # a literal and a parameter mixed
    doubled = twice(f)  # a temporary written everywhere: readable under parameter bounds
    vdiff(doubled, out=v, domain={K: (k_start, k_end)})


def _resolve(value: int, size: int) -> int:
    """A bound's value: negative counts from the end, like a literal bound."""
    return size + value if value < 0 else value


def _reference(
    f: np.ndarray,
    d: np.ndarray,
    s: np.ndarray,
    w: np.ndarray,
    v: np.ndarray,
    ks: int,
    ke: int,
    ie: int,
) -> None:
    nk = f.shape[2]
    a, b = _resolve(ks, nk), _resolve(ke, nk)
    if a < b:
        d[:, :, a:b] = f[:, :, a + 1 : b + 1] - f[:, :, a - 1 : b - 1]
        s[:, :, a:b] = np.cumsum(f[:, :, a:b], axis=2)
        v[:, :, a:b] = 2.0 * d[:, :, a:b]
    c = _resolve(ie, f.shape[0])
    if c > 1:
        w[1:c, :, 1:-1] = f[1:c, :, 2:] - f[1:c, :, :-2]


@pytest.fixture(
    scope="module",
    params=["embedded", "gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"],
)
def run(request: pytest.FixtureRequest) -> Any:
    if request.param == "embedded":
        return in_columns
    return in_columns.with_backend(request.getfixturevalue(request.param))


@pytest.mark.parametrize(
    ("k_start", "k_end", "i_end"),
    [
        (1, 5, 4),  # inside
        (1, 7, 5),  # up to the last level that can be read at K+1
        (3, 3, 1),  # empty
        (5, 2, 0),  # reversed: empty
        (-6, -1, -1),  # negative: counted from the end
        (2, -2, -3),  # mixed signs
    ],
)
def test_bounds_from_parameters_match_numpy_slicing(
    run: Any, k_start: int, k_end: int, i_end: int
) -> None:
    rng = np.random.default_rng(7)
    f = rng.random((5, 3, 8))
    got = [np.full_like(f, -1.0) for _ in range(4)]
    want = [g.copy() for g in got]
    run(f, *got, np.int32(k_start), np.int64(k_end), np.int32(i_end))
    _reference(f, want[0], want[1], want[2], want[3], k_start, k_end, i_end)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-14, atol=0)


@pytest.mark.parametrize(
    ("k_start", "k_end", "bad"),
    [
        (0, 4, "[0, 4)"),  # reads K-1 = -1
        (2, 8, "[2, 8)"),  # reads K+1 = 8
        (-8, 3, "[0, 3)"),  # negative, counted from the end: 0
    ],
)
def test_a_parameter_bound_outside_the_arrays_is_a_domain_error_before_anything_runs(
    run: Any, k_start: int, k_end: int, bad: str
) -> None:
    f = np.ones((5, 3, 8))
    outs = [np.full_like(f, -3.0) for _ in range(4)]
    message = f"call of vdiff in in_columns(): domain K: {bad} with reads from K-1 to K+1 leaves the array of size 8 along K"
    with pytest.raises(sc.DomainError) as info:
        run(f, *outs, np.int32(k_start), np.int64(k_end), np.int32(3))
    assert message in str(info.value)
    for out in outs:
        assert (out == -3.0).all()


def test_a_parameter_bound_reaching_past_the_array_along_i_is_a_domain_error(run: Any) -> None:
    f = np.ones((5, 3, 8))
    outs = [np.full_like(f, -3.0) for _ in range(4)]
    with pytest.raises(sc.DomainError, match=r"domain I: \[1, 6\) .* size 5 along I"):
        run(f, *outs, np.int32(1), np.int64(2), np.int32(6))
    for out in outs:
        assert (out == -3.0).all()
