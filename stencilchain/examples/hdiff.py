"""COSMO fourth-order horizontal diffusion with a flux limiter ("hdiff").

The classic benchmark stencil of GridTools/GT4Py (gt4py's `horizontal_diffusion`
test stencil; Doms & Baldauf, "A Description of the Nonhydrostatic Regional COSMO
Model", Part I, sec. 5.2, monotonic fourth-order diffusion):

    lap[i, j] = 4 in[i, j] - (in[i-1, j] + in[i+1, j] + in[i, j-1] + in[i, j+1])
    flx[i, j] = lap[i+1, j] - lap[i, j]
    flx       = 0 where flx * (in[i+1, j] - in[i, j]) > 0 else flx    (limiter)
    fly[i, j] = lap[i, j+1] - lap[i, j]
    fly       = 0 where fly * (in[i, j+1] - in[i, j]) > 0 else fly    (limiter)
    out[i, j] = in[i, j] - coeff[i, j] * (flx[i, j] - flx[i-1, j] + fly[i, j] - fly[i, j-1])

independently on every level k.

Dimensions: I, J, K (array axes 0, 1, 2); the stencil is horizontal (no K shifts).
Field operators: `hdiff_lap`, `hdiff_flux_x` and `hdiff_flux_y` (each calls
`hdiff_lap` and limits with sc.where), `hdiff` (calls both fluxes and reads them
shifted by -1).
Program: `hdiff_program(inp, coeff, out)`: one call with an inferred domain,
I: [2, end-2), J: [2, end-2), K: all levels.

`coeff` is a 3-D field [I, J, K], as in the GridTools benchmark; a 2-D [I, J]
coefficient would be broadcast along K (docs/dsl.md, "Broadcasting").
"""

from __future__ import annotations

import numpy as np

import stencilchain as sc

I = sc.Dimension("I")
J = sc.Dimension("J")
K = sc.Dimension("K")

Field3D = sc.Field[[I, J, K], sc.float64]

DEFAULT_SHAPE = (32, 32, 8)


@sc.field_operator
def hdiff_lap(inp: Field3D) -> Field3D:
    return 4.0 * inp - (inp(I - 1) + inp(I + 1) + inp(J - 1) + inp(J + 1))


@sc.field_operator
def hdiff_flux_x(inp: Field3D) -> Field3D:
    lap = hdiff_lap(inp)
    flx = lap(I + 1) - lap
    return sc.where(flx * (inp(I + 1) - inp) > 0.0, 0.0, flx)


@sc.field_operator
def hdiff_flux_y(inp: Field3D) -> Field3D:
    lap = hdiff_lap(inp)
    fly = lap(J + 1) - lap
    return sc.where(fly * (inp(J + 1) - inp) > 0.0, 0.0, fly)


@sc.field_operator
def hdiff(inp: Field3D, coeff: Field3D) -> Field3D:
    flx = hdiff_flux_x(inp)
    fly = hdiff_flux_y(inp)
    return inp - coeff * (flx - flx(I - 1) + fly - fly(J - 1))


@sc.program
def hdiff_program(inp: Field3D, coeff: Field3D, out: Field3D) -> None:
    hdiff(inp, coeff, out=out)


PROGRAM = hdiff_program


def make_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray | float]:
    """`inp` random in [0, 1), `coeff` random in [0, 0.025) (a stable diffusion
    coefficient for the fourth-order operator), `out` zeros."""
    return {
        "inp": rng.random(shape),
        "coeff": 0.025 * rng.random(shape),
        "out": np.zeros(shape),
    }


def reference(inp: np.ndarray, coeff: np.ndarray, out: np.ndarray) -> dict[str, np.ndarray]:
    """The expected `out`: hdiff two points in from each horizontal edge, unchanged elsewhere.

    Intermediates are NaN where they are undefined, so a misplaced index shows up as NaN.
    """
    lap = np.full(inp.shape, np.nan)
    lap[1:-1, 1:-1] = 4.0 * inp[1:-1, 1:-1] - (
        inp[:-2, 1:-1] + inp[2:, 1:-1] + inp[1:-1, :-2] + inp[1:-1, 2:]
    )
    flx = np.full(inp.shape, np.nan)
    fly = np.full(inp.shape, np.nan)
    with np.errstate(invalid="ignore"):
        res = lap[1:] - lap[:-1]
        flx[:-1] = np.where(res * (inp[1:] - inp[:-1]) > 0.0, 0.0, res)
        res = lap[:, 1:] - lap[:, :-1]
        fly[:, :-1] = np.where(res * (inp[:, 1:] - inp[:, :-1]) > 0.0, 0.0, res)
    expected = out.copy()
    c = (slice(2, -2), slice(2, -2))
    expected[c] = inp[c] - coeff[c] * (flx[c] - flx[1:-3, 2:-2] + fly[c] - fly[2:-2, 1:-3])
    return {"out": expected}
