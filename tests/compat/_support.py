"""What the compat tests share: a small torus mesh's tables, arrays in both layouts, and
the toolchains every test runs on (embedded, GTFN, DaCe) by fixture name."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stencilchain import meshes

TOOLCHAINS = ["embedded", "gtfn_cpu", "dace_cpu"]
LAYOUTS = ["C", "F"]


def toolchain(request: pytest.FixtureRequest, name: str) -> Any:
    """None for the embedded executor, else the session's toolchain of that name."""
    return None if name == "embedded" else request.getfixturevalue(name)


def laid_out(value: Any, order: str) -> Any:
    if isinstance(value, np.ndarray) and value.ndim > 1:
        return np.array(value, order=order)
    return value


def torus(nx: int = 4, ny: int = 3) -> meshes.Mesh:
    return meshes.torus(nx, ny)


def with_missing(table: np.ndarray, rng: np.random.Generator, count: int = 3) -> np.ndarray:
    """A copy of `table` with `count` entries (never a whole row) set to -1."""
    out = table.copy()
    rows = rng.choice(out.shape[0], size=count, replace=False)
    for r in rows:
        out[r, rng.integers(1, out.shape[1])] = -1
    return out


def gather_sum(
    values: np.ndarray, table: np.ndarray, weights: np.ndarray | None = None
) -> np.ndarray:
    """sum_j w[i, j] * values[table[i, j]] over the present neighbours (loops, no NumPy
    fancy reduction), for values over (entity, K)."""
    out = np.zeros((table.shape[0], *values.shape[1:]), dtype=values.dtype)
    for i in range(table.shape[0]):
        for j in range(table.shape[1]):
            n = table[i, j]
            if n >= 0:
                out[i] += values[n] * (1.0 if weights is None else weights[i, j])
    return out
