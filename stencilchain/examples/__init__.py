"""Example stencil programs of stencilchain, each with inputs and an independent NumPy reference.

Every module here exposes:

- `PROGRAM`: the `@sc.program` it defines,
- `DEFAULT_SHAPE`: an array shape to run it on (one entry per dimension),
- `make_inputs(shape, rng)`: the program's arguments in parameter order, keyed by
  parameter name (output arrays zero-filled, scalars as Python floats),
- `reference(**inputs)`: the expected content of every output array, computed with
  NumPy slicing alone (untouched regions keep their initial value).

The mesh examples (`MESH_EXAMPLES`: `nabla`, `mesh_diffusion`, `mesh_column`) build their
mesh in `make_inputs`: their `shape` is `(nx, ny)` of the mesh's quads, then the number of
levels where the program has K, and their arguments include the mesh's neighbour tables
(int32) and its geometry, so their arrays have the sizes of the mesh's cells, edges or
vertices (`uses_mesh` tells these examples apart).

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
    mesh_column,
    mesh_diffusion,
    nabla,
    sedimentation,
    tridiagonal,
    tuple_chain,
    upwind,
    vertical_advection,
)
from stencilchain.program import ir

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
    nabla,
    mesh_diffusion,
    mesh_column,
]
MESH_EXAMPLES: list[ModuleType] = [nabla, mesh_diffusion, mesh_column]


def uses_mesh(module: ModuleType) -> bool:
    """Whether the example's program reads through neighbour tables (has a table parameter)."""
    return any(isinstance(p.type, ir.TableType) for p in module.PROGRAM.ir.params)


__all__ = [
    "ALL_EXAMPLES",
    "MESH_EXAMPLES",
    "hdiff",
    "hdiff_staged",
    "laplacian",
    "laplap",
    "mesh_column",
    "mesh_diffusion",
    "nabla",
    "sedimentation",
    "tridiagonal",
    "tuple_chain",
    "upwind",
    "uses_mesh",
    "vertical_advection",
]
