"""Programs on a grid split over MPI ranks (the `mpi` extra: `pip install 'stencilchain[mpi]'`).

    from stencilchain.distributed import Decomposition, exchange
    grid = Decomposition.create({I: 512, J: 512, K: 80}, periodic=True)
    f = grid.allocate((I, J, K), halo=2)
    grid.scatter(f, initial)            # the global array, given on rank 0
    exchange(f)                         # halos from the neighbouring ranks
    lap(f.data, out=g.data, ...)        # any toolchain, on the local arrays

On an unstructured mesh (stencilchain.meshes), cells are partitioned over the ranks:

    dec = MeshDecomposition.create(mesh, layers=layers_of(program))
    q = dec.allocate((Cell, K), sizes={K: 80})
    DistributedProgram(program, toolchain, dec)(q, dec.table("C2E2C"), ...)

Importing this package does not import mpi4py; the first call that needs it raises
MissingExtraError if it is not installed.
"""

from __future__ import annotations

from stencilchain.distributed.compile import compile_for_job
from stencilchain.distributed.decomposition import Decomposition
from stencilchain.distributed.field import DistributedField
from stencilchain.distributed.halo import exchange
from stencilchain.distributed.mesh_decomposition import MeshDecomposition, MeshField
from stencilchain.distributed.program import DistributedProgram, halo_of, layers_of

__all__ = [
    "Decomposition",
    "DistributedField",
    "DistributedProgram",
    "MeshDecomposition",
    "MeshField",
    "compile_for_job",
    "exchange",
    "halo_of",
    "layers_of",
]
