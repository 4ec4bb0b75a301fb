"""Small real triangle meshes for examples, tests and benchmarks: neighbour tables and
the geometry a finite-volume operator needs. The vertical (K) stays structured: a field
on cells is an array of shape (n_cells, n_levels), and nothing here depends on K.

    from stencilchain import meshes
    mesh = meshes.torus(8, 6)              # periodic: every entity has full neighbourhoods
    box = meshes.rectangle(8, 6)           # bounded: -1 for missing neighbours
    c2e = mesh.table("C2E")                # (n_cells, 3) int32; mesh.with_index_dtype(np.int64)

Tables are integer arrays of shape (n_sources, max_neighbours) of target indices, with -1
for a missing neighbour (always after the present ones in a row):

- C2V (cells, 3): the cell's vertices, counter-clockwise.
- C2E (cells, 3): the cell's edges; C2E[c, k] joins C2V[c, k] and C2V[c, (k + 1) % 3].
- E2V (edges, 2): the edge's vertices. The edge points from E2V[e, 0] to E2V[e, 1].
- E2C (edges, 2): E2C[e, 0] is the cell on the left of the edge, which runs along it
  from E2V[e, 0] to E2V[e, 1] when walking its own vertices counter-clockwise;
  E2C[e, 1] the cell on the right, or -1 at the boundary (a boundary edge is oriented
  so that its one cell is on its left: counter-clockwise around the domain).
- C2E2C (cells, 3): C2E2C[c, k] is the cell across edge C2E[c, k], or -1 at the boundary.
- E2C2V (edges, 4): the edge's two vertices (E2V order), then the vertex of E2C[e, 0]
  opposite the edge, then that of E2C[e, 1] (-1 where that cell is missing).
- V2E (vertices, 6 on the built meshes): the vertex's edges counter-clockwise, -1 padded.
  On the boundary the list starts with the boundary edge whose cell follows it
  counter-clockwise and ends with the other boundary edge.
- V2C (vertices, 6 on the built meshes): V2C[v, k] is the cell between V2E[v, k] and
  V2E[v, k + 1] (V2E[v, 0] after the last edge of an interior vertex), -1 padded.

Geometry (float64 attributes of the `Mesh`): `vertex_coords`; `cell_centres` (centroids)
and `cell_areas`; `edge_centres` (midpoints), `edge_lengths`, unit `edge_tangents` (from
E2V[e, 0] to E2V[e, 1]) and unit `edge_normals` (the tangent turned clockwise: from
E2C[e, 0] to E2C[e, 1], outward at the boundary). The dual mesh is the median dual (cell
centres joined through edge midpoints): `dual_areas` (a third of each cell around a
vertex), and per edge the dual face from the centre of E2C[e, 0] through the midpoint to
the centre of E2C[e, 1] (or ending at the midpoint on the boundary), with its length
`dual_edge_lengths` (|centre1 - centre0|) and unit normal `dual_normals` (from E2V[e, 0]
towards E2V[e, 1]). Signs: `c2e_signs[c, k]` is +1 where the edge's normal points out of
cell c (c is E2C[e, 0]), else -1; `v2e_signs[v, k]` is +1 where the edge's dual normal
points out of v's dual cell (v is E2V[e, 0]), -1 where it points in, 0 for padding. Cells
then satisfy the divergence theorem: the sum over k of c2e_signs * edge_normals *
edge_lengths is zero, and so do the dual cells of inner vertices.

On a torus the coordinates lie in [0, Lx) x [0, Ly); every difference of two positions
(edge vectors, cell corners, centre to centre) is taken the short way round (the
minimal image), which is unambiguous because a torus has at least 3 cells each way.
"""

from __future__ import annotations

from stencilchain.meshes.files import read_mesh, write_mesh
from stencilchain.meshes.mesh import TABLES, Mesh, MeshError
from stencilchain.meshes.rectangle import rectangle
from stencilchain.meshes.torus import torus

__all__ = ["TABLES", "Mesh", "MeshError", "read_mesh", "rectangle", "torus", "write_mesh"]
