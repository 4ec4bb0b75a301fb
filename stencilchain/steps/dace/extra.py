"""The `dace` extra: whether DaCe is installed, checked without importing it."""

from __future__ import annotations

import importlib.util

from stencilchain.errors import MissingExtraError


def require_dace(what: str) -> None:
    """MissingExtraError naming `what` (a step or builder) unless DaCe can be imported."""
    if importlib.util.find_spec("dace") is None:
        raise MissingExtraError(
            f"{what}: the DaCe toolchains need DaCe, which is not installed; "
            "install the extra: pip install 'stencilchain[dace]'"
        )
