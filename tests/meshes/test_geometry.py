"""The geometry: areas add up to the domain, cells and dual cells are closed (the
divergence theorem), normals and signs point the documented way, and the median-dual
gradient (the FVM "nabla") of a linear function is exact."""

from __future__ import annotations

import numpy as np
import pytest

from stencilchain import meshes

from ._support import RECTANGLES, TORI, rectangle, torus


def _extent(mesh: meshes.Mesh) -> tuple[float, float]:
    if mesh.period is not None:
        return mesh.period
    return tuple(mesh.vertex_coords.max(axis=0) - mesh.vertex_coords.min(axis=0))  # type: ignore[return-value]


def _wrap(mesh: meshes.Mesh, delta: np.ndarray) -> np.ndarray:
    if mesh.period is None:
        return delta
    period = np.array(mesh.period)
    return delta - period * np.round(delta / period)


def test_areas_add_up_to_the_domain(mesh: meshes.Mesh) -> None:
    lx, ly = _extent(mesh)
    assert (mesh.cell_areas > 0).all() and (mesh.dual_areas > 0).all()
    assert mesh.cell_areas.sum() == pytest.approx(lx * ly)
    assert mesh.area == pytest.approx(lx * ly)
    assert mesh.dual_areas.sum() == pytest.approx(lx * ly)


@pytest.mark.parametrize("size", TORI + RECTANGLES)
def test_structured_values(size: tuple[int, int, float, float]) -> None:
    nx, ny, dx, dy = size
    for mesh in (torus(size), rectangle(size)) if min(nx, ny) >= 3 else (rectangle(size),):
        assert np.allclose(mesh.cell_areas, dx * dy / 2)
        assert set(np.round(mesh.edge_lengths, 12)) == {
            round(dx, 12),
            round(dy, 12),
            round(float(np.hypot(dx, dy)), 12),
        }
        if mesh.period is not None:  # a third of the six cells around each vertex
            assert np.allclose(mesh.dual_areas, dx * dy)
            assert (mesh.cell_centres >= 0).all() and (mesh.cell_centres < mesh.period).all()


def test_the_divergence_theorem_holds_on_every_cell(mesh: meshes.Mesh) -> None:
    flux = (
        mesh.c2e_signs[:, :, None]
        * mesh.edge_normals[mesh.c2e]
        * mesh.edge_lengths[mesh.c2e][:, :, None]
    )
    assert np.abs(flux.sum(axis=1)).max() < 1e-12


def test_the_divergence_theorem_holds_on_every_inner_dual_cell(mesh: meshes.Mesh) -> None:
    inner = (mesh.v2e >= 0).sum(axis=1) == (mesh.v2c >= 0).sum(axis=1)
    edges = np.maximum(mesh.v2e, 0)
    face = mesh.dual_normals[edges] * mesh.dual_edge_lengths[edges][:, :, None]
    flux = (mesh.v2e_signs[:, :, None] * face).sum(axis=1)
    assert np.abs(flux[inner]).max(initial=0.0) < 1e-12
    if mesh.period is not None:
        assert inner.all()
    elif min(np.ptp(mesh.vertex_coords, axis=0) / mesh.edge_lengths.min()) >= 2:
        assert inner.any()


def test_boundary_dual_cells_close_with_half_boundary_edges() -> None:
    """A boundary vertex's dual cell is closed by the halves of its two boundary edges,
    whose normals point out of the domain."""
    mesh = rectangle((4, 3, 0.5, 0.25))
    face = mesh.dual_normals * mesh.dual_edge_lengths[:, None]
    edges = np.maximum(mesh.v2e, 0)
    flux = (mesh.v2e_signs[:, :, None] * face[edges]).sum(axis=1)
    boundary = np.flatnonzero(mesh.e2c[:, 1] == -1)
    half = mesh.edge_normals[boundary] * (mesh.edge_lengths[boundary] / 2)[:, None]
    for end in (0, 1):
        np.add.at(flux, mesh.e2v[boundary, end], half)
    assert np.abs(flux).max() < 1e-12


def test_normals_tangents_and_signs_point_the_documented_way(mesh: meshes.Mesh) -> None:
    assert np.allclose(np.hypot(*mesh.edge_normals.T), 1)
    assert np.allclose(np.hypot(*mesh.dual_normals.T), 1)
    assert np.allclose((mesh.edge_normals * mesh.edge_tangents).sum(axis=1), 0)
    tangent = _wrap(mesh, mesh.vertex_coords[mesh.e2v[:, 1]] - mesh.vertex_coords[mesh.e2v[:, 0]])
    assert np.allclose(tangent, mesh.edge_tangents * mesh.edge_lengths[:, None])
    # The normal points from E2C[e, 0] to E2C[e, 1], out of the domain at the boundary.
    left = mesh.cell_centres[mesh.e2c[:, 0]]
    right = np.where(
        (mesh.e2c[:, 1] >= 0)[:, None], mesh.cell_centres[mesh.e2c[:, 1]], mesh.edge_centres
    )
    across = _wrap(mesh, right - left)
    assert ((mesh.edge_normals * across).sum(axis=1) > 0).all()
    assert np.allclose(np.hypot(*across.T), mesh.dual_edge_lengths)
    # The dual normal points from E2V[e, 0] to E2V[e, 1].
    assert ((mesh.dual_normals * mesh.edge_tangents).sum(axis=1) > 0).all()
    # Signs: +1 exactly where the cell is E2C[e, 0] (the normal points out of it).
    cells = np.arange(mesh.n_cells)[:, None]
    assert ((mesh.c2e_signs == 1) == (mesh.e2c[mesh.c2e, 0] == cells)).all()
    assert set(np.unique(mesh.c2e_signs)) <= {-1.0, 1.0}
    vertices = np.arange(mesh.n_vertices)[:, None]
    expected = np.where(mesh.v2e < 0, 0.0, np.where(mesh.e2v[mesh.v2e, 0] == vertices, 1.0, -1.0))
    assert (mesh.v2e_signs == expected).all()


def test_the_median_dual_gradient_of_a_linear_function_is_exact(mesh: meshes.Mesh) -> None:
    """The FVM nabla: grad p at v = sum over V2E of sign * S * (p(E2V0) + p(E2V1)) / 2 / dual area,
    with S the dual face's normal times its length. Exact for linear p inside the mesh; on
    a torus p must be periodic, so a constant there."""
    slope = np.array([0.7, -1.3]) if mesh.period is None else np.zeros(2)
    p = mesh.vertex_coords @ slope + 2.0
    edge_value = 0.5 * (p[mesh.e2v[:, 0]] + p[mesh.e2v[:, 1]])
    s = mesh.dual_normals * (mesh.dual_edge_lengths * edge_value)[:, None]
    edges = np.maximum(mesh.v2e, 0)
    gradient = (mesh.v2e_signs[:, :, None] * s[edges]).sum(axis=1) / mesh.dual_areas[:, None]
    inner = (mesh.v2e >= 0).sum(axis=1) == (mesh.v2c >= 0).sum(axis=1)
    assert np.allclose(gradient[inner], slope)


def test_the_geometry_is_the_same_across_the_periodic_seam() -> None:
    """Edges, cells and dual faces that cross the seam measure the same as inside."""
    mesh = meshes.torus(5, 4, dx=0.5, dy=2.0)
    lengths = {round(x, 12) for x in mesh.edge_lengths}
    assert lengths == {0.5, 2.0, round(float(np.hypot(0.5, 2.0)), 12)}
    assert len({round(x, 12) for x in mesh.dual_edge_lengths}) == 3
    assert np.allclose(mesh.cell_areas, 0.5)
