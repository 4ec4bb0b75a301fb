"""The tables of a triangle mesh derived from its cells (C2V, C2E) and edges (E2V):
E2C, C2E2C, E2C2V, V2E and V2C, vectorized (no Python loop over entities)."""

from __future__ import annotations

import numpy as np

from stencilchain.meshes._arrays import BoolArray, FloatArray, IndexArray, wrap


def complete_tables(
    c2v: IndexArray,
    c2e: IndexArray,
    e2v: IndexArray,
    vertex_coords: FloatArray,
    period: tuple[float, float] | None,
    min_width: int = 6,
) -> dict[str, IndexArray]:
    """Every table, as int64, from counter-clockwise C2V, C2E[c, k] joining C2V[c, k] and
    C2V[c, k + 1], and E2V in any orientation (boundary edges are turned so that their
    cell lies on their left). V2E and V2C have at least `min_width` columns."""
    c2v = np.asarray(c2v, dtype=np.int64)
    c2e = np.asarray(c2e, dtype=np.int64)
    e2v = np.array(e2v, dtype=np.int64)  # a copy: boundary edges may turn round
    n_cells, n_edges, n_vertices = len(c2v), len(e2v), len(vertex_coords)

    # Half-edges: cell c walks edge C2E[c, k] from C2V[c, k] to C2V[c, k + 1].
    h_cell = np.repeat(np.arange(n_cells, dtype=np.int64), 3)
    h_edge = c2e.ravel()
    h_from = c2v.ravel()
    h_opposite = c2v[:, [2, 0, 1]].ravel()
    forward = e2v[h_edge, 0] == h_from  # the cell lies on the edge's left
    e2c = np.full((n_edges, 2), -1, dtype=np.int64)
    opposite = np.full((n_edges, 2), -1, dtype=np.int64)
    side = np.where(forward, 0, 1)
    e2c[h_edge, side] = h_cell
    opposite[h_edge, side] = h_opposite
    turn = e2c[:, 0] == -1
    for table in (e2v, e2c, opposite):
        table[turn] = table[turn, ::-1]

    other = e2c[c2e]
    c2e2c = np.where(other[:, :, 0] == np.arange(n_cells)[:, None], other[:, :, 1], other[:, :, 0])
    e2c2v = np.concatenate([e2v, opposite], axis=1)

    v2e, slot_of_end = _vertex_edges(e2v, e2c[:, 1] == -1, vertex_coords, period, min_width)
    # The cell after edge C2E[c, k] around C2V[c, k] (counter-clockwise) takes its slot.
    corner_end = np.where(e2v[h_edge, 0] == h_from, 0, 1)
    slots = slot_of_end[h_edge, corner_end]
    width = max(min_width, int(slots.max(initial=-1)) + 1)
    v2c = np.full((n_vertices, width), -1, dtype=np.int64)
    v2c[h_from, slots] = h_cell
    return {
        "C2E": c2e, "E2C": e2c, "E2V": e2v, "V2E": v2e,
        "C2V": c2v, "V2C": v2c, "E2C2V": e2c2v, "C2E2C": c2e2c,
    }  # fmt: skip


def _vertex_edges(
    e2v: IndexArray,
    boundary: BoolArray,
    vertex_coords: FloatArray,
    period: tuple[float, float] | None,
    min_width: int,
) -> tuple[IndexArray, IndexArray]:
    """V2E sorted counter-clockwise by angle, a boundary vertex's list starting at the
    boundary edge leaving it; and each edge end's slot in its vertex's row (edges, 2)."""
    n_edges, n_vertices = len(e2v), len(vertex_coords)
    vertex = e2v.ravel()  # entry 2e + s: edge e seen from its end E2V[e, s]
    along = wrap(vertex_coords[e2v[:, 1]] - vertex_coords[e2v[:, 0]], period)
    forward = np.arctan2(along[:, 1], along[:, 0])
    angle = np.mod(np.stack([forward, forward + np.pi], axis=1).ravel(), 2 * np.pi)
    start = np.zeros(n_vertices)
    leaving = np.flatnonzero(boundary)
    start[e2v[leaving, 0]] = angle[2 * leaving]
    key = np.mod(angle - start[vertex], 2 * np.pi)
    key[2 * leaving] = -1.0  # exactly first, whatever the rounding
    # Group the entries by vertex (a stable sort of nearly sorted integers is fast), then
    # sort each vertex's few entries by angle.
    grouped = np.argsort(vertex, kind="stable")
    counts = np.bincount(vertex, minlength=n_vertices)
    first = np.cumsum(counts) - counts
    rank = np.arange(2 * n_edges) - first[vertex[grouped]]
    width = max(min_width, int(counts.max(initial=0)))
    keys = np.full((n_vertices, width), np.inf)
    keys[vertex[grouped], rank] = key[grouped]
    entries = np.full((n_vertices, width), -1, dtype=np.int64)
    entries[vertex[grouped], rank] = grouped
    entries = np.take_along_axis(entries, np.argsort(keys, axis=1, kind="stable"), axis=1)
    present = entries >= 0
    v2e = np.where(present, entries // 2, -1)
    slot = np.empty(2 * n_edges, dtype=np.int64)
    slot[entries[present]] = np.nonzero(present)[1]
    return v2e, slot.reshape(n_edges, 2)
