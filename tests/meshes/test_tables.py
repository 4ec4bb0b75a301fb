"""The neighbour tables agree with each other, with the counts and with the documented
orderings, checked here independently of `Mesh.validate`."""

from __future__ import annotations

import numpy as np
import pytest

from stencilchain import meshes

from ._support import RECTANGLES, TORI, rectangle, row_set, torus


def test_validate_accepts_every_built_mesh(mesh: meshes.Mesh) -> None:
    mesh.validate()


def test_shapes_and_counts(mesh: meshes.Mesh) -> None:
    nc, ne, nv = mesh.n_cells, mesh.n_edges, mesh.n_vertices
    widths = {"C2E": 3, "E2C": 2, "E2V": 2, "V2E": 6, "C2V": 3, "V2C": 6, "E2C2V": 4, "C2E2C": 3}
    rows = {"C": nc, "E": ne, "V": nv}
    for name in meshes.TABLES:
        assert mesh.table(name).shape == (rows[name[0]], widths[name]), name
        assert mesh.table(name).dtype == np.int32, name


@pytest.mark.parametrize("size", TORI)
def test_torus_counts_euler_and_full_neighbourhoods(size: tuple[int, int, float, float]) -> None:
    nx, ny = size[:2]
    mesh = torus(size)
    assert (mesh.n_vertices, mesh.n_edges, mesh.n_cells) == (nx * ny, 3 * nx * ny, 2 * nx * ny)
    assert mesh.n_vertices - mesh.n_edges + mesh.n_cells == 0
    for name, table in mesh.tables.items():
        assert (table >= 0).all(), f"{name} has a -1 on a torus"
    assert (mesh.v2e_signs != 0).all()


@pytest.mark.parametrize("size", RECTANGLES)
def test_rectangle_counts_euler_and_boundary(size: tuple[int, int, float, float]) -> None:
    nx, ny, dx, dy = size
    mesh = rectangle(size)
    edges = nx * (ny + 1) + (nx + 1) * ny + nx * ny
    assert (mesh.n_vertices, mesh.n_edges, mesh.n_cells) == (
        (nx + 1) * (ny + 1),
        edges,
        2 * nx * ny,
    )
    assert mesh.n_vertices - mesh.n_edges + mesh.n_cells == 1
    # Boundary edges: exactly one cell, and they are the edges on the rectangle's sides.
    one_cell = mesh.e2c[:, 1] == -1
    assert (mesh.e2c[:, 0] >= 0).all()
    mid = mesh.edge_centres
    on_side = (
        np.isclose(mid[:, 0], 0) | np.isclose(mid[:, 0], nx * dx)
        | np.isclose(mid[:, 1], 0) | np.isclose(mid[:, 1], ny * dy)
    )  # fmt: skip
    assert (one_cell == on_side).all()
    assert one_cell.sum() == 2 * (nx + ny)
    assert (mesh.c2e2c == -1).sum() == one_cell.sum()
    assert ((mesh.e2c2v[:, 3] == -1) == one_cell).all()
    assert (mesh.e2c2v[:, :3] >= 0).all()


def test_every_edge_of_a_cell_lists_the_cell(mesh: meshes.Mesh) -> None:
    for c in range(mesh.n_cells):
        for e in mesh.c2e[c]:
            assert c in mesh.e2c[e], (c, e)
    for e in range(mesh.n_edges):
        for c in mesh.e2c[e]:
            if c >= 0:
                assert e in mesh.c2e[c], (e, c)
        assert mesh.e2c[e, 0] != mesh.e2c[e, 1]


def test_e2v_and_c2v_agree(mesh: meshes.Mesh) -> None:
    for c in range(mesh.n_cells):
        assert len(set(mesh.c2v[c].tolist())) == 3
        for k in range(3):
            ends = {int(mesh.c2v[c, k]), int(mesh.c2v[c, (k + 1) % 3])}
            assert set(mesh.e2v[mesh.c2e[c, k]].tolist()) == ends, (c, k)


def test_v2e_and_v2c_invert_e2v_and_c2v(mesh: meshes.Mesh) -> None:
    edges_of: dict[int, set[int]] = {v: set() for v in range(mesh.n_vertices)}
    for e, (a, b) in enumerate(mesh.e2v.tolist()):
        edges_of[a].add(e)
        edges_of[b].add(e)
    cells_of: dict[int, set[int]] = {v: set() for v in range(mesh.n_vertices)}
    for c, row in enumerate(mesh.c2v.tolist()):
        for v in row:
            cells_of[v].add(c)
    for v in range(mesh.n_vertices):
        present_e = mesh.v2e[v][mesh.v2e[v] >= 0]
        present_c = mesh.v2c[v][mesh.v2c[v] >= 0]
        assert len(present_e) == len(edges_of[v]) and row_set(mesh.v2e[v]) == edges_of[v]
        assert len(present_c) == len(cells_of[v]) and row_set(mesh.v2c[v]) == cells_of[v]
        # -1 only after the neighbours
        assert (mesh.v2e[v][len(present_e) :] == -1).all()
        assert (mesh.v2c[v][len(present_c) :] == -1).all()


def test_c2e2c_is_symmetric_across_the_same_edge(mesh: meshes.Mesh) -> None:
    for c in range(mesh.n_cells):
        for k in range(3):
            d, e = int(mesh.c2e2c[c, k]), int(mesh.c2e[c, k])
            assert set(mesh.e2c[e].tolist()) == {c, d}
            if d >= 0:
                back = list(mesh.c2e2c[d]).index(c)
                assert mesh.c2e[d, back] == e


