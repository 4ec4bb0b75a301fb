"""The meshes every test runs on: tori and rectangles from the smallest sizes up."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from stencilchain import meshes

TORI = [(3, 3, 1.0, 1.0), (4, 3, 1.0, 1.0), (5, 7, 0.5, 2.0), (8, 6, 1.0, 1.0)]
RECTANGLES = [(1, 1, 1.0, 1.0), (1, 3, 1.0, 1.0), (3, 1, 2.0, 1.0), (4, 3, 0.5, 0.25)]


def torus(size: tuple[int, int, float, float]) -> meshes.Mesh:
    nx, ny, dx, dy = size
    return meshes.torus(nx, ny, dx=dx, dy=dy)


def rectangle(size: tuple[int, int, float, float]) -> meshes.Mesh:
    nx, ny, dx, dy = size
    return meshes.rectangle(nx, ny, dx=dx, dy=dy)


ALL = [("torus", s) for s in TORI] + [("rectangle", s) for s in RECTANGLES]
IDS = [f"{kind}-{s[0]}x{s[1]}" for kind, s in ALL]


def build(kind: str, size: tuple[int, int, float, float]) -> meshes.Mesh:
    return torus(size) if kind == "torus" else rectangle(size)


def row_set(row: npt.NDArray[np.integer]) -> set[int]:
    return {int(x) for x in row if x >= 0}
