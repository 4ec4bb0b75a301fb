"""Halide pipelines of hdiff and the Thomas solve, with hand schedules and (for hdiff)
Mullapudi2016's auto-scheduler. Runs in the Halide peer's own interpreter
(benchmarks/peers/worker.py), never in the project's.

Halide's dimension 0 is the unit-stride one: a C-order (I, J, K) array is seen with its
axes reversed, (K, J, I), a Fortran-order one as it is. The algorithm is written in the
logical (i, j, k) and placed on those dimensions; the schedules follow the layout:

- hdiff, hand: a sliding window along the outer dimension with storage folding, vectorized
  along the unit-stride one. C order: parallel over blocks of I, the Laplacian and the
  x-flux stored per block and computed per plane of I (each intermediate once, a ring of
  J x K planes); the y-flux per plane. Fortran order: parallel over K, the Laplacian and
  the y-flux stored per level and computed per row of J (a ring of rows); the x-flux per
  row.
- hdiff, auto: Mullapudi2016 with the grid's size as estimates, 2 threads' parallelism.
- Thomas, hand: the forward sweep (c', d' as a tuple) and the back substitution as
  recurrences along K (update definitions over a reduction domain), computed per tile of
  columns into a buffer the tile's size and copied out, vectorized across the columns:
  Fortran order across I (unit stride), C order across J (strided loads).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

import halide as hl
import numpy as np

VECTOR = 8  # float64 lanes of AVX-512
THOMAS_TILE = {"C": 16, "F": 256}  # columns per task (c', d' and x of K x tile in L2)
ZERO = hl.f64(0.0)  # a bare Python float is a float32 in Halide
GUARD = hl.TailStrategy.GuardWithIf


def _threads() -> int:
    return int(os.environ.get("HL_NUM_THREADS") or os.cpu_count() or 1)


class _Layout:
    """Where the logical (i, j, k) of an (I, J, K) grid sit among Halide's x, y, z."""

    def __init__(self, order: str) -> None:
        self.order = order
        self.x, self.y, self.z = hl.Var("x"), hl.Var("y"), hl.Var("z")
        if order == "C":
            self.i, self.j, self.k = self.z, self.y, self.x
        else:
            self.i, self.j, self.k = self.x, self.y, self.z

    def at(self, f: hl.Func | hl.ImageParam, i: hl.Expr, j: hl.Expr, k: hl.Expr) -> hl.FuncRef:
        return f[k, j, i] if self.order == "C" else f[i, j, k]

    def buffer(self, array: np.ndarray, name: str) -> hl.Buffer:
        return hl.Buffer(array, name, reverse_axes=self.order == "C")


def hdiff(order: str, shape: tuple[int, ...], variant: str) -> tuple[hl.Func, list[hl.ImageParam]]:
    """The hdiff pipeline over the interior (out's buffer starts two points in)."""
    lay = _Layout(order)
    inp = hl.ImageParam(hl.Float(64), 3, "inp")
    coeff = hl.ImageParam(hl.Float(64), 3, "coeff")
    i, j, k = lay.i, lay.j, lay.k
    x, y, z = lay.x, lay.y, lay.z

    def f(i_: hl.Expr, j_: hl.Expr) -> hl.Expr:
        return lay.at(inp, i_, j_, k)

    lap, flx, fly, out = hl.Func("lap"), hl.Func("flx"), hl.Func("fly"), hl.Func("out")
    lap[x, y, z] = 4.0 * f(i, j) - (f(i - 1, j) + f(i + 1, j) + f(i, j - 1) + f(i, j + 1))
    res = lay.at(lap, i + 1, j, k) - lay.at(lap, i, j, k)
    flx[x, y, z] = hl.select(res * (f(i + 1, j) - f(i, j)) > 0.0, ZERO, res)
    res = lay.at(lap, i, j + 1, k) - lay.at(lap, i, j, k)
    fly[x, y, z] = hl.select(res * (f(i, j + 1) - f(i, j)) > 0.0, ZERO, res)
    out[x, y, z] = f(i, j) - lay.at(coeff, i, j, k) * (
        lay.at(flx, i, j, k) - lay.at(flx, i - 1, j, k)
        + lay.at(fly, i, j, k) - lay.at(fly, i, j - 1, k)
    )  # fmt: skip
    if variant == "hand":
        if order == "C":  # x = K (unit stride), z = I (outer): window along I
            zo, zi = hl.Var("zo"), hl.Var("zi")
            block = max(1, math.ceil((shape[0] - 4) / (2 * _threads())))
            out.split(z, zo, zi, block).parallel(zo).vectorize(x, VECTOR, GUARD)
            lap.store_at(out, zo).compute_at(out, zi).vectorize(x, VECTOR, GUARD)
            flx.store_at(out, zo).compute_at(out, zi).vectorize(x, VECTOR, GUARD)
            fly.compute_at(out, zi).vectorize(x, VECTOR, GUARD)
        else:  # x = I (unit stride), y = J, z = K (outer): window along J per level
            out.parallel(z).vectorize(x, VECTOR, GUARD)
            lap.store_at(out, z).compute_at(out, y).vectorize(x, VECTOR, GUARD)
            fly.store_at(out, z).compute_at(out, y).vectorize(x, VECTOR, GUARD)
            flx.compute_at(out, y).vectorize(x, VECTOR, GUARD)
    elif variant == "auto":
        _auto_schedule(out, [inp, coeff], lay, shape)
    else:
        raise ValueError(f"halide hdiff variants are 'hand' and 'auto', not {variant!r}")
    return out, [inp, coeff]


