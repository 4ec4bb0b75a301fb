"""Devito's hdiff: the COSMO horizontal diffusion (stencilchain/examples/hdiff.py) with its
flux limiter, written with Devito's `Eq` and `Operator` and compiled in its advanced mode
(`opt="advanced"`: CSE, factorization, cross-iteration redundancy elimination, blocking,
SIMD) for OpenMP. Runs in the Devito peer's own interpreter (benchmarks/peers/worker.py),
never in the project's; the harness and this module set DEVITO_LANGUAGE=openmp and
DEVITO_ARCH=gcc when they are unset (and apply them to Devito's configuration), and the
threads are OMP_NUM_THREADS.

Devito has no Thomas solve here (its equations are explicit updates: a recurrence along a
dimension is not what it is for), so the Devito peer has hdiff only.

- Layouts: a Devito Function's data is always row-major over its Grid's dimensions, so the
  Fortran layout is a grid whose dimensions are reversed, (K, J, I), with the logical
  (i, j, k) placed on them (as Halide sees a C-order array reversed); its data is the
  Fortran-order (I, J, K) array transposed, the same bytes.
- The equation is the one update of `out` over the interior (a SubDomain two points in
  from each horizontal edge, all levels), the Laplacian and both limited fluxes inlined,
  left to Devito's passes (for this equation Devito 4.8 factorizes the Laplacians'
  differences and emits one fused loop nest, parallel over the outer dimension and
  `omp simd` along the unit-stride one, with no blocking and no CIRE temporaries). The
  limiter is Devito's C conditional expression (`_Select` below).
- Devito owns its arrays (with halos of 2 and its own padding): the build copies the
  inputs in once, untimed, and puts Devito's views of its Functions' data in the worker's
  `arrays`, so the worker's check reads what Devito wrote.
- Variants: `advanced` calls `Operator.apply`, what a Devito user calls, with its
  argument processing in Python (about 0.75 ms of CPU per call on an 8x8x2 grid here);
  `advanced-cfunction` calls the compiled function with the arguments `apply` would pass,
  prepared once: Devito's kernel alone.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

os.environ.setdefault("DEVITO_LANGUAGE", "openmp")
os.environ.setdefault("DEVITO_ARCH", "gcc")
os.environ.setdefault("DEVITO_LOGGING", "WARNING")

import devito
import numpy as np
import sympy
from devito.symbolics import InlineIf

# set here too: the worker imports devito (for its version) before this module, and Devito
# reads its environment variables at its own import
devito.configuration["log-level"] = os.environ["DEVITO_LOGGING"]
devito.configuration["compiler"] = os.environ["DEVITO_ARCH"]
devito.configuration["language"] = os.environ["DEVITO_LANGUAGE"]
HALO = 2  # hdiff reaches two points out in I and J
VARIANTS = ("advanced", "advanced-cfunction")


class _Select(InlineIf):  # type: ignore[misc]
    """Devito's C conditional expression, `(cond) ? a : b`, as the limiter. Devito 4.8's
    lowering rebuilds every node whose arguments it rewrote with `evaluate=False`
    (symbolics.manipulation.reuse_if_untouched), which neither sympy's `Piecewise` (its
    `ExprCondPair`) nor `InlineIf` accept: this one does, and drops it."""

    def __new__(cls, cond: Any, true_expr: Any, false_expr: Any, evaluate: bool = False) -> Any:
        return super().__new__(cls, cond, true_expr, false_expr)


class _Interior(devito.SubDomain):  # type: ignore[misc]
    """Two points in from each horizontal edge; all levels."""

    name = "interior"

    def __init__(self, horizontal: tuple[int, ...], **kwargs: Any) -> None:
        self.horizontal = horizontal  # the grid's axes of I and J
        super().__init__(**kwargs)

    def define(self, dimensions: Any) -> dict[Any, Any]:
        return {
            d: ("middle", HALO, HALO) if axis in self.horizontal else d
            for axis, d in enumerate(dimensions)
        }


def hdiff(
    order: str, arrays: dict[str, np.ndarray], variant: str
) -> tuple[devito.Operator, dict[str, np.ndarray]]:
    """The operator of hdiff on Functions shaped like `arrays` in `order`, and the views
    of those Functions' data as (I, J, K) arrays."""
    if variant not in VARIANTS:
        raise ValueError(f"the devito hdiff variants are {', '.join(VARIANTS)}, not {variant!r}")
    shape = arrays["inp"].shape
    reverse = order == "F"  # Fortran order: the grid's dimensions are (K, J, I)
    grid_shape = tuple(reversed(shape)) if reverse else shape
    axes = {"i": 2, "j": 1, "k": 0} if reverse else {"i": 0, "j": 1, "k": 2}
    grid = devito.Grid(shape=grid_shape, dtype=np.float64)
    interior = _Interior((axes["i"], axes["j"]), grid=grid)
    dims = grid.dimensions
    i, j, k = (dims[axes[name]] for name in "ijk")
    inp, coeff, out = (
        devito.Function(name=name, grid=grid, space_order=HALO, dtype=np.float64)
        for name in ("inp", "coeff", "out")
    )

    def at(f: devito.Function, di: int = 0, dj: int = 0) -> Any:
        index = {axes["i"]: i + di, axes["j"]: j + dj, axes["k"]: k}
        return f[tuple(index[axis] for axis in range(3))]

    def lap(di: int, dj: int) -> Any:
        return 4.0 * at(inp, di, dj) - (
            at(inp, di - 1, dj) + at(inp, di + 1, dj) + at(inp, di, dj - 1) + at(inp, di, dj + 1)
        )

    def limited(res: Any, diff: Any) -> Any:
        return _Select(res * diff > 0.0, sympy.Float(0.0), res)

    def flx(di: int) -> Any:  # the limited x-flux at (i + di, j)
        return limited(lap(di + 1, 0) - lap(di, 0), at(inp, di + 1) - at(inp, di))

    def fly(dj: int) -> Any:  # the limited y-flux at (i, j + dj)
        return limited(lap(0, dj + 1) - lap(0, dj), at(inp, 0, dj + 1) - at(inp, 0, dj))

    update = at(inp) - at(coeff) * (flx(0) - flx(-1) + fly(0) - fly(-1))
    operator = devito.Operator(
        [devito.Eq(at(out), update, subdomain=interior)], opt="advanced", name="hdiff"
    )
    views = {}
    for name, function in (("inp", inp), ("coeff", coeff), ("out", out)):
        data = np.asarray(function.data)  # the domain's points, Devito's memory
        view = data.T if reverse else data
        view[...] = arrays[name]
        views[name] = view
    return operator, views


def build(
    kernel: str, order: str, arrays: dict[str, np.ndarray], variant: str
) -> Callable[[], None]:
    """The call of Devito's operator of `kernel` (JIT-compiled now); `arrays` then holds
    views of Devito's Functions' data (see the module's docstring)."""
    if kernel != "hdiff":
        raise ValueError(f"the devito peer has hdiff only, not {kernel!r}")
    operator, views = hdiff(order, arrays, variant)
    arrays.update(views)
    if variant == "advanced":

        def call() -> None:
            operator.apply()

        return call
    arguments = operator.arguments()  # kept alive: the values point into it
    values = [arguments[p.name] for p in operator.parameters]
    cfunction = operator.cfunction  # compiles now

    def call_kernel() -> None:
        status = cfunction(*values)
        if status != 0:
            raise RuntimeError(f"Devito's hdiff returned {status}")

    return call_kernel
