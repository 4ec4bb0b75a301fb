"""The two peer kernels in NumPy alone, for the peers' own interpreters (which have NumPy
and their package, never stencilchain): the inputs, made as the examples make them, and the
expected results, as `stencilchain.examples.hdiff.reference` and
`stencilchain.examples.tridiagonal.reference` compute them (tests/test_benchmarks.py checks
that they agree), plus the check that every baseline passes before it is timed."""

from __future__ import annotations

import numpy as np

KERNELS = ("hdiff", "thomas")
# the arguments of each kernel in call order; the last one is the output
ARGUMENTS = {"hdiff": ("inp", "coeff", "out"), "thomas": ("a", "b", "c", "d", "x")}


class WrongResultError(AssertionError):
    """A baseline's result differs from NumPy's: it is not timed."""


def make_inputs(kernel: str, shape: tuple[int, ...], order: str) -> dict[str, np.ndarray]:
    """The arguments of `kernel` on `shape` in `order` ("C" or "F"), from the same seed and
    in the same draws as the example's `make_inputs` (hdiff on (I, J, K), the Thomas solve
    on (I, J, K) or (Cell, K), the solve along the last axis)."""
    rng = np.random.default_rng(0)
    if kernel == "hdiff":
        made = {"inp": rng.random(shape), "coeff": 0.025 * rng.random(shape)}
        made["out"] = np.zeros(shape)
    elif kernel == "thomas":
        a = rng.uniform(-1.0, 0.0, shape)
        c = rng.uniform(-1.0, 0.0, shape)
        a[..., 0] = 0.0
        c[..., -1] = 0.0
        made = {"a": a, "b": 2.5 + np.abs(a) + np.abs(c), "c": c, "d": rng.random(shape)}
        made["x"] = np.zeros(shape)
    else:
        raise ValueError(f"unknown kernel {kernel!r}; the kernels are {', '.join(KERNELS)}")
    return {name: np.asarray(array, order=order) for name, array in made.items()}


def hdiff(inp: np.ndarray, coeff: np.ndarray, out: np.ndarray) -> None:
    """hdiff two points in from each horizontal edge (axes 0, 1), level by level; `out` is
    left as it is elsewhere. Slabs of levels keep the temporaries small at any size."""
    for k0 in range(0, inp.shape[2], 8):
        ks = slice(k0, k0 + 8)
        f = inp[:, :, ks]
        lap = 4.0 * f[1:-1, 1:-1] - (f[:-2, 1:-1] + f[2:, 1:-1] + f[1:-1, :-2] + f[1:-1, 2:])
        # lap[a, b] is at (a + 1, b + 1); the fluxes below at (i, j) for i, j in [1, n-2)
        res = lap[1:, 1:-1] - lap[:-1, 1:-1]  # flx at i in [1, n-2), j in [2, n-2)
        flx = np.where(res * (f[2:-1, 2:-2] - f[1:-2, 2:-2]) > 0.0, 0.0, res)
        res = lap[1:-1, 1:] - lap[1:-1, :-1]  # fly at i in [2, n-2), j in [1, n-2)
        fly = np.where(res * (f[2:-2, 2:-1] - f[2:-2, 1:-2]) > 0.0, 0.0, res)
        out[2:-2, 2:-2, ks] = f[2:-2, 2:-2] - coeff[2:-2, 2:-2, ks] * (
            flx[1:] - flx[:-1] + fly[:, 1:] - fly[:, :-1]
        )


def thomas(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, x: np.ndarray) -> None:
    """The Thomas algorithm along the last axis, vectorized over the others."""
    nk = a.shape[-1]
    c_prime = np.empty(a.shape)
    d_prime = np.empty(a.shape)
    c_below = np.zeros(a.shape[:-1])
    d_below = np.zeros(a.shape[:-1])
    for k in range(nk):
        denominator = b[..., k] - a[..., k] * c_below
        c_below = c_prime[..., k] = c[..., k] / denominator
        d_below = d_prime[..., k] = (d[..., k] - a[..., k] * d_below) / denominator
    x_above = np.zeros(a.shape[:-1])
    for k in range(nk - 1, -1, -1):
        x_above = x[..., k] = d_prime[..., k] - c_prime[..., k] * x_above


REFERENCES = {"hdiff": hdiff, "thomas": thomas}


FULL_CHECK_POINTS = 1 << 23  # above this, the two end blocks of axis 0 are checked
END_BLOCK = 32


def check_result(name: str, kernel: str, arrays: dict[str, np.ndarray]) -> float:
    """Checks the output of `kernel` in `arrays` (the kernel has run) against NumPy's: all
    of it, or on a large grid the first and last END_BLOCK planes of axis 0 (the reference
    run on those planes alone, so that a check of a grid beyond the cache costs little
    memory); the largest relative difference, or WrongResultError naming `name`."""
    names = ARGUMENTS[kernel]
    out = arrays[names[-1]]
    n0 = out.shape[0]
    if out.size <= FULL_CHECK_POINTS or n0 <= 2 * END_BLOCK:
        blocks = [slice(0, n0)]
    else:
        blocks = [slice(0, END_BLOCK), slice(n0 - END_BLOCK, n0)]
    # hdiff's result is defined two planes in from each end of the block
    inner = slice(2, -2) if kernel == "hdiff" else slice(None)
    worst = 0.0
    for block in blocks:
        expected = np.zeros(out[block].shape)
        REFERENCES[kernel](*(arrays[n][block] for n in names[:-1]), expected)
        worst = max(worst, check(name, out[block][inner], expected[inner]))
    return worst


def check(name: str, got: np.ndarray, expected: np.ndarray, rtol: float = 1e-10) -> float:
    """The largest relative difference of `got` from `expected`; raises WrongResultError
    naming `name` when it is above `rtol` (or a value is not finite where NumPy's is)."""
    if got.shape != expected.shape:
        raise WrongResultError(f"{name}: result of shape {got.shape}, expected {expected.shape}")
    scale = np.maximum(np.abs(expected), 1e-300)
    with np.errstate(invalid="ignore"):
        worst = float(np.nanmax(np.abs(got - expected) / scale)) if got.size else 0.0
    if not np.array_equal(np.isfinite(got), np.isfinite(expected)) or not worst <= rtol:
        bad = int(np.count_nonzero(~np.isclose(got, expected, rtol=rtol, atol=0.0)))
        raise WrongResultError(
            f"{name}: the result differs from NumPy's at {bad} of {got.size} points "
            f"(largest relative difference {worst:.3g}, allowed {rtol:g}); not timed"
        )
    return worst
