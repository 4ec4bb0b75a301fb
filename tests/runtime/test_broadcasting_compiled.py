"""Broadcasting on the embedded executor and every CPU toolchain, against NumPy, for C and
Fortran layouts: a K-only coefficient times a 3-D Laplacian, fields over (I) and (J)
broadcast to (I, J), a (K, I) field with (K) and (I) ones (a where over a K mask), a
broadcast field shifted along a dimension it does not have (which leaves the domain whole),
and broadcast scalars and literals. The argument checks stay exact: a coefficient of the
wrong length along K is refused before anything runs. (Typing and misuse:
tests/program/test_broadcasting.py.)
"""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pytest

import stencilchain as sc

I = sc.Dimension("I")
J = sc.Dimension("J")
K = sc.Dimension("K")

F3 = sc.Field[[I, J, K], sc.float64]
FK = sc.Field[[K], sc.float64]
FI = sc.Field[[I], sc.float64]
FJ = sc.Field[[J], sc.float64]
FIJ = sc.Field[[I, J], sc.float64]
FKI = sc.Field[[K, I], sc.float64]
BK = sc.Field[[K], sc.bool_]

TOOLCHAINS = ["embedded", "gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


@pytest.fixture(params=TOOLCHAINS)
def run(request: pytest.FixtureRequest) -> Any:
    """A function running a program on the toolchain."""
    if request.param == "embedded":
        return lambda prog: prog
    toolchain = request.getfixturevalue(request.param)
    return lambda prog: prog.with_backend(toolchain)


@sc.field_operator
def lap(f: F3) -> F3:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


@sc.field_operator
def scaled(nu: FK, f: F3) -> F3:
    return nu * lap(f)


@sc.field_operator
def plane(a: FI, b: FJ, alpha: sc.float64) -> FIJ:
    return sc.broadcast(a, (I, J)) * b + sc.broadcast(alpha, (I, J))


@sc.field_operator
def masked(mask: BK, ki: FKI, a: FI, nu: FK) -> FKI:
    return sc.where(mask, ki, a) + nu(K + 1)


@sc.field_operator
def shifted_column(nu: FK) -> F3:
    # nu is read along K only: the shift along I leaves the domain whole
    return sc.broadcast(nu, (I, J, K))(I + 1) + sc.broadcast(2.0, (I, J, K))


@sc.field_operator
def filled() -> FIJ:
    return sc.broadcast(1.5, (I, J))  # a literal: a computation without inputs


@sc.program
def column_program(
    nu: FK, f: F3, a: FI, b: FJ, ki: FKI, mask: BK, alpha: sc.float64,
    o1: F3, o2: FIJ, o3: FKI, o4: F3, o5: FIJ,
):  # fmt: skip
    scaled(nu, f, out=o1)
    plane(a, b, alpha, out=o2)
    masked(mask, ki, a, nu, out=o3)
    shifted_column(nu, out=o4)
    filled(out=o5)


def column_inputs(shape: tuple[int, int, int], order: str, seed: int = 0) -> dict[str, object]:
    ni, nj, nk = shape
    rng = np.random.default_rng(seed)
    return {
        "nu": rng.random(nk) - 0.5,
        "f": np.asarray(rng.random(shape), order=order),
        "a": rng.random(ni),
        "b": rng.random(nj),
        "ki": np.asarray(rng.random((nk, ni)), order=order),
        "mask": rng.random(nk) < 0.5,
        "alpha": np.float64(0.25),
    }


def column_reference(nu, f, a, b, ki, mask, alpha):  # type: ignore[no-untyped-def]
    """NumPy, with NaN outside each call's domain."""
    ni, nj, nk = f.shape
    o1 = np.full((ni, nj, nk), np.nan)
    o1[1:-1, 1:-1, :] = nu[None, None, :] * (
        -4.0 * f[1:-1, 1:-1] + f[2:, 1:-1] + f[:-2, 1:-1] + f[1:-1, 2:] + f[1:-1, :-2]
    )
    o2 = a[:, None] * b[None, :] + alpha
    o3 = np.full((nk, ni), np.nan)
    o3[:-1, :] = np.where(mask[:-1, None], ki[:-1], a[None, :]) + nu[1:, None]
    o4 = np.broadcast_to(nu + 2.0, (ni, nj, nk))
    return o1, o2, o3, o4, np.full((ni, nj), 1.5)


def column_outputs(shape: tuple[int, int, int], order: str) -> tuple[np.ndarray, ...]:
    ni, nj, nk = shape
    return tuple(
        np.full(s, np.nan, order=order)
        for s in ((ni, nj, nk), (ni, nj), (nk, ni), (ni, nj, nk), (ni, nj))
    )


def test_broadcasting(run: Any) -> None:
    bound = run(column_program)
    for order in ("C", "F"):
        for shape in ((6, 5, 7), (3, 9, 4)):
            inputs = column_inputs(shape, order, seed=sum(shape))
            outs = column_outputs(shape, order)
            bound(*inputs.values(), *outs)
            for k, (got, want) in enumerate(zip(outs, column_reference(**inputs))):
                np.testing.assert_allclose(
                    got, want, rtol=1e-14, atol=0, err_msg=f"output {k}, {order}, {shape}"
                )
    # a longer broadcast field is a field over its own range (docs/dsl.md): the outputs'
    # levels read its first ones; one starting below 0 is read from 0 on (an input), and an
    # output starting below 0 is an ArgumentError naming it
    inputs = column_inputs((6, 5, 7), "C")
    want = column_reference(**inputs)
    inputs["nu"] = np.concatenate([inputs["nu"], [np.nan]])
    outs = column_outputs((6, 5, 7), "C")
    bound(*inputs.values(), *outs)
    for got, expected in zip(outs, want):
        np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)
    nu = np.asarray(inputs["nu"])[:-1]  # the 7 levels again, and a NaN at level -1
    inputs["nu"] = sc.as_field((K,), np.concatenate([[np.nan], nu]), start={K: -1})
    outs = column_outputs((6, 5, 7), "C")
    bound(*inputs.values(), *outs)  # its level -1 (NaN) is never read
    for got, expected in zip(outs, want):
        np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)
    outs = column_outputs((6, 5, 7), "C")
    below = (sc.as_field((I, J, K), outs[0], start={K: -1}), *outs[1:])
    with pytest.raises(sc.ArgumentError, match=r"argument 'o1' .*below 0, for an output"):
        bound(*inputs.values(), *below)
    assert all(np.isnan(o).all() for o in outs)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.slow
@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_gpu_sources_build(session_cache_dir: Any, family: str) -> None:
    from stencilchain.containers import build_container

    if family == "dace":
        pytest.importorskip("dace")
    container = build_container({}, cache_dir=session_cache_dir, device="gpu")
    toolchain = getattr(container, family).toolchain()
    assert toolchain.compile(column_program).artifact.module_path.is_file()
