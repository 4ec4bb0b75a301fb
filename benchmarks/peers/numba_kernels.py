"""Hand-written Numba loop nests of hdiff and the Thomas solve, one per layout: what a
performance-minded user writes by hand. Runs in the Numba peer's own interpreter
(benchmarks/peers/worker.py), never in the project's.

- hdiff, C order (K unit-stride): `prange` over blocks of I; in a block a sliding window
  along I keeps the Laplacian of planes i-1, i, i+1 and the x-flux of plane i-1 (each a
  J x K plane), so every intermediate is computed once; the innermost loop runs along K.
- hdiff, Fortran order (I unit-stride): `prange` over the levels K; each level is a 2-D
  stencil with a Laplacian plane of its own, the innermost loop along I.
- Thomas, C order (K unit-stride): a per-column kernel, `prange` over I, each column solved
  along K with its c', d' in a column buffer.
- Thomas, Fortran order (I unit-stride): a per-plane kernel, `prange` over J and blocks
  of 256 columns of I, the sweeps along K with the innermost loop across those columns
  (vectorized), c', d' in a K x 256 buffer.

No `fastmath`: the results must agree with NumPy's to rounding.
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np
from numba import prange

# blocks of the outer dimension per thread in the C-order hdiff: a window's first planes
# are computed twice, once per block
_BLOCKS_PER_THREAD = 2
# columns of I per task of the Fortran-order Thomas solve (c', d' of K x 256 in L2)
_COLUMNS = 256


@numba.njit(parallel=True, cache=False)
def hdiff_c(inp, coeff, out, nblocks):  # type: ignore[no-untyped-def]
    ni, nj, nk = inp.shape
    lo, hi = 2, ni - 2
    step = (hi - lo + nblocks - 1) // nblocks
    for block in prange(nblocks):
        i0 = lo + block * step
        i1 = min(hi, i0 + step)
        if i0 >= i1:
            continue
        lap = np.empty((3, nj, nk))  # planes i-1, i, i+1 in a ring
        flx_prev = np.empty((nj, nk))
        flx = np.empty((nj, nk))
        fly = np.empty((nj, nk))
        for p in range(2):  # planes i0-1 and i0; i0+1 is the first of the loop below
            ii = i0 - 1 + p
            for j in range(1, nj - 1):
                for k in range(nk):
                    lap[ii % 3, j, k] = 4.0 * inp[ii, j, k] - (
                        inp[ii - 1, j, k]
                        + inp[ii + 1, j, k]
                        + inp[ii, j - 1, k]
                        + inp[ii, j + 1, k]
                    )
        ii = i0 - 1  # x-flux of plane i0-1
        for j in range(2, nj - 2):
            for k in range(nk):
                res = lap[(ii + 1) % 3, j, k] - lap[ii % 3, j, k]
                flx_prev[j, k] = 0.0 if res * (inp[ii + 1, j, k] - inp[ii, j, k]) > 0.0 else res
        for i in range(i0, i1):
            n = i + 1
            for j in range(1, nj - 1):
                for k in range(nk):
                    lap[n % 3, j, k] = 4.0 * inp[n, j, k] - (
                        inp[n - 1, j, k] + inp[n + 1, j, k] + inp[n, j - 1, k] + inp[n, j + 1, k]
                    )
            c, nx = i % 3, n % 3
            for j in range(1, nj - 2):
                for k in range(nk):
                    res = lap[nx, j, k] - lap[c, j, k]
                    flx[j, k] = 0.0 if res * (inp[n, j, k] - inp[i, j, k]) > 0.0 else res
                    res = lap[c, j + 1, k] - lap[c, j, k]
                    fly[j, k] = 0.0 if res * (inp[i, j + 1, k] - inp[i, j, k]) > 0.0 else res
            for j in range(2, nj - 2):
                for k in range(nk):
                    out[i, j, k] = inp[i, j, k] - coeff[i, j, k] * (
                        flx[j, k] - flx_prev[j, k] + fly[j, k] - fly[j - 1, k]
                    )
            flx_prev, flx = flx, flx_prev


@numba.njit(parallel=True, cache=False)
def hdiff_f(inp, coeff, out):  # type: ignore[no-untyped-def]
    ni, nj, nk = inp.shape
    for k in prange(nk):
        lap = np.empty((nj, ni))  # [j, i]: I unit-stride, as in the arrays
        flx = np.empty((nj, ni))
        fly = np.empty((nj, ni))
        for j in range(1, nj - 1):
            for i in range(1, ni - 1):
                lap[j, i] = 4.0 * inp[i, j, k] - (
                    inp[i - 1, j, k] + inp[i + 1, j, k] + inp[i, j - 1, k] + inp[i, j + 1, k]
                )
        for j in range(1, nj - 1):
            for i in range(1, ni - 2):
                res = lap[j, i + 1] - lap[j, i]
                flx[j, i] = 0.0 if res * (inp[i + 1, j, k] - inp[i, j, k]) > 0.0 else res
            if j < nj - 2:
                for i in range(1, ni - 1):
                    res = lap[j + 1, i] - lap[j, i]
                    fly[j, i] = 0.0 if res * (inp[i, j + 1, k] - inp[i, j, k]) > 0.0 else res
        for j in range(2, nj - 2):
            for i in range(2, ni - 2):
                out[i, j, k] = inp[i, j, k] - coeff[i, j, k] * (
                    flx[j, i] - flx[j, i - 1] + fly[j, i] - fly[j - 1, i]
                )


@numba.njit(parallel=True, cache=False)
def thomas_c(a, b, c, d, x):  # type: ignore[no-untyped-def]
    ni, nj, nk = a.shape
    for i in prange(ni):
        cp = np.empty(nk)
        dp = np.empty(nk)
        for j in range(nj):
            c_below = 0.0
            d_below = 0.0
            for k in range(nk):
                den = b[i, j, k] - a[i, j, k] * c_below
                c_below = c[i, j, k] / den
                d_below = (d[i, j, k] - a[i, j, k] * d_below) / den
                cp[k] = c_below
                dp[k] = d_below
            x_above = 0.0
            for k in range(nk - 1, -1, -1):
                x_above = dp[k] - cp[k] * x_above
                x[i, j, k] = x_above


@numba.njit(parallel=True, cache=False)
def thomas_f(a, b, c, d, x, width):  # type: ignore[no-untyped-def]
    ni, nj, nk = a.shape
    nb = (ni + width - 1) // width
    for t in prange(nj * nb):
        j = t // nb
        i0 = (t % nb) * width
        n = min(width, ni - i0)
        cp = np.empty((nk, width))
        dp = np.empty((nk, width))
        for q in range(n):
            den = b[i0 + q, j, 0]
            cp[0, q] = c[i0 + q, j, 0] / den
            dp[0, q] = d[i0 + q, j, 0] / den
        for k in range(1, nk):
            for q in range(n):
                i = i0 + q
                den = b[i, j, k] - a[i, j, k] * cp[k - 1, q]
                cp[k, q] = c[i, j, k] / den
                dp[k, q] = (d[i, j, k] - a[i, j, k] * dp[k - 1, q]) / den
        for q in range(n):
            x[i0 + q, j, nk - 1] = dp[nk - 1, q]
        for k in range(nk - 2, -1, -1):
            for q in range(n):
                x[i0 + q, j, k] = dp[k, q] - cp[k, q] * x[i0 + q, j, k + 1]


def build(
    kernel: str, order: str, arrays: dict[str, np.ndarray], variant: str
) -> Callable[[], None]:
    """The call of the hand-written nest of `kernel` for `order` on `arrays` (compiled at
    the first call). 2-D (Cell, K) grids are solved as (Cell, 1, K)."""
    if variant != "hand":
        raise ValueError(f"numba has one variant, 'hand', not {variant!r}")
    args = [a if a.ndim == 3 else a[:, None, :] for a in arrays.values()]
    if kernel == "hdiff":
        if order == "C":
            blocks = _BLOCKS_PER_THREAD * numba.get_num_threads()
            return lambda: hdiff_c(*args, blocks)
        return lambda: hdiff_f(*args)
    if kernel == "thomas":
        if order == "C":
            return lambda: thomas_c(*args)
        return lambda: thomas_f(*args, _COLUMNS)
    raise ValueError(f"unknown kernel {kernel!r}")
