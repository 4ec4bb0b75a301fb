"""`torus(nx, ny)`: a periodic triangulated torus, every entity with full neighbourhoods.

Vertex (i, j) sits at (i * dx, j * dy) and has index j * nx + i. The quad whose lower
left corner is vertex q = (i, j) owns edges 3q (to (i+1, j)), 3q + 1 (to (i, j+1)) and
3q + 2 (the diagonal to (i+1, j+1)), and cells 2q (below the diagonal: (i, j), (i+1, j),
(i+1, j+1)) and 2q + 1 (above it: (i, j), (i+1, j+1), (i, j+1)); indices wrap at nx and
ny. So: nx * ny vertices, 3 * nx * ny edges, 2 * nx * ny cells, V - E + F = 0, every
vertex has 6 edges and 6 cells, and each edge points along +x, +y or +x+y.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from stencilchain.meshes._connectivity import complete_tables
from stencilchain.meshes._sizes import check_size, check_spacing
from stencilchain.meshes.mesh import Mesh, resolve_index_dtype

MIN_SIZE = 3


def torus(
    nx: int,
    ny: int,
    *,
    dx: float = 1.0,
    dy: float = 1.0,
    index_dtype: npt.DTypeLike = np.int32,
) -> Mesh:
    """The periodic triangulated torus of nx x ny quads of dx x dy, each cut into two
    triangles by its diagonal; domain [0, nx * dx) x [0, ny * dy). nx, ny >= 3: with 2, two
    edges would join the same two vertices, with 1 an edge would join a vertex to itself."""
    check_size(
        "torus", nx, ny, MIN_SIZE,
        "a torus needs at least 3 quads each way (with fewer, the mesh wraps onto itself: "
        "two edges join the same vertices, or an edge a vertex to itself)",
    )  # fmt: skip
    check_spacing("torus", dx, dy)
    dtype = resolve_index_dtype(index_dtype)
    i, j = (a.ravel() for a in np.meshgrid(np.arange(nx), np.arange(ny)))
    q = j * nx + i
    right = j * nx + (i + 1) % nx
    up = ((j + 1) % ny) * nx + i
    up_right = ((j + 1) % ny) * nx + (i + 1) % nx
    e2v = np.stack([q, right, q, up, q, up_right], axis=1).reshape(-1, 2)
    c2v = np.stack([q, right, up_right, q, up_right, up], axis=1).reshape(-1, 3)
    c2e = np.stack([3 * q, 3 * right + 1, 3 * q + 2, 3 * q + 2, 3 * up, 3 * q + 1], axis=1)
    coords = np.stack([i * float(dx), j * float(dy)], axis=1)
    period = (nx * float(dx), ny * float(dy))
    tables = complete_tables(c2v, c2e.reshape(-1, 3), e2v, coords, period)
    return Mesh.from_tables(
        tables, coords, period=period, name=f"torus {nx}x{ny}", index_dtype=dtype, validate=False
    )
