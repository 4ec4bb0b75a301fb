"""The Laplacian of the Laplacian (a 13-point biharmonic stencil) of a 2-D field.

    tmp = lap(f)        on I: [1, end-1), J: [1, end-1)
    out = lap(tmp)      on I: [2, end-2), J: [2, end-2)
    lap(f)[i, j] = -4 f[i, j] + f[i+1, j] + f[i-1, j] + f[i, j+1] + f[i, j-1]

This is the "laplap" stencil of the GT4Py/gridtools tutorials: lap(lap(f)) is the
discrete biharmonic operator (Delta**2 f, times h**4), the core of fourth-order
horizontal diffusion.

Dimensions: I, J (array axes 0, 1).
Field operators: `laplacian` (from stencilchain.examples.laplacian).
Program: `laplap_program(f, tmp, out)`: the chained form, two calls with a temporary
field. The first call writes `tmp` on the interior; the second reads `tmp` at +-1,
so its inferred domain is the region where those reads hit points the first call
wrote: two points in from each edge. (The alternative, one field operator returning
`laplacian(laplacian(f))`, writes the same `out` without the temporary; the chained
form is chosen here because it also checks domain inference across calls.)
"""

from __future__ import annotations

import numpy as np

import stencilchain as sc
from stencilchain.examples.laplacian import Field2D, laplacian

DEFAULT_SHAPE = (64, 64)


@sc.program
def laplap_program(f: Field2D, tmp: Field2D, out: Field2D) -> None:
    laplacian(f, out=tmp)
    laplacian(tmp, out=out)


PROGRAM = laplap_program


def make_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray | float]:
    """`f` random in [0, 1), `tmp` and `out` zeros."""
    return {"f": rng.random(shape), "tmp": np.zeros(shape), "out": np.zeros(shape)}


def _lap_interior(a: np.ndarray) -> np.ndarray:
    """The 5-point Laplacian of `a` at its interior points a[1:-1, 1:-1]."""
    c = a[1:-1, 1:-1]
    return -4.0 * c + a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2]


def reference(f: np.ndarray, tmp: np.ndarray, out: np.ndarray) -> dict[str, np.ndarray]:
    """The expected `tmp` (Laplacian of f on the interior) and `out` (its Laplacian,
    two points in from each edge); everything else unchanged."""
    expected_tmp = tmp.copy()
    expected_tmp[1:-1, 1:-1] = _lap_interior(f)
    expected_out = out.copy()
    expected_out[2:-2, 2:-2] = _lap_interior(expected_tmp[1:-1, 1:-1])
    return {"tmp": expected_tmp, "out": expected_out}
