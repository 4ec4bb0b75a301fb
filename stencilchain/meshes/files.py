"""Mesh files: a NumPy .npz archive of the tables and vertex coordinates, checked on read.

The archive (version 1) holds these arrays, by name:

- `format`: the string "stencilchain-mesh"; `version`: the integer 1.
- `name`: the mesh's name (a string).
- `vertex_coords`: float (vertices, 2).
- `period`: float (2,) as (Lx, Ly) for a periodic mesh, or an empty array (0,).
- `c2e`, `e2c`, `e2v`, `v2e`, `c2v`, `v2c`, `e2c2v`, `c2e2c`: integer tables, -1 for a
  missing neighbour, as described in stencilchain.meshes.

The geometry is not stored: reading computes it from the coordinates. Reading checks the
archive and the tables (`Mesh.validate`); a MeshError names the file, the table and its
first bad row.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np
import numpy.typing as npt

from stencilchain.meshes.mesh import TABLES, Mesh, MeshError

FORMAT = "stencilchain-mesh"
VERSION = 1


def write_mesh(mesh: Mesh, path: str | os.PathLike[str]) -> Path:
    """Write `mesh` to `path` (any name; .npz is usual) and return the path."""
    target = Path(path)
    arrays = {
        "format": np.array(FORMAT),
        "version": np.array(VERSION),
        "name": np.array(mesh.name),
        "vertex_coords": np.asarray(mesh.vertex_coords),
        "period": np.array(mesh.period if mesh.period is not None else [], dtype=np.float64),
        **{name.lower(): np.asarray(table) for name, table in mesh.tables.items()},
    }
    with target.open("wb") as file:
        np.savez_compressed(file, **arrays)  # type: ignore[arg-type]
    return target


def read_mesh(path: str | os.PathLike[str], *, index_dtype: npt.DTypeLike = np.int32) -> Mesh:
    """The mesh written to `path` by `write_mesh` (or by hand, in the same format), with
    tables of `index_dtype`; a MeshError says what is wrong with the file."""
    source = Path(path)
    try:
        with np.load(source, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise MeshError(f"{source}: no such mesh file") from None
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise MeshError(f"{source}: not a mesh file (a NumPy .npz archive): {error}") from None
    expected = ["format", "version", "name", "vertex_coords", "period"]
    expected += [name.lower() for name in TABLES]
    missing = [name for name in expected if name not in arrays]
    if missing:
        raise MeshError(f"{source}: no {', '.join(missing)} in the archive; a mesh file "
                        f"holds {', '.join(expected)}")  # fmt: skip
    if (
        str(arrays["format"]) != FORMAT
        or arrays["version"].shape != ()
        or (int(arrays["version"]) != VERSION)
    ):
        raise MeshError(f"{source}: format {str(arrays['format'])!r} version "
                        f"{arrays['version'].tolist()}, expected {FORMAT!r} version {VERSION}")  # fmt: skip
    period = arrays["period"]
    if period.shape not in ((0,), (2,)) or period.dtype.kind not in "fiu":
        raise MeshError(f"{source}: period is {period.tolist()}; expected (Lx, Ly) or []")
    coords = arrays["vertex_coords"]
    if coords.dtype.kind not in "fiu":
        raise MeshError(f"{source}: vertex_coords holds {coords.dtype}, expected floats")
    try:
        return Mesh.from_tables(
            {name: arrays[name.lower()] for name in TABLES},
            coords,
            period=(float(period[0]), float(period[1])) if len(period) else None,
            name=str(arrays["name"]),
            index_dtype=index_dtype,
        )
    except MeshError as error:
        raise MeshError(f"{source}: {error}") from None
