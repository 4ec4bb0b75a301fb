"""The consistency checks of a mesh's tables: each failure names the table, the first
bad row, its values, and what would be right."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from stencilchain.errors import StencilchainError
from stencilchain.meshes._arrays import BoolArray, FloatArray, IndexArray

# name: (source entity, target entity, columns; None: any number)
SHAPES: dict[str, tuple[str, str, int | None]] = {
    "C2E": ("cell", "edge", 3),
    "E2C": ("edge", "cell", 2),
    "E2V": ("edge", "vertex", 2),
    "V2E": ("vertex", "edge", None),
    "C2V": ("cell", "vertex", 3),
    "V2C": ("vertex", "cell", None),
    "E2C2V": ("edge", "vertex", 4),
    "C2E2C": ("cell", "cell", 3),
}
# The columns that may hold -1 (a missing neighbour), by table; None: any, at the end.
_MAY_BE_MISSING: dict[str, tuple[int, ...] | None] = {
    "C2E": (), "E2C": (1,), "E2V": (), "V2E": None, "C2V": (), "V2C": None,
    "E2C2V": (3,), "C2E2C": (0, 1, 2),
}  # fmt: skip


class MeshError(StencilchainError, ValueError):
    """A mesh whose tables or coordinates are inconsistent, or a bad mesh file."""


def _check(
    bad: BoolArray, table: str, values: IndexArray | FloatArray, why: str | Callable[[int], str]
) -> None:
    """Raise for the first row of `table` where `bad` holds (rows along axis 0)."""
    rows = bad.reshape(len(bad), -1).any(axis=1) if bad.ndim > 1 else bad
    hits = np.flatnonzero(rows)
    if len(hits):
        row = int(hits[0])
        reason = why(row) if callable(why) else why
        raise MeshError(f"{table} row {row} is {values[row].tolist()}: {reason}")


def check_shapes(tables: Mapping[str, IndexArray], counts: Mapping[str, int]) -> None:
    """Every table is there, 2-D, integer, one row per source and the right columns."""
    for name, (source, _, columns) in SHAPES.items():
        if name not in tables:
            raise MeshError(f"no {name} table; a mesh has {', '.join(SHAPES)}")
        table = tables[name]
        if table.dtype.kind not in "iu":
            raise MeshError(f"{name} holds {table.dtype} values; tables hold integer indices")
        width = "n" if columns is None else str(columns)
        expected = f"({counts[source]}, {width}): one row per {source}"
        if table.ndim != 2 or table.shape[0] != counts[source]:
            raise MeshError(f"{name} has shape {table.shape}, expected {expected}")
        if (columns is not None and table.shape[1] != columns) or table.shape[1] == 0:
            raise MeshError(f"{name} has shape {table.shape}, expected {expected}")


def check_tables(tables: Mapping[str, IndexArray], counts: Mapping[str, int]) -> None:
    """The tables (int64) are consistent with each other; see stencilchain.meshes."""
    t = tables
    for name, (_, target, _) in SHAPES.items():
        _check_range(name, t[name], counts[target])
    c2v, c2e, e2v, e2c = t["C2V"], t["C2E"], t["E2V"], t["E2C"]
    n_cells, n_edges, n_vertices = counts["cell"], counts["edge"], counts["vertex"]

    for name in ("C2V", "C2E"):
        table = t[name]
        rolled = np.roll(table, 1, axis=1)
        _check(table == rolled, name, table, "an entry appears twice")
    _check(e2v[:, 0] == e2v[:, 1], "E2V", e2v, "an edge joins two different vertices")
    pair = np.sort(e2v, axis=1)
    key = pair[:, 0] * n_vertices + pair[:, 1]
    order = np.argsort(key, kind="stable")
    twin = np.zeros(n_edges, dtype=bool)
    twin[order[1:]] = key[order[1:]] == key[order[:-1]]
    _check(twin, "E2V", e2v, "another edge joins the same two vertices")

    # Half-edges: cell c walks edge C2E[c, k] from C2V[c, k] to C2V[c, k + 1].
    h_from, h_to = c2v, c2v[:, [1, 2, 0]]
    ends = e2v[c2e]  # (cells, 3, 2)
    forward = (ends[..., 0] == h_from) & (ends[..., 1] == h_to)
    backward = (ends[..., 0] == h_to) & (ends[..., 1] == h_from)
    _check(
        ~(forward | backward), "C2E", c2e,
        lambda c: f"C2E[c, k] must join C2V[c, k] and C2V[c, k + 1] (C2V row {c} is "
        f"{c2v[c].tolist()}), but E2V gives {e2v[c2e[c]].tolist()}",
    )  # fmt: skip
    walks = [np.bincount(c2e[way], minlength=n_edges) for way in (forward, backward)]
    _check(
        (walks[0] != 1) | (walks[1] > 1), "E2V", e2v,
        lambda e: f"edge {e} is walked from E2V[e, 0] to E2V[e, 1] by {walks[0][e]} cells "
        f"and the other way by {walks[1][e]} (C2E and C2V, counter-clockwise); expected "
        "once and at most once (a boundary edge runs counter-clockwise around the domain)",
    )  # fmt: skip
    cells = np.broadcast_to(np.arange(n_cells)[:, None], c2e.shape)
    expected_e2c = np.full((n_edges, 2), -1, dtype=np.int64)
    expected_e2c[c2e[forward], 0] = cells[forward]
    expected_e2c[c2e[backward], 1] = cells[backward]
    _check(
        e2c != expected_e2c, "E2C", e2c,
        lambda e: f"expected {expected_e2c[e].tolist()}: the cell that walks edge {e} from "
        "E2V[e, 0] to E2V[e, 1] (counter-clockwise), then the other one or -1",
    )  # fmt: skip
    cells = cells[:, :1]
    expected_c2e2c = np.where(e2c[c2e, 0] == cells, e2c[c2e, 1], e2c[c2e, 0])
    _check(
        t["C2E2C"] != expected_c2e2c, "C2E2C", t["C2E2C"],
        lambda c: f"expected the cells across C2E row {c} ({c2e[c].tolist()}): "
        f"{expected_c2e2c[c].tolist()}",
    )  # fmt: skip

    opposite = np.full((n_edges, 2), -1, dtype=np.int64)
    h_opposite = c2v[:, [2, 0, 1]]
    opposite[c2e[forward], 0] = h_opposite[forward]
    opposite[c2e[~forward], 1] = h_opposite[~forward]
    expected_e2c2v = np.concatenate([e2v, opposite], axis=1)
    _check(
        t["E2C2V"] != expected_e2c2v, "E2C2V", t["E2C2V"],
        lambda e: f"expected E2V row {e} then the vertices of E2C row {e} "
        f"({e2c[e].tolist()}) opposite the edge: {expected_e2c2v[e].tolist()}",
    )  # fmt: skip

    _check_inverse("V2E", t["V2E"], "E2V", e2v, "edge")
    _check_inverse("V2C", t["V2C"], "C2V", c2v, "cell")
    _check_fans(t, n_vertices)


def _check_range(name: str, table: IndexArray, n_targets: int) -> None:
    low = np.zeros(table.shape, dtype=np.int64)
    columns = _MAY_BE_MISSING[name]
    if columns is None:
        low[:] = -1
    else:
        low[:, list(columns)] = -1
    target = SHAPES[name][1]
    _check(
        (table < low) | (table >= n_targets), name, table,
        f"{target} indices run from 0 to {n_targets - 1}"
        + (", and none may be missing" if columns == () else ", -1 for a missing neighbour"),
    )  # fmt: skip
    if columns is None:
        after_gap = (table[:, 1:] >= 0) & (table[:, :-1] < 0)
        _check(after_gap, name, table, "padding (-1) comes after the neighbours")


def _check_inverse(name: str, table: IndexArray, of_name: str, of: IndexArray, entity: str) -> None:
    """`table` (vertex -> entities, -1 padded) lists exactly the entities whose row of `of`
    holds the vertex, each once."""
    n_vertices = len(table)
    vertices = np.arange(n_vertices)[:, None]
    holds = (of[table] == vertices[:, :, None]).any(axis=2) | (table < 0)
    _check(
        ~holds, name, table,
        lambda v: f"each {entity} listed must have vertex {v} in {of_name}, but "
        f"{of_name} gives {of[table[v][table[v] >= 0]].tolist()}",
    )  # fmt: skip
    ordered = np.sort(table, axis=1)
    _check(
        (ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0), name, table,
        f"an {entity} appears twice" if entity == "edge" else f"a {entity} appears twice",
    )  # fmt: skip
    expected = np.bincount(of.ravel(), minlength=n_vertices)
    _check(
        (table >= 0).sum(axis=1) != expected, name, table,
        lambda v: f"{of_name} has vertex {v} in {expected[v]} rows",
    )  # fmt: skip


def _check_fans(t: Mapping[str, IndexArray], n_vertices: int) -> None:
    """V2C[v, k] lies between V2E[v, k] and V2E[v, k + 1] counter-clockwise: it walks
    V2E[v, k] away from v and V2E[v, k + 1] (V2E[v, 0] after the last) towards v."""
    v2e, v2c, c2v, c2e = t["V2E"], t["V2C"], t["C2V"], t["C2E"]
    n_edges = (v2e >= 0).sum(axis=1)
    n_cells = (v2c >= 0).sum(axis=1)
    _check(
        (n_cells == 0) | (n_edges - n_cells < 0) | (n_edges - n_cells > 1), "V2C", v2c,
        lambda v: f"vertex {v} has {n_edges[v]} edges (V2E) and {n_cells[v]} cells: as many "
        "edges as cells inside the mesh, one more on the boundary",
    )  # fmt: skip
    width = v2c.shape[1]
    padded = np.full((n_vertices, width + 1), -1, dtype=np.int64)
    shared = min(width + 1, v2e.shape[1])
    padded[:, :shared] = v2e[:, :shared]
    vertices = np.arange(n_vertices)[:, None]
    cell = np.maximum(v2c, 0)
    present = v2c >= 0
    where = np.argmax(c2v[cell] == vertices[:, :, None], axis=2)  # v's corner in the cell
    leaving = np.take_along_axis(c2e[cell], where[:, :, None], axis=2)[:, :, 0]
    arriving = np.take_along_axis(c2e[cell], ((where + 2) % 3)[:, :, None], axis=2)[:, :, 0]
    following = np.arange(1, width + 1)[None, :]
    following = np.where(following >= n_edges[:, None], 0, following)
    _check(
        present & (leaving != padded[:, :width]), "V2C", v2c,
        lambda v: f"cell V2C[v, k] must have V2E[v, k] as its edge leaving vertex {v} "
        f"counter-clockwise (V2E row {v} is {v2e[v].tolist()})",
    )  # fmt: skip
    _check(
        present & (arriving != np.take_along_axis(padded, following, axis=1)), "V2C", v2c,
        lambda v: f"cell V2C[v, k] must have V2E[v, k + 1] as its edge arriving at vertex {v} "
        f"counter-clockwise (V2E row {v} is {v2e[v].tolist()})",
    )  # fmt: skip


def check_orientation(c2v: IndexArray, cell_areas: FloatArray) -> None:
    """The cells' vertices run counter-clockwise: positive areas."""
    _check(
        ~(cell_areas > 0), "C2V", c2v,
        lambda c: f"the vertices run clockwise or lie on a line (area {cell_areas[c]:g}); "
        "list a cell's vertices counter-clockwise",
    )  # fmt: skip
