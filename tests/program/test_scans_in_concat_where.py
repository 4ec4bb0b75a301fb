"""A scan called in a branch of a `sc.concat_where` on its axis starts where the branch
starts (docs/adr/0024; icon4py's `solve_w` sweeps from level 1 in `concat_where(K > 0,
...)`), on the embedded executor against NumPy written here."""

from __future__ import annotations

import os

import numpy as np
import pytest

import stencilchain as sc

from ._support import assert_error_at

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F3 = sc.Field[[I, J, K], sc.float64]
HERE = os.path.abspath(__file__)


@sc.scan_operator(axis=K, init=0.0)
def up(total, a: F3):  # type: ignore[no-untyped-def]
    return total + a


@sc.scan_operator(axis=K, forward=False, init=0.0)
def down(total, a: F3):  # type: ignore[no-untyped-def]
    return total + a


@sc.field_operator
def solve_w(f: F3) -> F3:
    """icon4py's shape: the sweep reads the level below, from level 1 on."""
    return sc.concat_where(K > 0, up(f(K - 1)), f)


@sc.field_operator
def solve_top(f: F3) -> F3:
    """A backward sweep in the branch below the last level, reading the level above."""
    return sc.concat_where(K == sc.size(K) - 1, f, down(f(K + 1)))


@sc.field_operator
def from_level(f: F3, k_start: sc.int32) -> F3:
    """A sweep from a level given at the call."""
    return sc.concat_where(K >= k_start, up(f), -f)


@sc.field_operator
def read_below(f: F3) -> F3:
    """The sweep's result read one level below, inside the branch: it starts at level 0."""
    return sc.concat_where(K > 0, up(f)(K - 1), f)


@sc.program
def sweeps(f: F3, a: F3, b: F3, c: F3, d: F3, e: F3, k_start: sc.int32) -> None:
    solve_w(f, out=a)
    solve_top(f, out=b)
    from_level(f, k_start, out=c)
    read_below(f, out=d)
    solve_w(f, out=e, domain={K: (2, -1)})


def references(f: np.ndarray, ks: int) -> list[np.ndarray]:
    nk = f.shape[2]
    a = f.copy()
    a[..., 1:] = np.cumsum(f, axis=2)[..., :-1]
    b = f.copy()
    b[..., :-1] = np.cumsum(f[..., ::-1], axis=2)[..., ::-1][..., 1:]
    r = nk + ks if ks < 0 else ks
    c = -f
    c[..., r:] = np.cumsum(f[..., r:], axis=2)
    d = a.copy()
    e = np.zeros_like(f)
    e[..., 2:-1] = np.cumsum(f[..., 1:-2], axis=2)
    return [a, b, c, d, e]


@pytest.mark.parametrize("ks", [0, 1, 4, 7, -3])
def test_a_scan_in_a_branch_starts_where_the_branch_starts(ks: int) -> None:
    f = np.random.default_rng(2).random((3, 2, 7))
    outs = [np.zeros_like(f) for _ in range(5)]
    sweeps(f, *outs, np.int32(ks))
    for got, want in zip(outs, references(f, ks)):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)


def test_the_scan_runs_over_the_branch_only() -> None:
    text = str(sweeps.ir)
    assert "tmp1 = up(tmp0) over {I: [0, end), J: [0, end), K: [1, end)} (explicit)" in text
    assert "down(tmp2) over {I: [0, end), J: [0, end), K: [0, end-1)} (explicit)" in text
    assert "up(f) over {I: [0, end), J: [0, end), K: [max(0, k_start), end)}" in text


def test_a_scan_in_a_branch_on_several_intervals_is_a_definition_error() -> None:
    @sc.field_operator
    def two_parts(f: F3) -> F3:
        return sc.concat_where((K == 1) | (K > 3), up(f), f)

    with pytest.raises(sc.DefinitionError, match="selected on 2 intervals along K"):

        @sc.program
        def p(f: F3, out: F3) -> None:
            two_parts(f, out=out)

        p.ir  # noqa: B018


@sc.field_operator
def in_both_branches(f: F3) -> F3:
    """One scan call in both branches (and outside them): it runs from the domain's first
    level, not from either branch's start."""
    s = up(f)
    return sc.concat_where(K > 2, s, 2.0 * s) + s(K + 0)


@sc.program
def written_twice(f: F3, out: F3) -> None:
    in_both_branches(f, out=out)


def test_a_scan_written_in_several_places_runs_from_the_domains_first_level() -> None:
    f = np.random.default_rng(3).random((3, 2, 7))
    out = np.zeros_like(f)
    written_twice(f, out)
    s = np.cumsum(f, axis=2)
    want = np.where(np.arange(7) > 2, s, 2.0 * s) + s
    np.testing.assert_allclose(out, want, rtol=1e-14, atol=0)
    assert "up(f) over {I: [0, end), J: [0, end), K: [0, end)}" in str(written_twice.ir)


def test_a_scan_in_a_branch_on_several_intervals_is_located() -> None:
    """At the program's call of the field operator, where the scan is lowered."""

    @sc.field_operator
    def two_parts(f: F3) -> F3:
        return sc.concat_where((K == 1) | (K > 3), up(f), f)

    with pytest.raises(sc.DefinitionError) as info:

        @sc.program
        def p(f: F3, out: F3) -> None:
            two_parts(f, out=out)  # L:several

    assert_error_at(info.value, "several", "selected on 2 intervals along K", path=HERE)
