"""The package version: `__version__` (the one source; pyproject.toml reads it), and the
version as cache keys see it.

`__version__` alone would let an edited checkout (an editable install) reuse entries
written by other code of the same version, so the key also covers the package's own
Python sources and C++ files, identified like the build tools (path, size, modification
time: any edit or reinstall changes it), once per process: stat calls only, a fraction of
a millisecond on a cached first call, where reading every file cost several.
"""

from __future__ import annotations

import functools
import hashlib
import os

__version__ = "0.1.0"

_KEYED_SUFFIXES = (".py", ".h", ".cpp")
_UNKEYED_FOLDERS = {"examples", "app", "__pycache__"}  # they change no translation or build


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    """`<version>+<sha256 of the package files' identities, 12 hex>`."""
    root = os.path.dirname(os.path.realpath(__file__))
    identities = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [d for d in subfolders if d not in _UNKEYED_FOLDERS]
        for name in files:
            if name.endswith(_KEYED_SUFFIXES):
                path = os.path.join(folder, name)
                stat = os.stat(path)
                relative = os.path.relpath(path, root)
                identities.append(f"{relative}:{stat.st_size}:{stat.st_mtime_ns}")
    digest = hashlib.sha256("\n".join(sorted(identities)).encode())
    return f"{__version__}+{digest.hexdigest()[:12]}"
