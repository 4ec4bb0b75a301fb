"""Mesh files: a round trip keeps everything; a malformed file is refused with the
file, the table and the first bad entry named."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stencilchain import meshes
from stencilchain.meshes import MeshError, read_mesh, write_mesh


def _arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as archive:
        return {name: archive[name] for name in archive.files}


def _rewrite(path: Path, **changes: np.ndarray | None) -> Path:
    arrays = _arrays(path)
    for name, value in changes.items():
        if value is None:
            del arrays[name]
        else:
            arrays[name] = value
    target = path.with_name("changed.npz")
    np.savez(target, **arrays)
    return target


@pytest.fixture(params=["torus", "rectangle"])
def written(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[meshes.Mesh, Path]:
    mesh = meshes.torus(4, 3, dx=0.5) if request.param == "torus" else meshes.rectangle(3, 2)
    return mesh, write_mesh(mesh, tmp_path / "mesh.npz")


def test_round_trip_keeps_everything(written: tuple[meshes.Mesh, Path]) -> None:
    mesh, path = written
    back = read_mesh(path)
    assert back.name == mesh.name and back.period == mesh.period
    assert back.index_dtype == np.int32
    for field in ("vertex_coords", *(n.lower() for n in meshes.TABLES), "cell_areas",
                  "dual_normals", "dual_areas", "c2e_signs", "v2e_signs", "edge_normals"):  # fmt: skip
        assert np.array_equal(getattr(back, field), getattr(mesh, field)), field
    wide = read_mesh(path, index_dtype=np.int64)
    assert all(t.dtype == np.int64 for t in wide.tables.values())


def test_any_file_name_is_kept(tmp_path: Path) -> None:
    path = write_mesh(meshes.rectangle(1, 1), tmp_path / "mesh.data")
    assert path == tmp_path / "mesh.data" and path.is_file()
    assert read_mesh(path).n_cells == 2


def test_a_bad_entry_is_named_with_the_file_and_table(written: tuple[meshes.Mesh, Path]) -> None:
    mesh, path = written
    e2c = np.array(mesh.e2c)
    e2c[5, 0] = e2c[5, 1] if e2c[5, 1] >= 0 else (e2c[5, 0] + 1) % mesh.n_cells
    bad = _rewrite(path, e2c=e2c)
    with pytest.raises(MeshError, match=r"changed\.npz: .*E2C row 5 is") as info:
        read_mesh(bad)
    assert isinstance(info.value, ValueError)

    c2v = np.array(mesh.c2v)
    c2v[2, 1] = mesh.n_vertices
    with pytest.raises(
        MeshError,
        match=rf"changed\.npz: C2V row 2 is .*{mesh.n_vertices}.*vertex indices run from 0",
    ):
        read_mesh(_rewrite(path, c2v=c2v))

    v2e = np.array(mesh.v2e)
    v2e[1] = np.roll(v2e[1], 1)  # padding first (rectangle) or a turned fan (torus)
    with pytest.raises(MeshError, match=r"changed\.npz: V2[EC] row 1 is"):
        read_mesh(_rewrite(path, v2e=v2e))


def test_malformed_archives_are_refused(written: tuple[meshes.Mesh, Path], tmp_path: Path) -> None:
    mesh, path = written
    with pytest.raises(MeshError, match=r"changed\.npz: no c2e2c in the archive"):
        read_mesh(_rewrite(path, c2e2c=None))
    with pytest.raises(MeshError, match=r"C2E has shape \(.*\), expected \(.*, 3\)"):
        read_mesh(_rewrite(path, c2e=np.array(mesh.c2e)[:, :2]))
    with pytest.raises(MeshError, match=r"E2V holds float64 values"):
        read_mesh(_rewrite(path, e2v=np.array(mesh.e2v, dtype=float)))
    with pytest.raises(MeshError, match=r"format 'other' version 1, expected 'stencilchain-mesh'"):
        read_mesh(_rewrite(path, format=np.array("other")))
    with pytest.raises(MeshError, match=r"period is \[1\.0\]"):
        read_mesh(_rewrite(path, period=np.array([1.0])))
    with pytest.raises(MeshError, match=r"vertex_coords has shape \(.*, 3\)"):
        read_mesh(_rewrite(path, vertex_coords=np.zeros((mesh.n_vertices, 3))))
    text = tmp_path / "mesh.txt"
    text.write_text("not a mesh")
    with pytest.raises(MeshError, match=r"mesh\.txt: not a mesh file"):
        read_mesh(text)
    with pytest.raises(MeshError, match=r"missing\.npz: no such mesh file"):
        read_mesh(tmp_path / "missing.npz")
    objects = np.empty(2, dtype=object)
    with pytest.raises(MeshError, match=r"changed\.npz: not a mesh file"):
        read_mesh(_rewrite(path, c2e=objects))  # pickled objects are never loaded
