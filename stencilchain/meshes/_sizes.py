"""The checks of a structured mesh's size and spacing, shared by torus and rectangle."""

from __future__ import annotations

import numbers


def check_size(builder: str, nx: int, ny: int, minimum: int, why: str) -> None:
    for label, value in (("nx", nx), ("ny", ny)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise TypeError(f"{builder}: {label} must be an int, got {value!r}")
        if value < minimum:
            raise ValueError(f"{builder}: {label}={value}, but {why}")


def check_spacing(builder: str, dx: float, dy: float) -> None:
    for label, value in (("dx", dx), ("dy", dy)):
        if not (isinstance(value, numbers.Real) and 0 < float(value) < float("inf")):
            raise ValueError(f"{builder}: {label} must be a positive length, got {value!r}")
