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
import os

__version__ = "0.1.0"

_KEYED_SUFFIXES = (".py", ".h", ".cpp")
_UNKEYED_FOLDERS = {"examples", "app", "__pycache__"}  # they change no translation or build


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    """`<version>+<sha256 of the package files' identities, 12 hex>`."""
    import hashlib  # on first use: `import stencilchain` needs only `__version__`

    root = os.path.dirname(os.path.realpath(__file__))
    identities: list[str] = []
    _add_identities(root, "", identities)
    digest = hashlib.sha256("\n".join(sorted(identities)).encode())
    return f"{__version__}+{digest.hexdigest()[:12]}"


def _add_identities(folder: str, relative: str, identities: list[str]) -> None:
    """`relative-path:size:mtime_ns` of the keyed files under `folder` (os.scandir: the
    entries' types come with the listing; one stat per keyed file)."""
    with os.scandir(folder) as entries:
        for entry in entries:
            name = relative + entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in _UNKEYED_FOLDERS:
                    _add_identities(entry.path, name + os.sep, identities)
            elif entry.name.endswith(_KEYED_SUFFIXES):
                stat = entry.stat()
                identities.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