def test_e2c2v_lists_the_edge_then_the_opposite_vertices(mesh: meshes.Mesh) -> None:
    for e in range(mesh.n_edges):
        row = mesh.e2c2v[e].tolist()
        assert row[:2] == mesh.e2v[e].tolist()
        for slot, c in enumerate(mesh.e2c[e].tolist()):
            if c < 0:
                assert row[2 + slot] == -1
            else:
                (opposite,) = set(mesh.c2v[c].tolist()) - set(row[:2])
                assert row[2 + slot] == opposite


def _direction(mesh: meshes.Mesh, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    delta = mesh.vertex_coords[b] - mesh.vertex_coords[a]
    if mesh.period is not None:
        delta = delta - np.array(mesh.period) * np.round(delta / np.array(mesh.period))
    return delta


def test_orderings_are_counter_clockwise(mesh: meshes.Mesh) -> None:
    # C2V: positive signed area.
    p = [_direction(mesh, mesh.c2v[:, 0], mesh.c2v[:, k]) for k in (1, 2)]
    assert (p[0][:, 0] * p[1][:, 1] - p[0][:, 1] * p[1][:, 0] > 0).all()
    # E2C[e, 0] on the left of E2V[e, 0] -> E2V[e, 1], E2C[e, 1] on the right.
    t = _direction(mesh, mesh.e2v[:, 0], mesh.e2v[:, 1])
    for slot, sign in ((0, 1), (1, -1)):
        has = mesh.e2c[:, slot] >= 0
        opposite = _direction(mesh, mesh.e2v[has, 0], mesh.e2c2v[has, 2 + slot])
        cross = t[has, 0] * opposite[:, 1] - t[has, 1] * opposite[:, 0]
        assert (sign * cross > 0).all()
    # V2E: the edges' directions turn counter-clockwise, by less than a full turn.
    for v in range(mesh.n_vertices):
        edges = mesh.v2e[v][mesh.v2e[v] >= 0]
        others = np.where(mesh.e2v[edges, 0] == v, mesh.e2v[edges, 1], mesh.e2v[edges, 0])
        d = _direction(mesh, np.full(len(edges), v), others)
        angles = np.unwrap(np.arctan2(d[:, 1], d[:, 0]))
        assert (np.diff(angles) > 0).all() and angles[-1] - angles[0] < 2 * np.pi, v
        # V2C[v, k] has V2E[v, k] and V2E[v, k + 1] (cyclically) among its edges.
        cells = mesh.v2c[v][mesh.v2c[v] >= 0]
        for k, c in enumerate(cells):
            following = edges[(k + 1) % len(edges)]
            assert {int(edges[k]), int(following)} <= set(mesh.c2e[c].tolist()), (v, k)


def test_rectangle_boundary_vertices_start_and_end_on_the_boundary() -> None:
    mesh = rectangle((4, 3, 1.0, 1.0))
    boundary = mesh.e2c[:, 1] == -1
    for v in range(mesh.n_vertices):
        edges = mesh.v2e[v][mesh.v2e[v] >= 0]
        cells = mesh.v2c[v][mesh.v2c[v] >= 0]
        if len(edges) == len(cells) + 1:
            assert boundary[edges[0]] and boundary[edges[-1]]
            assert mesh.e2v[edges[0], 0] == v and mesh.e2v[edges[-1], 1] == v
        else:
            assert not boundary[edges].any()


def test_torus_numbering_is_the_documented_one() -> None:
    nx, ny = 4, 3
    mesh = torus((nx, ny, 1.0, 1.0))
    for j in range(ny):
        for i in range(nx):
            q, right = j * nx + i, j * nx + (i + 1) % nx
            up, up_right = ((j + 1) % ny) * nx + i, ((j + 1) % ny) * nx + (i + 1) % nx
            assert mesh.vertex_coords[q].tolist() == [i, j]
            assert mesh.e2v[3 * q].tolist() == [q, right]
            assert mesh.e2v[3 * q + 1].tolist() == [q, up]
            assert mesh.e2v[3 * q + 2].tolist() == [q, up_right]
            assert mesh.c2v[2 * q].tolist() == [q, right, up_right]
            assert mesh.c2v[2 * q + 1].tolist() == [q, up_right, up]
            # V2E from +x counter-clockwise: +x, +x+y, +y, -x, -x-y, -y.
            left, down = j * nx + (i - 1) % nx, ((j - 1) % ny) * nx + i
            down_left = ((j - 1) % ny) * nx + (i - 1) % nx
            assert mesh.v2e[q].tolist() == [
                3 * q, 3 * q + 2, 3 * q + 1, 3 * left, 3 * down_left + 2, 3 * down + 1,
            ]  # fmt: skip


def test_rectangle_numbering_is_the_documented_one() -> None:
    nx, ny = 3, 2
    mesh = rectangle((nx, ny, 1.0, 1.0))
    n_x, n_y = nx * (ny + 1), (nx + 1) * ny
    vertex = lambda i, j: j * (nx + 1) + i  # noqa: E731
    assert mesh.vertex_coords[vertex(2, 1)].tolist() == [2, 1]
    assert set(mesh.e2v[1 * nx + 2].tolist()) == {vertex(2, 1), vertex(3, 1)}
    assert set(mesh.e2v[n_x + 1 * (nx + 1) + 3].tolist()) == {vertex(3, 1), vertex(3, 2)}
    assert mesh.e2v[n_x + n_y + 1 * nx + 2].tolist() == [vertex(2, 1), vertex(3, 2)]
    q = 1 * nx + 2
    assert mesh.c2v[2 * q].tolist() == [vertex(2, 1), vertex(3, 1), vertex(3, 2)]
    assert mesh.c2v[2 * q + 1].tolist() == [vertex(2, 1), vertex(3, 2), vertex(2, 2)]
