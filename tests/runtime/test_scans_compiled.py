"""Scans on every CPU toolchain, against NumPy references written here (not the embedded
executor): a Thomas tridiagonal solve, vertical integrals both ways, a 3-tuple state of
mixed dtypes, float32 states, C / Fortran / sliced arrays, a sub-range of K."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.containers import build_container

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F64 = sc.Field[[I, J, K], sc.float64]
F32 = sc.Field[[I, J, K], sc.float32]
I64 = sc.Field[[I, J, K], sc.int64]

TOOLCHAINS = ["embedded", "gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]
SHAPE = (5, 4, 9)


def runner(fixture: str, request: pytest.FixtureRequest) -> Callable[[sc.Program], Any]:
    if fixture == "embedded":
        return lambda prog: prog.with_backend(sc.backends.run_embedded)
    toolchain = request.getfixturevalue(fixture)
    return lambda prog: prog.with_backend(toolchain)


def layout(array: np.ndarray, kind: str) -> np.ndarray:
    """`array`'s values in C order, Fortran order, or as a non-contiguous slice."""
    if kind == "C":
        return np.ascontiguousarray(array)
    if kind == "F":
        return np.asfortranarray(array)
    big = np.zeros(tuple(2 * n + 1 for n in array.shape), dtype=array.dtype)
    view = big[1::2, 1::2, 1::2]
    view[...] = array
    return view


# --- Thomas tridiagonal solve ---------------------------------------------------------


@sc.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def thomas_forward(state, a: F64, b: F64, c: F64, d: F64):  # type: ignore[no-untyped-def]
    cp, dp = state
    denom = b - a * cp
    return c / denom, (d - a * dp) / denom


@sc.scan_operator(axis=K, forward=False, init=0.0)
def thomas_backward(x_above, cp: F64, dp: F64):  # type: ignore[no-untyped-def]
    return dp - cp * x_above


@sc.program
def tridiagonal(a: F64, b: F64, c: F64, d: F64, x: F64) -> None:
    cp, dp = thomas_forward(a, b, c, d)
    thomas_backward(cp, dp, out=x)


