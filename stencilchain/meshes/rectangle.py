"""`rectangle(nx, ny)`: a bounded triangulated rectangle, with -1 for the neighbours that
are missing at its boundary.

Vertex (i, j), 0 <= i <= nx, 0 <= j <= ny, sits at (i * dx, j * dy) and has index
j * (nx + 1) + i. Edges come in three blocks: the nx * (ny + 1) along x (from (i, j),
index j * nx + i), then the (nx + 1) * ny along y (from (i, j), j * (nx + 1) + i), then the
nx * ny diagonals (from (i, j) to (i+1, j+1), j * nx + i); boundary edges are turned to
run counter-clockwise around the domain. Quad q = j * nx + i has cells 2q (below its
diagonal) and 2q + 1 (above it), as on the torus. V - E + F = 1.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from stencilchain.meshes._connectivity import complete_tables
from stencilchain.meshes._sizes import check_size, check_spacing
from stencilchain.meshes.mesh import Mesh, resolve_index_dtype

MIN_SIZE = 1


def rectangle(
    nx: int,
    ny: int,
    *,
    dx: float = 1.0,
    dy: float = 1.0,
    index_dtype: npt.DTypeLike = np.int32,
) -> Mesh:
    """The bounded triangulated rectangle [0, nx * dx] x [0, ny * dy] of nx x ny quads,
    each cut into two triangles by its diagonal; nx, ny >= 1."""
    check_size("rectangle", nx, ny, MIN_SIZE, "a rectangle needs at least 1 quad each way")
    check_spacing("rectangle", dx, dy)
    dtype = resolve_index_dtype(index_dtype)
    n_along_x, n_along_y = nx * (ny + 1), (nx + 1) * ny

    def vertex(i: npt.NDArray[np.int64], j: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        return j * (nx + 1) + i

    # Edges along x, along y, and diagonals, each from its vertex (i, j).
    ix, jx = (a.ravel() for a in np.meshgrid(np.arange(nx), np.arange(ny + 1)))
    iy, jy = (a.ravel() for a in np.meshgrid(np.arange(nx + 1), np.arange(ny)))
    i, j = (a.ravel() for a in np.meshgrid(np.arange(nx), np.arange(ny)))
    e2v = np.concatenate(
        [
            np.stack([vertex(ix, jx), vertex(ix + 1, jx)], axis=1),
            np.stack([vertex(iy, jy), vertex(iy, jy + 1)], axis=1),
            np.stack([vertex(i, j), vertex(i + 1, j + 1)], axis=1),
        ]
    )
    along_x = j * nx + i  # the edge along x from (i, j); from (i, j+1) is + nx
    along_y = n_along_x + j * (nx + 1) + i  # the edge along y from (i, j)
    diagonal = n_along_x + n_along_y + j * nx + i
    corner, right = vertex(i, j), vertex(i + 1, j)
    up, up_right = vertex(i, j + 1), vertex(i + 1, j + 1)
    c2v = np.stack([corner, right, up_right, corner, up_right, up], axis=1).reshape(-1, 3)
    c2e = np.stack(
        [along_x, along_y + 1, diagonal, diagonal, along_x + nx, along_y], axis=1
    ).reshape(-1, 3)
    iv, jv = (a.ravel() for a in np.meshgrid(np.arange(nx + 1), np.arange(ny + 1)))
    coords = np.stack([iv * float(dx), jv * float(dy)], axis=1)
    tables = complete_tables(c2v, c2e, e2v, coords, None)
    return Mesh.from_tables(
        tables, coords, name=f"rectangle {nx}x{ny}", index_dtype=dtype, validate=False
    )
