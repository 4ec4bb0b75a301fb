"""The package version: `__version__` (the one source; pyproject.toml reads it), and the
version as cache keys see it.

`__version__` alone would let an edited checkout (an editable install) reuse entries
written by other code of the same version, so the key also covers a hash of the
package's own Python sources and C++ files, computed once per process (about a millisecond).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

__version__ = "0.1.0"

_KEYED_SUFFIXES = (".py", ".h", ".cpp")


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    """`<version>+<sha256 of the package sources, 12 hex>`."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in _KEYED_SUFFIXES):
        if {"examples", "app"} & set(path.relative_to(root).parts):
            continue  # the examples and the CLI change no translation or build
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:12]}"
