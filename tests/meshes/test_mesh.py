"""The Mesh value and its builders: sizes and their limits, index dtypes, read-only
arrays, the table accessor, and `validate` naming the table, row and values."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest

from stencilchain import StencilchainError, meshes
from stencilchain.meshes import Mesh, MeshError


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: meshes.torus(2, 5), r"torus: nx=2, but a torus needs at least 3 quads"),
        (lambda: meshes.torus(3, 1), r"torus: ny=1, but"),
        (lambda: meshes.torus(0, 3), r"torus: nx=0"),
        (lambda: meshes.rectangle(0, 1), r"rectangle: nx=0, but a rectangle needs at least 1"),
        (lambda: meshes.rectangle(2, -1), r"rectangle: ny=-1"),
        (lambda: meshes.torus(3, 3, dx=0.0), r"torus: dx must be a positive length, got 0.0"),
        (lambda: meshes.rectangle(1, 1, dy=float("nan")), r"rectangle: dy must be a positive"),
        (lambda: meshes.torus(3, 3, index_dtype=np.int16), r"index_dtype must be np.int32 or"),
        (lambda: meshes.rectangle(1, 1, index_dtype="float64"), r"index_dtype must be"),
    ],
)
def test_sizes_and_settings_below_the_limits_are_refused(
    build: Callable[[], Mesh], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        build()


def test_sizes_must_be_integers() -> None:
    with pytest.raises(TypeError, match=r"torus: nx must be an int, got 3.0"):
        meshes.torus(3.0, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"rectangle: ny must be an int, got True"):
        meshes.rectangle(1, True)


def test_the_smallest_meshes() -> None:
    torus = meshes.torus(3, 3)
    assert (torus.n_cells, torus.n_edges, torus.n_vertices) == (18, 27, 9)
    torus.validate()
    box = meshes.rectangle(1, 1)
    assert (box.n_cells, box.n_edges, box.n_vertices) == (2, 5, 4)
    assert box.e2c.tolist() == [[0, -1], [1, -1], [1, -1], [0, -1], [1, 0]]
    assert box.c2e2c.tolist() == [[-1, -1, 1], [0, -1, -1]]
    box.validate()


def test_index_dtypes() -> None:
    mesh = meshes.torus(4, 3)
    assert mesh.index_dtype == np.int32
    wide = mesh.with_index_dtype(np.int64)
    assert wide.index_dtype == np.int64 and all(t.dtype == np.int64 for t in wide.tables.values())
    assert all(np.array_equal(wide.table(n), mesh.table(n)) for n in meshes.TABLES)
    assert wide.with_index_dtype("int32").index_dtype == np.int32
    assert mesh.with_index_dtype(np.int32) is mesh
    built = meshes.rectangle(2, 2, index_dtype=np.int64)
    assert all(t.dtype == np.int64 for t in built.tables.values())
    built.validate()


def test_arrays_are_read_only_and_the_mesh_frozen() -> None:
    mesh = meshes.rectangle(2, 2)
    for field in dataclasses.fields(mesh):
        value = getattr(mesh, field.name)
        if isinstance(value, np.ndarray):
            assert not value.flags.writeable, field.name
    with pytest.raises(ValueError, match="read-only"):
        mesh.c2e[0, 0] = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        mesh.name = "other"  # type: ignore[misc]


def test_table_accessor_and_repr() -> None:
    mesh = meshes.torus(3, 4)
    assert mesh.table("C2E") is mesh.c2e and mesh.table("e2c2v") is mesh.e2c2v
    assert list(mesh.tables) == list(meshes.TABLES)
    with pytest.raises(KeyError, match=r"no table 'C2C'; a mesh has C2E, E2C"):
        mesh.table("C2C")
    assert repr(mesh) == (
        "Mesh('torus 3x4': 24 cells, 36 edges, 12 vertices, periodic 3 x 4, int32)"
    )
    assert "bounded" in repr(meshes.rectangle(1, 1))


def _broken(mesh: Mesh, table: str, change: Callable[[np.ndarray], None]) -> Mesh:
    values = np.array(mesh.table(table))
    change(values)
    return dataclasses.replace(mesh, **{table.lower(): values})


def _swap(row: int, a: int, b: int) -> Callable[[np.ndarray], None]:
    def change(t: np.ndarray) -> None:
        t[row, [a, b]] = t[row, [b, a]]

    return change


def _set(row: int, column: int, value: int) -> Callable[[np.ndarray], None]:
    def change(t: np.ndarray) -> None:
        t[row, column] = value

    return change


TORUS = meshes.torus(4, 3)
BOX = meshes.rectangle(3, 2)

BROKEN = [
    (TORUS, "C2E", _swap(3, 0, 1), r"C2E row 3 is \[.*\]: C2E\[c, k\] must join C2V\[c, k\]"),
    (TORUS, "C2E", _set(0, 0, 36), r"C2E row 0 is \[36, .*edge indices run from 0 to 35, and none"),
    (TORUS, "C2V", _set(2, 0, -1), r"C2V row 2 is \[-1, .*none may be missing"),
    (TORUS, "C2V", lambda t: t.__setitem__((5, 2), t[5, 0]), r"C2V row 5 .*an entry appears twice"),
    (TORUS, "E2V", _swap(7, 0, 1), r"E2C row 7 is .*: expected .* the cell that walks edge 7"),
    (BOX, "E2V", _swap(0, 0, 1), r"E2V row 0 is .*walked from E2V\[e, 0\] to E2V\[e, 1\] by 0"),
    (TORUS, "E2V", lambda t: t.__setitem__(4, t[3]), r"E2V row 4 .*another edge joins the same"),
    (TORUS, "E2C", _swap(2, 0, 1), r"E2C row 2 is .*expected"),
    (BOX, "E2C", _set(0, 1, 3), r"E2C row 0 is \[0, 3\]: expected \[0, -1\]"),
    (TORUS, "V2E", _set(1, 2, 30), r"V2E row 1 is .*must have vertex 1 in E2V"),
    (TORUS, "V2E", _swap(1, 2, 3), r"V2C row 1 is .*V2E\[v, k\].*\(V2E row 1 is"),
    (BOX, "V2E", _swap(0, 2, 3), r"V2E row 0 is .*padding \(-1\) comes after the neighbours"),
    (TORUS, "V2C", lambda t: t.__setitem__((4, 5), t[4, 0]), r"V2C row 4 .*a cell appears twice"),
    (BOX, "V2C", _set(5, 5, -1), r"V2C row 5 is .*C2V has vertex 5 in 6 rows"),
    (TORUS, "E2C2V", _set(6, 2, 0), r"E2C2V row 6 is .*expected E2V row 6 then"),
    (BOX, "E2C2V", _set(0, 3, 1), r"E2C2V row 0 is \[.*, 1\]: expected .*-1\]"),
    (TORUS, "C2E2C", _swap(0, 0, 1), r"C2E2C row 0 is .*expected the cells across C2E row 0"),
    (BOX, "C2E2C", _set(0, 0, 1), r"C2E2C row 0 is \[1, 3, 1\]: expected .*: \[-1, 3, 1\]"),
]


@pytest.mark.parametrize(("mesh", "table", "change", "message"), BROKEN)
def test_validate_names_the_table_row_and_values(
    mesh: Mesh, table: str, change: Callable[[np.ndarray], None], message: str
) -> None:
    broken = _broken(mesh, table, change)
    with pytest.raises(MeshError, match=message) as info:
        broken.validate()
    assert isinstance(info.value, ValueError) and isinstance(info.value, StencilchainError)


def test_from_tables_checks_before_computing() -> None:
    tables = BOX.tables
    with pytest.raises(MeshError, match=r"C2V row 0 .*clockwise or lie on a line"):
        Mesh.from_tables(tables, BOX.vertex_coords * [-1.0, 1.0])  # a mirror image
    with pytest.raises(MeshError, match=r"unknown tables \['C2C'\]"):
        Mesh.from_tables({**tables, "C2C": BOX.c2e2c}, BOX.vertex_coords)
    with pytest.raises(MeshError, match=r"no V2C table; a mesh has C2E, E2C"):
        Mesh.from_tables({n: t for n, t in tables.items() if n != "V2C"}, BOX.vertex_coords)
    with pytest.raises(MeshError, match=r"V2E has shape \(11, 6\), expected \(12, n\)"):
        Mesh.from_tables({**tables, "V2E": BOX.v2e[:-1]}, BOX.vertex_coords)
    with pytest.raises(MeshError, match=r"vertex_coords row 3 is \[nan, 0.0\]: not finite"):
        coords = np.array(BOX.vertex_coords)
        coords[3, 0] = np.nan
        Mesh.from_tables(tables, coords)
    with pytest.raises(MeshError, match=r"period must be two positive lengths"):
        Mesh.from_tables(TORUS.tables, TORUS.vertex_coords, period=(0.0, 3.0))
    rebuilt = Mesh.from_tables(TORUS.tables, TORUS.vertex_coords, period=TORUS.period)
    assert np.array_equal(rebuilt.dual_normals, TORUS.dual_normals)


def test_wider_neighbour_tables_are_accepted() -> None:
    """A file may pad V2E and V2C wider than 6; the signs follow V2E's width."""
    tables = dict(BOX.tables)
    pad = np.full((BOX.n_vertices, 2), -1)
    tables["V2E"] = np.concatenate([BOX.v2e, pad], axis=1)
    tables["V2C"] = np.concatenate([BOX.v2c, pad, pad], axis=1)
    wide = Mesh.from_tables(tables, BOX.vertex_coords)
    assert wide.v2e.shape == (12, 8) and wide.v2c.shape == (12, 10)
    assert wide.v2e_signs.shape == (12, 8)