def thomas_reference(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Thomas algorithm, a loop over K vectorized over I, J."""
    n = a.shape[2]
    cp = np.zeros(a.shape)
    dp = np.zeros(a.shape)
    cp[..., 0] = c[..., 0] / b[..., 0]
    dp[..., 0] = d[..., 0] / b[..., 0]
    for k in range(1, n):
        denom = b[..., k] - a[..., k] * cp[..., k - 1]
        cp[..., k] = c[..., k] / denom
        dp[..., k] = (d[..., k] - a[..., k] * dp[..., k - 1]) / denom
    x = np.zeros(a.shape)
    x[..., n - 1] = dp[..., n - 1]
    for k in range(n - 2, -1, -1):
        x[..., k] = dp[..., k] - cp[..., k] * x[..., k + 1]
    return x


def tridiagonal_system(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    a = rng.random(SHAPE)
    c = rng.random(SHAPE)
    a[..., 0] = 0.0  # no neighbour below the first level, none above the last
    c[..., -1] = 0.0
    b = 3.0 + rng.random(SHAPE)
    d = rng.random(SHAPE)
    return a, b, c, d


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_thomas_solve(fixture: str, kind: str, request: pytest.FixtureRequest) -> None:
    a, b, c, d = tridiagonal_system(np.random.default_rng(1))
    expected = thomas_reference(a, b, c, d)
    # the reference solves the system: A x = d in every column
    i, j = 2, 1
    matrix = np.diag(b[i, j]) + np.diag(a[i, j, 1:], -1) + np.diag(c[i, j, :-1], 1)
    np.testing.assert_allclose(matrix @ expected[i, j], d[i, j], rtol=1e-12)
    x = layout(np.zeros(SHAPE), kind)
    runner(fixture, request)(tridiagonal)(*(layout(v, kind) for v in (a, b, c, d)), x)
    np.testing.assert_allclose(x, expected, rtol=1e-12, atol=1e-14)


# --- vertical integrals ---------------------------------------------------------------


@sc.scan_operator(axis=K, init=0.0)
def integral_up(total, f: F64, dz: sc.float64):  # type: ignore[no-untyped-def]
    return total + f * dz


@sc.scan_operator(axis=K, forward=False, init=1000.0)
def pressure_down(p, rho: F64, g: sc.float64):  # type: ignore[no-untyped-def]
    return p + g * rho


@sc.program
def integrals(f: F64, rho: F64, up: F64, down: F64, dz: sc.float64) -> None:
    integral_up(f, dz, out=up)
    pressure_down(rho, 9.81, out=down)


@pytest.mark.parametrize("kind", ["C", "F"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_vertical_integrals_both_ways(
    fixture: str, kind: str, request: pytest.FixtureRequest
) -> None:
    rng = np.random.default_rng(2)
    f, rho = rng.random(SHAPE), rng.random(SHAPE)
    up, down = layout(np.zeros(SHAPE), kind), layout(np.zeros(SHAPE), kind)
    runner(fixture, request)(integrals)(layout(f, kind), layout(rho, kind), up, down, 0.5)
    np.testing.assert_allclose(up, np.cumsum(f * 0.5, axis=2), rtol=1e-12)
    expected_down = 1000.0 + np.cumsum((9.81 * rho)[..., ::-1], axis=2)[..., ::-1]
    np.testing.assert_allclose(down, expected_down, rtol=1e-12)


# --- a sub-range of K --------------------------------------------------------------------


@sc.program
def integral_inside(f: F64, up: F64, dz: sc.float64) -> None:
    integral_up(f, dz, out=up, domain={K: (2, -3)})


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_a_scan_over_a_sub_range_starts_at_its_start(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    f = np.random.default_rng(3).random(SHAPE)
    up = np.full(SHAPE, -1.0)
    runner(fixture, request)(integral_inside)(f, up, 2.0)
    expected = np.full(SHAPE, -1.0)
    expected[..., 2:-3] = np.cumsum(2.0 * f[..., 2:-3], axis=2)
    np.testing.assert_allclose(up, expected, rtol=1e-12)


@sc.program
def pressure_inside(rho: F64, down: F64) -> None:
    pressure_down(rho, 1.0, out=down, domain={K: (1, -2)})


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_a_backward_scan_over_a_sub_range_starts_at_its_stop(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    rho = np.random.default_rng(4).random(SHAPE)
    down = np.zeros(SHAPE)
    runner(fixture, request)(pressure_inside)(rho, down)
    expected = np.zeros(SHAPE)
    expected[..., 1:-2] = 1000.0 + np.cumsum(rho[..., 1:-2][..., ::-1], axis=2)[..., ::-1]
    np.testing.assert_allclose(down, expected, rtol=1e-12)


# --- states of several dtypes ----------------------------------------------------------


@sc.scan_operator(axis=K, init=(0.0, np.int64(0), np.float32(-1e30)))
def statistics(state, f: F64, g: F32):  # type: ignore[no-untyped-def]
    total, positives, highest = state
    return total + f, positives + sc.where(f > 0.5, 1, 0), sc.math.maximum(highest, g)


@sc.program
def running_statistics(f: F64, g: F32, total: F64, positives: I64, highest: F32) -> None:
    statistics(f, g, out=(total, positives, highest))


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_a_three_tuple_state_of_mixed_dtypes(fixture: str, request: pytest.FixtureRequest) -> None:
    rng = np.random.default_rng(5)
    f = rng.random(SHAPE)
    g = rng.standard_normal(SHAPE).astype(np.float32)
    total, positives = np.zeros(SHAPE), np.zeros(SHAPE, dtype=np.int64)
    highest = np.zeros(SHAPE, dtype=np.float32)
    runner(fixture, request)(running_statistics)(f, g, total, positives, highest)
    np.testing.assert_allclose(total, np.cumsum(f, axis=2), rtol=1e-12)
    np.testing.assert_array_equal(positives, np.cumsum(f > 0.5, axis=2))
    np.testing.assert_array_equal(highest, np.maximum.accumulate(g, axis=2))
    assert highest.dtype == np.float32


@sc.scan_operator(axis=K, init=np.float32(0))
def integral32(total, f: F32):  # type: ignore[no-untyped-def]
    return total + np.float32(0.25) * f


@sc.program
def integrate32(f: F32, out: F32) -> None:
    integral32(f, out=out)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_a_float32_state_stays_float32(fixture: str, request: pytest.FixtureRequest) -> None:
    f = np.random.default_rng(6).random(SHAPE).astype(np.float32)
    out = np.zeros(SHAPE, dtype=np.float32)
    runner(fixture, request)(integrate32)(f, out)
    expected = np.add.accumulate(np.float32(0.25) * f, axis=2, dtype=np.float32)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


# --- scans with field operators: temporaries in both directions --------------------------


@sc.field_operator
def centred(f: F64) -> F64:
    return 0.5 * (f(K + 1) + f(K - 1))


@sc.field_operator
def doubled(f: F64) -> F64:
    return 2.0 * f


@sc.program
def smooth_then_integrate(f: F64, out: F64) -> None:
    smoothed = centred(f)  # a temporary over K: [1, end-1)
    total = integral_up(smoothed, 1.0)  # starts where the temporary starts
    doubled(total, out=out)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_scans_read_and_write_temporaries(fixture: str, request: pytest.FixtureRequest) -> None:
    f = np.random.default_rng(7).random(SHAPE)
    out = np.full(SHAPE, -1.0)
    runner(fixture, request)(smooth_then_integrate)(f, out)
    expected = np.full(SHAPE, -1.0)
    expected[..., 1:-1] = 2.0 * np.cumsum(0.5 * (f[..., 2:] + f[..., :-2]), axis=2)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


# --- DaCe's external workspace, and the GPU sources ------------------------------------


@pytest.mark.parametrize("auto_optimize", [True, False], ids=["opt", "noopt"])
def test_scan_temporaries_live_in_an_external_workspace(
    auto_optimize: bool, session_cache_dir: Path
) -> None:
    pytest.importorskip("dace")
    container = build_container(
        {}, cache_dir=session_cache_dir, auto_optimize=auto_optimize, external_workspace=True
    )
    container.dace.name.override(
        "run_dace_cpu_scan_workspace" + ("" if auto_optimize else "_noopt")
    )
    bound = tridiagonal.with_backend(container.dace.toolchain())
    a, b, c, d = tridiagonal_system(np.random.default_rng(8))
    x = np.zeros(SHAPE)
    needed = bound.workspace_size(a, b, c, d, x)  # type: ignore[attr-defined]
    assert needed >= 2 * a.nbytes  # the forward sweep's two temporaries
    with pytest.raises(sc.WorkspaceError):
        bound(a, b, c, d, x)
    bound.set_workspace(np.empty(needed, np.uint8))  # type: ignore[attr-defined]
    bound(a, b, c, d, x)
    np.testing.assert_allclose(x, thomas_reference(a, b, c, d), rtol=1e-12, atol=1e-14)


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")


@needs_nvcc
@pytest.mark.slow
@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_gpu_sources_of_scans_build(family: str, session_cache_dir: Path) -> None:
    if family == "dace":
        pytest.importorskip("dace")
    container = build_container({}, cache_dir=session_cache_dir, device="gpu")
    toolchain = getattr(container, family).toolchain()
    for program in (tridiagonal, integrals, running_statistics, integral_inside):
        assert toolchain.compile(program).artifact.module_path.is_file()


@needs_nvcc
@pytest.mark.gpu
@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_gpu_scans_equal_the_references(family: str, session_cache_dir: Path) -> None:
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except Exception as err:  # cupy imports without a GPU and fails on first use
        pytest.skip(f"no usable CUDA device: {err}")
    if family == "dace":
        pytest.importorskip("dace")
    container = build_container({}, cache_dir=session_cache_dir, device="gpu")
    toolchain = getattr(container, family).toolchain()
    a, b, c, d = tridiagonal_system(np.random.default_rng(9))
    for order in ("C", "F"):
        on_device = [cupy.asarray(np.array(v, order=order)) for v in (a, b, c, d, np.zeros(SHAPE))]
        tridiagonal.with_backend(toolchain)(*on_device)
        cupy.cuda.Device().synchronize()
        np.testing.assert_allclose(
            cupy.asnumpy(on_device[-1]), thomas_reference(a, b, c, d), rtol=1e-12, atol=1e-14
        )
    f = np.random.default_rng(10).random(SHAPE)
    up = cupy.full(SHAPE, -1.0)
    integral_inside.with_backend(toolchain)(cupy.asarray(f), up, 2.0)
    expected = np.full(SHAPE, -1.0)
    expected[..., 2:-3] = np.cumsum(2.0 * f[..., 2:-3], axis=2)
    np.testing.assert_allclose(cupy.asnumpy(up), expected, rtol=1e-12)


# --- domains and partly read results -------------------------------------------------------


@sc.program
def integral_too_long(f: F64, up: F64) -> None:
    integral_up(f, 1.0, out=up, domain={K: (0, 12)})


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_a_scan_domain_beyond_the_arrays_is_a_domain_error(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    f, up = np.ones(SHAPE), np.full(SHAPE, -1.0)
    with pytest.raises(sc.DomainError, match=r"call of integral_up in integral_too_long\(\)"):
        runner(fixture, request)(integral_too_long)(f, up)
    assert (up == -1.0).all()


@sc.program
def only_the_second(a: F64, b: F64, c: F64, d: F64, out: F64) -> None:
    _c_prime, d_prime = thomas_forward(a, b, c, d)  # c' is never read
    doubled(d_prime, out=out)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_a_tuple_scan_whose_first_result_no_one_reads(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    a, b, c, d = tridiagonal_system(np.random.default_rng(11))
    out = np.zeros(SHAPE)
    runner(fixture, request)(only_the_second)(a, b, c, d, out)
    cb, db = np.zeros(SHAPE[:2]), np.zeros(SHAPE[:2])
    expected = np.zeros(SHAPE)
    for k in range(SHAPE[2]):
        denominator = b[..., k] - a[..., k] * cb
        cb, db = c[..., k] / denominator, (d[..., k] - a[..., k] * db) / denominator
        expected[..., k] = 2.0 * db
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@sc.scan_operator(axis=K, init=0.0)
def weighted(total, f: F64, w: sc.float64, v: sc.float64):  # type: ignore[no-untyped-def]
    return total * v + w * f


@sc.program
def in_place(f: F64, w: sc.float64) -> None:
    weighted(f, w, w, out=f)  # reads f at a level, then overwrites it there


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_a_scan_may_overwrite_its_input_and_take_one_scalar_twice(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    f = np.random.default_rng(12).random(SHAPE)
    expected = np.empty(SHAPE)
    total = np.zeros(SHAPE[:2])
    for k in range(SHAPE[2]):
        total = expected[..., k] = total * 0.5 + 0.5 * f[..., k]
    runner(fixture, request)(in_place)(f, 0.5)
    np.testing.assert_allclose(f, expected, rtol=1e-12)


# --- an "ICON-like" scan: a 3-tuple state fed by a field operator with K shifts -----------


@sc.field_operator
def vertical_inputs(w: F64, rho: F64) -> tuple[F64, F64, F64]:
    dw = w(K + 1) - w(K - 1)
    mean_rho = 0.5 * (rho(K + 1) + rho(K - 1))
    return dw, mean_rho, rho * w


@sc.scan_operator(axis=K, init=(0.0, 1.0, np.int64(0)))
def precipitation(state, dw: F64, mean_rho: F64, flux: F64):  # type: ignore[no-untyped-def]
    rain, factor, falling = state
    new_rain = sc.where(dw > 0.0, rain + flux * factor, rain * 0.5)
    return new_rain, factor * mean_rho / (mean_rho + 1.0), falling + sc.where(dw > 0.0, 1, 0)


@sc.program
def icon_like(w: F64, rho: F64, rain: F64, factor: F64, falling: I64) -> None:
    dw, mean_rho, flux = vertical_inputs(w, rho)  # temporaries over K: [1, end-1)
    precipitation(dw, mean_rho, flux, out=(rain, factor, falling))


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_an_icon_like_scan_fed_by_shifted_expressions(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    rng = np.random.default_rng(13)
    w, rho = rng.standard_normal(SHAPE), rng.random(SHAPE)
    rain, factor = np.full(SHAPE, -1.0), np.full(SHAPE, -1.0)
    falling = np.full(SHAPE, -1, dtype=np.int64)
    runner(fixture, request)(icon_like)(w, rho, rain, factor, falling)
    expected = [np.full(SHAPE, -1.0), np.full(SHAPE, -1.0), np.full(SHAPE, -1, dtype=np.int64)]
    r, f, n = np.zeros(SHAPE[:2]), np.ones(SHAPE[:2]), np.zeros(SHAPE[:2], dtype=np.int64)
    for k in range(1, SHAPE[2] - 1):  # where the shifted inputs exist
        dw = w[..., k + 1] - w[..., k - 1]
        mean_rho = 0.5 * (rho[..., k + 1] + rho[..., k - 1])
        r = np.where(dw > 0.0, r + rho[..., k] * w[..., k] * f, r * 0.5)
        f = f * mean_rho / (mean_rho + 1.0)
        n = n + (dw > 0.0)
        expected[0][..., k], expected[1][..., k], expected[2][..., k] = r, f, n
    np.testing.assert_allclose(rain, expected[0], rtol=1e-12)
    np.testing.assert_allclose(factor, expected[1], rtol=1e-12)
    np.testing.assert_array_equal(falling, expected[2])


# --- chains of scans, column by column (GTFN on the CPU) -----------------------------


@sc.scan_operator(axis=K, init=(0.0, np.float32(1.0)))
def scaled_up(state, f: F64):  # type: ignore[no-untyped-def]
    total, scale = state
    return total + f, scale * np.float32(0.5)


@sc.scan_operator(axis=K, forward=False, init=0.0)
def mixed_down(above, total: F64, scale: F32):  # type: ignore[no-untyped-def]
    return 0.5 * above + total * sc.astype(scale, sc.float64)


@sc.program
def three_scans(f: F64, out: F64) -> None:
    total, scale = scaled_up(f, domain={K: (1, -1)})
    down = mixed_down(total, scale, domain={K: (1, -1)})
    integral_up(down, 2.0, out=out, domain={K: (1, -1)})


def three_scans_reference(f: np.ndarray) -> np.ndarray:
    nk = f.shape[2]
    total = np.cumsum(f[..., 1:-1], axis=2)
    scale = np.float32(0.5) ** np.arange(1, nk - 1, dtype=np.float32)
    down = np.zeros(total.shape)
    above = np.zeros(f.shape[:2])
    for k in range(nk - 3, -1, -1):
        above = down[..., k] = 0.5 * above + total[..., k] * scale[k]
    out = np.full(f.shape, -1.0)
    out[..., 1:-1] = np.cumsum(down * 2.0, axis=2)
    return out


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu"])
def test_a_chain_of_scans_over_more_columns_than_a_block_in_parallel(
    fixture: str, kind: str, request: pytest.FixtureRequest
) -> None:
    """Blocks of columns with a partial last one, both column dimensions innermost in turn,
    more columns than the OpenMP threshold, a sub-range of levels, a float32 state."""
    shape = (300, 230, 5)
    f = np.random.default_rng(14).random(shape)
    out = layout(np.full(shape, -1.0), kind)
    runner(fixture, request)(three_scans)(layout(f, kind), out)
    np.testing.assert_allclose(out, three_scans_reference(f), rtol=1e-12)
    a, b, c, d = (layout(v, kind) for v in tridiagonal_system_of((37, 300, 4)))
    x = layout(np.zeros((37, 300, 4)), kind)
    runner(fixture, request)(tridiagonal)(a, b, c, d, x)
    np.testing.assert_allclose(x, thomas_reference(a, b, c, d), rtol=1e-12, atol=1e-14)


def tridiagonal_system_of(shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(15)
    a, c = rng.random(shape), rng.random(shape)
    a[..., 0] = 0.0
    c[..., -1] = 0.0
    return a, 3.0 + rng.random(shape), c, rng.random(shape)