def _auto_schedule(
    out: hl.Func, params: list[hl.ImageParam], lay: _Layout, shape: tuple[int, ...]
) -> None:
    """Mullapudi2016 with the grid's size as estimates."""
    dims = list(reversed(shape)) if lay.order == "C" else list(shape)
    interior = [n - 4 if axis in _horizontal(lay) else n for axis, n in enumerate(dims)]
    out.set_estimates([(0, n) for n in interior])
    for p in params:
        p.set_estimates([(0, n) for n in dims])
    plugin = Path(hl.__file__).parent / "lib64" / "libautoschedule_mullapudi2016.so"
    hl.load_plugin(str(plugin))
    pipeline = hl.Pipeline(out)
    target = hl.get_host_target()
    params_ = hl.AutoschedulerParams("Mullapudi2016", {"parallelism": str(_threads())})
    pipeline.apply_autoscheduler(target, params_)


def _horizontal(lay: _Layout) -> tuple[int, int]:
    """The Halide dimensions of I and J."""
    return (2, 1) if lay.order == "C" else (0, 1)


def thomas(order: str, shape: tuple[int, ...], variant: str) -> tuple[hl.Func, list[hl.ImageParam]]:
    """The Thomas solve along k, vectorized across columns."""
    if variant != "hand":
        raise ValueError(f"the halide Thomas solve has one variant, 'hand', not {variant!r}")
    lay = _Layout(order)
    a, b, c, d = (hl.ImageParam(hl.Float(64), 3, n) for n in "abcd")
    i, j, k = lay.i, lay.j, lay.k
    x, y, z = lay.x, lay.y, lay.z
    nk = shape[2]
    fw, sol, out = hl.Func("forward"), hl.Func("solution"), hl.Func("x")
    # forward sweep: (c', d') at k = 0, then k = 1 .. nk-1 from k - 1
    fw[x, y, z] = (lay.at(c, i, j, k) / lay.at(b, i, j, k), lay.at(d, i, j, k) / lay.at(b, i, j, k))
    r = hl.RDom([(1, nk - 1)], "r")
    below = lay.at(fw, i, j, r.x - 1) if order == "F" else fw[r.x - 1, y, z]
    den = lay.at(b, i, j, r.x) - lay.at(a, i, j, r.x) * below[0]
    new = (
        lay.at(c, i, j, r.x) / den,
        (lay.at(d, i, j, r.x) - lay.at(a, i, j, r.x) * below[1]) / den,
    )
    if order == "F":
        fw[x, y, r.x] = new
    else:
        fw[r.x, y, z] = new
    # back substitution: x = d' at k = nk-1, then k = nk-2 .. 0 from k + 1
    sol[x, y, z] = lay.at(fw, i, j, k)[1]
    s = hl.RDom([(0, nk - 1)], "s")
    kk = nk - 2 - s.x
    step = lay.at(fw, i, j, kk)[1] - lay.at(fw, i, j, kk)[0] * lay.at(sol, i, j, kk + 1)
    if order == "F":
        sol[x, y, kk] = step
    else:
        sol[kk, y, z] = step
    out[x, y, z] = sol[x, y, z]
    t = hl.Var("t")
    tile = THOMAS_TILE[order]
    if order == "F":  # columns along x (I, unit stride): vectorize x
        xo, xi = hl.Var("xo"), hl.Var("xi")
        out.split(x, xo, xi, min(tile, shape[0])).reorder(xi, z, xo, y)
        out.fuse(xo, y, t).parallel(t).vectorize(xi, VECTOR, GUARD)
        for func in (fw, sol):
            func.compute_at(out, t).vectorize(x, VECTOR, GUARD)
            func.update(0).reorder(x, r.x if func is fw else s.x).vectorize(x, VECTOR, GUARD)
    else:  # columns along y (J; x is K, unit stride): vectorize y across columns
        yo, yi = hl.Var("yo"), hl.Var("yi")
        out.split(y, yo, yi, min(tile, shape[1])).reorder(x, yi, yo, z)
        out.fuse(yo, z, t).parallel(t).vectorize(x, VECTOR, GUARD)
        for func in (fw, sol):
            func.compute_at(out, t).reorder(y, x, z).vectorize(y, VECTOR, GUARD)
            func.update(0).reorder(y, r.x if func is fw else s.x).vectorize(y, VECTOR, GUARD)
    return out, [a, b, c, d]


PIPELINES = {"hdiff": hdiff, "thomas": thomas}


def build(
    kernel: str, order: str, arrays: dict[str, np.ndarray], variant: str
) -> Callable[[], None]:
    """The call of the compiled pipeline of `kernel` on `arrays` (JIT-compiled now).
    A 2-D (Cell, K) grid is seen as 3-D with the cells where the columns are vectorized."""
    views = []
    for array in arrays.values():
        if array.ndim == 2:  # (Cell, K): C order vectorizes across J, Fortran across I
            array = array[None, :, :] if order == "C" else array[:, None, :]
        views.append(array)
    shape = views[0].shape
    lay = _Layout(order)
    func, params = PIPELINES[kernel](order, shape, variant)
    target = hl.get_host_target()
    callable_ = func.compile_to_callable(params, target)
    buffers = [lay.buffer(v, f"arg{n}") for n, v in enumerate(views)]
    if kernel == "hdiff":  # the output is the interior, two points in from each edge
        interior = views[-1][2:-2, 2:-2, :]
        buffers[-1] = lay.buffer(interior, "out")
        buffers[-1].set_min([0, 2, 2] if order == "C" else [2, 2, 0])
    return lambda: callable_(*buffers)
