"""Chains of a field operator, a scan and a field operator run column by column on GTFN
CPU (steps/cpp/scan_chains.py, ADR 0040): the scan's arguments computed and its results
copied block by block, in buffers, not arrays. Results equal the embedded executor's bit
for bit in C, Fortran and sliced layouts, for sizes that are not multiples of a block,
over sub-ranges of the axis, and where a chain must stop (a field operator reading at a
horizontal offset what the chain writes, a concat_where, no inlining)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program.transforms import transform_program
from stencilchain.steps.cpp.scan_chains import scan_chains

Cell = sc.Dimension("Cell")
K = sc.Dimension("K", kind=sc.VERTICAL)
I, J = sc.Dimension("I"), sc.Dimension("J")
CK = sc.Field[[Cell, K], sc.float64]
C1 = sc.Field[[Cell], sc.float64]
F3 = sc.Field[[I, J, K], sc.float64]


@sc.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def w_sweep(state, z_a: CK, z_b: CK, z_c: CK, rhs: CK):  # type: ignore[no-untyped-def]
    z_q_below, w_below = state
    z_g = 1.0 / (z_b + z_a * z_q_below)
    return (0.0 - z_c) * z_g, (rhs - z_a * w_below) * z_g


@sc.field_operator
def w_forward_sweep(
    weight: C1, theta: CK, dz: CK, alpha: CK, beta: CK, w_expl: CK, exner: CK,
    dtime: sc.float64,
) -> tuple[CK, CK]:  # fmt: skip
    gamma = dtime * weight * theta / dz
    z_a = sc.where(sc.index(K) > 1, -gamma * beta(K - 1) * alpha(K - 1), 0.0)
    z_c = -gamma * beta * alpha(K + 1)
    z_b = 1.0 + gamma * alpha * (beta(K - 1) + beta)
    rhs = w_expl - gamma * (exner(K - 1) - exner)
    return w_sweep(z_a, z_b, z_c, rhs)  # type: ignore[no-any-return]


@sc.program
def icon_like(
    weight: C1, theta: CK, dz: CK, alpha: CK, beta: CK, w_expl: CK, exner: CK,
    dtime: sc.float64, z_q: CK, w: CK,
) -> None:  # fmt: skip
    w_forward_sweep(weight, theta, dz, alpha, beta, w_expl, exner, dtime, out=(z_q, w))


@sc.program
def icon_like_window(
    weight: C1, theta: CK, dz: CK, alpha: CK, beta: CK, w_expl: CK, exner: CK,
    dtime: sc.float64, z_q: CK, w: CK, k0: sc.int64,
) -> None:  # fmt: skip
    w_forward_sweep(
        weight, theta, dz, alpha, beta, w_expl, exner, dtime, out=(z_q, w),
        domain={Cell: (3, -2), K: (k0, -2)},
    )  # fmt: skip


@sc.scan_operator(axis=K, forward=True, init=0.0)
def running_sum(total, f: F3):  # type: ignore[no-untyped-def]
    return total + f


@sc.scan_operator(axis=K, forward=False, init=0.0)
def running_sum_down(total, f: F3, g: F3):  # type: ignore[no-untyped-def]
    return 0.5 * total + f * g


@sc.field_operator
def weighted(f: F3, g: F3) -> F3:
    return f * g + f(K + 1) - g(K - 1)


@sc.field_operator
def smoothed_sum(f: F3, g: F3) -> F3:
    s = running_sum(weighted(f, g))
    return running_sum_down(s, g) * 2.0 + g  # type: ignore[no-any-return]


@sc.program
def sums_3d(f: F3, g: F3, out: F3) -> None:
    smoothed_sum(f, g, out=out)


@sc.field_operator
def shifted_sideways(f: F3, out_before: F3) -> F3:
    return f + out_before(I + 1) + out_before(J - 1)


@sc.field_operator
def times(f: F3, g: F3) -> F3:
    return f * g


@sc.program
def reads_what_the_chain_writes(f: F3, g: F3, out: F3) -> None:
    """The first field operator reads `out` at horizontal offsets, which the last call of
    the would-be chain writes: running it block by block would read new values."""
    t = shifted_sideways(f, out, domain={I: (0, -1), J: (1, None), K: (1, -1)})
    s = running_sum(t, domain={I: (0, -1), J: (1, None), K: (1, -1)})
    times(s, g, out=out, domain={I: (0, -1), J: (1, None), K: (1, -1)})


@sc.field_operator
def boundary_levels(f: F3, g: F3) -> F3:
    return sc.concat_where(K == 0, g, f * g)  # type: ignore[no-any-return]


@sc.field_operator
def integral_of_boundary(f: F3, g: F3) -> F3:
    return running_sum(boundary_levels(f, g)) + f  # type: ignore[no-any-return]


@sc.program
def with_a_concat_where(f: F3, g: F3, out: F3) -> None:
    integral_of_boundary(f, g, out=out)


CELLS = 300  # a block of 256 and a remainder (Fortran order), 64-column blocks in C order
SHAPE_3D = (67, 70, 9)  # neither I nor J a multiple of a block


def _icon_inputs(seed: int, window: bool = False) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    shape = (CELLS, 13)

    def field() -> np.ndarray:
        return rng.uniform(0.5, 1.5, shape)

    values: dict[str, Any] = {
        "weight": rng.uniform(0.5, 1.0, CELLS),
        "theta": field(),
        "dz": field(),
        "alpha": field(),
        "beta": field(),
        "w_expl": field(),
        "exner": field(),
        "dtime": 2.0,
        "z_q": np.zeros(shape),
        "w": np.zeros(shape),
    }
    if window:
        values["k0"] = 3
    return values


def _3d_inputs(*names: str) -> Callable[[int], dict[str, Any]]:
    def make(seed: int) -> dict[str, Any]:
        rng = np.random.default_rng(seed)
        values: dict[str, Any] = {n: rng.uniform(0.5, 1.5, SHAPE_3D) for n in names}
        values["out"] = np.zeros(SHAPE_3D)
        return values

    return make


CASES: dict[str, tuple[sc.Program, Callable[[int], dict[str, Any]]]] = {
    "icon_like": (icon_like, _icon_inputs),
    "icon_like_window": (icon_like_window, lambda seed: _icon_inputs(seed, window=True)),
    "sums_3d": (sums_3d, _3d_inputs("f", "g")),
    "reads_what_the_chain_writes": (reads_what_the_chain_writes, _3d_inputs("f", "g")),
    "with_a_concat_where": (with_a_concat_where, _3d_inputs("f", "g")),
}


def _in_layout(value: Any, kind: str) -> Any:
    if not isinstance(value, np.ndarray):
        return value
    if kind in ("C", "F"):
        return np.array(value, order=kind)  # a copy: the inputs stay as they were
    big = np.zeros(tuple(2 * n + 1 for n in value.shape), dtype=value.dtype)
    view = big[tuple(slice(1, None, 2) for _ in value.shape)]
    view[...] = value
    return view


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", ["gtfn_cpu", "gtfn_cpu_no_transforms"])
@pytest.mark.parametrize("case", CASES)
def test_chains_equal_the_embedded_executor(
    case: str, fixture: str, kind: str, request: pytest.FixtureRequest
) -> None:
    program, make = CASES[case]
    inputs = make(sum(map(ord, case)))
    embedded = {k: _in_layout(v, kind) for k, v in inputs.items()}
    compiled = {k: _in_layout(v, kind) for k, v in inputs.items()}
    program(**embedded)
    program.with_backend(request.getfixturevalue(fixture))(**compiled)
    written = {o for call in program.ir.calls for o in call.outs if not program.ir.is_temporary(o)}
    for name in written:
        assert np.any(embedded[name] != inputs[name]), f"{name} not written"
        np.testing.assert_array_equal(compiled[name], embedded[name], err_msg=name)


def test_which_calls_chain() -> None:
    """The arguments' field operator, the scan and the copy of its results are one chain;
    a field operator reading at offsets what the chain writes, a concat_where, and field
    operators that are not inlined stop it."""

    def chains(program: sc.Program, **options: bool) -> list[tuple[int, ...]]:
        return scan_chains(transform_program(program.ir), **options)

    assert chains(icon_like) == [(0, 1, 2)]
    assert chains(icon_like_window) == [(0, 1, 2)]
    assert len(chains(sums_3d)) == 1 and len(chains(sums_3d)[0]) >= 3
    assert chains(icon_like, field_operators=False) == []
    assert all({0, 2} - set(chain) for chain in chains(reads_what_the_chain_writes))
    assert chains(with_a_concat_where) == [(1, 2)]  # not the concat_where of call 0
