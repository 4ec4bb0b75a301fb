"""Array types shared by the mesh modules, and the minimal-image difference of positions."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

IndexArray = npt.NDArray[np.signedinteger[Any]]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def wrap(delta: FloatArray, period: tuple[float, float] | None) -> FloatArray:
    """Differences of positions (..., 2) taken the short way round a periodic domain."""
    if period is None:
        return delta
    lengths = np.asarray(period, dtype=np.float64)
    return delta - lengths * np.rint(delta / lengths)


def into_domain(points: FloatArray, period: tuple[float, float] | None) -> FloatArray:
    """Positions (..., 2) moved into [0, Lx) x [0, Ly) on a periodic domain."""
    if period is None:
        return points
    lengths = np.asarray(period, dtype=np.float64)
    return np.mod(points, lengths)
