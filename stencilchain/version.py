"""The package version as cache keys see it.

`__version__` alone would let an edited checkout (an editable install) reuse entries
written by other code of the same version, so the key also covers a hash of the
package's own Python sources, computed once per process (about a millisecond).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    """`<version>+<sha256 of the package sources, 12 hex>`."""
    from stencilchain import __version__

    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        if {"examples", "app"} & set(path.relative_to(root).parts):
            continue  # the examples and the CLI change no translation or build
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:12]}"
