"""The geometry of a triangle mesh from its tables and vertex coordinates: what a
finite-volume divergence, gradient (the "nabla") or diffusion Laplacian needs."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from stencilchain.meshes._arrays import FloatArray, IndexArray, into_domain, wrap


def _norm(vectors: FloatArray) -> FloatArray:
    return np.asarray(np.hypot(vectors[..., 0], vectors[..., 1]), dtype=np.float64)


def geometry(
    tables: Mapping[str, IndexArray],
    vertex_coords: FloatArray,
    period: tuple[float, float] | None,
) -> dict[str, FloatArray]:
    """Every geometric quantity of the `Mesh`, by its field name (see stencilchain.meshes)."""
    c2v, c2e, e2v, e2c, v2e = (tables[n] for n in ("C2V", "C2E", "E2V", "E2C", "V2E"))
    x = vertex_coords

    corner0 = x[c2v[:, 0]]
    to1 = wrap(x[c2v[:, 1]] - corner0, period)
    to2 = wrap(x[c2v[:, 2]] - corner0, period)
    cell_areas = 0.5 * (to1[:, 0] * to2[:, 1] - to1[:, 1] * to2[:, 0])
    cell_centres = into_domain(corner0 + (to1 + to2) / 3.0, period)

    tangent = wrap(x[e2v[:, 1]] - x[e2v[:, 0]], period)
    edge_lengths = _norm(tangent)
    edge_tangents = tangent / edge_lengths[:, None]
    edge_normals = np.stack([edge_tangents[:, 1], -edge_tangents[:, 0]], axis=1)
    edge_centres = into_domain(x[e2v[:, 0]] + 0.5 * tangent, period)

    # The dual face: centre of E2C[e, 0] -> midpoint -> centre of E2C[e, 1] (or midpoint).
    left = cell_centres[e2c[:, 0]]
    right = np.where((e2c[:, 1] >= 0)[:, None], cell_centres[e2c[:, 1]], edge_centres)
    across = wrap(right - left, period)
    dual_edge_lengths = _norm(across)
    dual_normals = np.stack([-across[:, 1], across[:, 0]], axis=1) / dual_edge_lengths[:, None]

    dual_areas = np.bincount(
        c2v.ravel(), weights=np.repeat(cell_areas / 3.0, 3), minlength=len(x)
    ).astype(np.float64)
    cells = np.arange(len(c2v))[:, None]
    c2e_signs = np.where(e2c[c2e, 0] == cells, 1.0, -1.0)
    vertices = np.arange(len(x))[:, None]
    v2e_signs = np.where(v2e < 0, 0.0, np.where(e2v[v2e, 0] == vertices, 1.0, -1.0))
    return {
        "cell_centres": cell_centres,
        "cell_areas": cell_areas,
        "edge_centres": edge_centres,
        "edge_lengths": edge_lengths,
        "edge_tangents": edge_tangents,
        "edge_normals": edge_normals,
        "dual_edge_lengths": dual_edge_lengths,
        "dual_normals": dual_normals,
        "dual_areas": dual_areas,
        "c2e_signs": c2e_signs,
        "v2e_signs": v2e_signs,
    }
