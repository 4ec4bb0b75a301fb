"""Example stencil programs of stencilchain, each with inputs and an independent NumPy reference.

Every module here exposes:

- `PROGRAM`: the `@sc.program` it defines,
- `DEFAULT_SHAPE`: an array shape to run it on (one entry per dimension),
- `make_inputs(shape, rng)`: the program's arguments in parameter order, keyed by
  parameter name (output arrays zero-filled, scalars as Python floats),
- `reference(**inputs)`: the expected content of every output array, computed with
  NumPy slicing alone (untouched regions keep their initial value).

A demo runner iterates over `ALL_EXAMPLES`:

    for module in ALL_EXAMPLES:
        inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(0))
        module.PROGRAM(*inputs.values())
"""

from __future__ import annotations

from types import ModuleType

from stencilchain.examples import (
    hdiff,
    hdiff_staged,
    laplacian,
    laplap,
    sedimentation,
    tridiagonal,
    tuple_chain,
    upwind,
    vertical_advection,
)

ALL_EXAMPLES: list[ModuleType] = [
    laplacian,
    laplap,
    hdiff,
    hdiff_staged,
    upwind,
    tuple_chain,
    tridiagonal,
    sedimentation,
    vertical_advection,
]

__all__ = [
    "ALL_EXAMPLES",
    "hdiff",
    "hdiff_staged",
    "laplacian",
    "laplap",
    "sedimentation",
    "tridiagonal",
    "tuple_chain",
    "upwind",
    "vertical_advection",
]
