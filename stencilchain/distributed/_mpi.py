"""The `mpi` extra: mpi4py, imported only when a distributed feature is asked for."""

from __future__ import annotations

import importlib
from types import ModuleType

from stencilchain.errors import MissingExtraError


def mpi(what: str) -> ModuleType:
    """`mpi4py.MPI`, or MissingExtraError naming `what` and the extra that brings it."""
    try:
        return importlib.import_module("mpi4py.MPI")
    except ImportError as error:
        raise MissingExtraError(
            f"{what} needs mpi4py and an MPI library, which are not installed ({error}); "
            "install the extra: pip install 'stencilchain[mpi]'"
        ) from None
