"""COSMO horizontal diffusion ("hdiff") in stages, through program-local temporaries.

The same operator as `stencilchain.examples.hdiff`, written the way the stencil is
usually staged (GT4Py's `horizontal_diffusion` with its `lap`, `flx`, `fly` stages):
each stage is one call whose result is a temporary, made by calling the field operator
without `out=`, allocated by the backend and read by the next stages.

    lap = hdiff_lap(inp)                     on I: [1, end-1), J: [1, end-1)
    flx = limited_flux_x(lap, inp)           on I: [1, end-2), J: [1, end-1)
    fly = limited_flux_y(lap, inp)           on I: [1, end-1), J: [1, end-2)
    hdiff_apply(inp, coeff, flx, fly, out)   on I: [2, end-2), J: [2, end-2)

(every domain inferred from where the temporaries it reads hold values). The one-call
form in `hdiff` recomputes the Laplacian at each point that needs it (five times per
point); this form computes each stage once and streams it through memory instead. On
the DaCe toolchain with `external_workspace` on, the three temporaries live in a
buffer that the caller provides (`workspace_size` / `set_workspace`).

Dimensions: I, J, K (array axes 0, 1, 2). Program: `hdiff_staged_program(inp, coeff,
out)`; its reference is `hdiff.reference`.
"""

from __future__ import annotations

import numpy as np

import stencilchain as sc
from stencilchain.examples.hdiff import DEFAULT_SHAPE, Field3D, I, J, hdiff_lap
from stencilchain.examples.hdiff import make_inputs as make_inputs
from stencilchain.examples.hdiff import reference as hdiff_reference


@sc.field_operator
def limited_flux_x(lap: Field3D, inp: Field3D) -> Field3D:
    flx = lap(I + 1) - lap
    return sc.where(flx * (inp(I + 1) - inp) > 0.0, 0.0, flx)


@sc.field_operator
def limited_flux_y(lap: Field3D, inp: Field3D) -> Field3D:
    fly = lap(J + 1) - lap
    return sc.where(fly * (inp(J + 1) - inp) > 0.0, 0.0, fly)


@sc.field_operator
def hdiff_apply(inp: Field3D, coeff: Field3D, flx: Field3D, fly: Field3D) -> Field3D:
    return inp - coeff * (flx - flx(I - 1) + fly - fly(J - 1))


@sc.program
def hdiff_staged_program(inp: Field3D, coeff: Field3D, out: Field3D) -> None:
    lap = hdiff_lap(inp)
    flx = limited_flux_x(lap, inp)
    fly = limited_flux_y(lap, inp)
    hdiff_apply(inp, coeff, flx, fly, out=out)


PROGRAM = hdiff_staged_program

__all__ = ["DEFAULT_SHAPE", "PROGRAM", "make_inputs", "reference"]


def reference(inp: np.ndarray, coeff: np.ndarray, out: np.ndarray) -> dict[str, np.ndarray]:
    """The expected `out`: the same as the one-call hdiff's."""
    return hdiff_reference(inp, coeff, out)
