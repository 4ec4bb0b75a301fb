"""`if`/`else` on scalar values, decided at run time, on every CPU toolchain against the
embedded executor (one program, one compilation per toolchain, every path called)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain as sc

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F = sc.Field[[I, J, K], sc.float64]
FK = sc.Field[[K], sc.float64]


@sc.field_operator
def limited(f: F, g: F, clip: sc.bool_, scale: sc.float64) -> F:
    if clip:  # noqa: SIM108 (the statement form is what this tests)
        h = sc.math.minimum(f, g(K + 1))  # a shift on one side only
    else:
        h = f + g
    return h * scale if scale > 0.0 else h


@sc.field_operator
def swapped(f: F, swap: sc.bool_) -> tuple[F, F]:
    return (f * 2.0, f) if swap else (f, f * 2.0)


@sc.field_operator
def nested(f: F, nu: FK, a: sc.int32, b: sc.int32) -> F:
    if a > 0:
        if b > 0:
            return nu * f
        return f + 2.0
    elif a == b and b < 0:
        return f - nu
    return f + 4.0


@sc.scan_operator(axis=K, forward=True, init=0.0)
def capped_sum(total, f: F, cap: sc.float64):  # type: ignore[no-untyped-def]
    if total + f > cap:
        return cap
    return total + f


@sc.program
def branches(
    f: F, g: F, nu: FK, clip: sc.bool_, scale: sc.float64, swap: sc.bool_,
    a: sc.int32, b: sc.int32, cap: sc.float64,
    lim: F, x: F, y: F, z: F, s: F,
) -> None:  # fmt: skip
    limited(f, g, clip, scale, out=lim, domain={K: (0, -1)})
    swapped(f, swap, out=(x, y))
    nested(f, nu, a, b, out=z)
    capped_sum(f, cap, out=s)


CASES = [
    (True, 2.0, True, 1, 1, 3.0),
    (False, -1.0, False, 1, -1, 1e9),
    (True, -1.0, True, -1, -1, 0.5),
    (False, 0.5, False, -2, -1, 2.0),
]


@pytest.fixture(
    scope="module",
    params=["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"],
)
def run(request: pytest.FixtureRequest) -> Any:
    return branches.with_backend(request.getfixturevalue(request.param))


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_every_path_matches_the_embedded_executor(run: Any, case: tuple[Any, ...]) -> None:
    clip, scale, swap, a, b, cap = case
    rng = np.random.default_rng(11)
    shape = (3, 4, 6)
    f, g = rng.random(shape), rng.random(shape)
    nu = rng.random(shape[2])
    scalars = (clip, scale, swap, np.int32(a), np.int32(b), cap)
    expected = [np.zeros(shape) for _ in range(5)]
    branches(f, g, nu, *scalars, *expected)
    got = [np.zeros(shape) for _ in range(5)]
    run(f, g, nu, *scalars, *got)
    for name, e, o in zip(("lim", "x", "y", "z", "s"), expected, got):
        np.testing.assert_allclose(o, e, rtol=1e-14, atol=0, err_msg=name)
