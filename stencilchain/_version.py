"""The package version: `__version__` (the one source; pyproject.toml reads it), and the
version as cache keys see it.

`__version__` alone would let an edited checkout (an editable install) reuse entries
written by other code of the same version, so the key also covers the package's code,
once per process (ADR 0034):

- an installed package (a wheel, as pip, uv or conda install it: the installer's record,
  `stencilchain-<version>.dist-info/RECORD`, lies next to the package folder) is
  identified by that record (path, size, modification time): one `stat`. Any install,
  upgrade or reinstall rewrites it; a file edited by hand inside an installation is not
  seen (reinstall, or set `STENCILCHAIN_CACHE_SALT`);
- any other tree (a checkout, an editable install) by its own Python sources and C++
  files, identified like the build tools (path, size, modification time: any edit
  changes it): one `stat` per file, about 150; the files of the layers that make no
  cached output (`_UNKEYED_LAYERS`) are left out.
"""

from __future__ import annotations

import functools
import os

__version__ = "0.1.0"

_KEYED_SUFFIXES = (".py", ".h", ".cpp")
# Layers whose code makes no cached output (no translated source, build or index entry):
# the command line, examples, what runs a loaded module (runtime), composition (containers:
# what they choose is in the steps' settings), and what makes or runs programs above the
# IR (distributed, meshes, compat: the IR's fingerprint covers what they make). ADR 0039.
_UNKEYED_LAYERS = {"examples", "app", "runtime", "containers", "distributed", "meshes", "compat"}
_UNKEYED_FOLDERS = {"__pycache__"}  # at any depth


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    """`<version>+<sha256 of the package's identity, 12 hex>`."""
    import hashlib  # on first use: `import stencilchain` needs only `__version__`

    root = os.path.dirname(os.path.realpath(__file__))
    identity = installed_identity(root)
    if identity is None:
        identities: list[str] = []
        _add_identities(root, "", identities)
        identity = "\n".join(sorted(identities))
    digest = hashlib.sha256(identity.encode())
    return f"{__version__}+{digest.hexdigest()[:12]}"


def installed_identity(root: str) -> str | None:
    """`record:<path>:<size>:<mtime_ns>` of the installer's record of the package installed
    at `root` (the RECORD of `stencilchain-<version>.dist-info` in the folder holding
    `root`), or None where there is none: a checkout or an editable install, whose package
    folder is not in the installation's folder."""
    record = os.path.join(os.path.dirname(root), f"stencilchain-{__version__}.dist-info", "RECORD")
    try:
        stat = os.stat(record)
    except OSError:
        return None
    return f"record:{record}:{stat.st_size}:{stat.st_mtime_ns}"


def _add_identities(folder: str, relative: str, identities: list[str]) -> None:
    """`relative-path:size:mtime_ns` of the keyed files under `folder`: one `stat` per keyed
    file, by its name relative to its folder's descriptor (the kernel resolves one name, not
    the whole path), and the folders' listings (os.scandir gives the entries' types)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _add_folder(fd, relative, identities)
    finally:
        os.close(fd)


def _add_folder(fd: int, relative: str, identities: list[str]) -> None:
    with os.scandir(fd) as entries:
        for entry in entries:
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                layer = not relative and name in _UNKEYED_LAYERS  # top level only
                if layer or name in _UNKEYED_FOLDERS:
                    continue
                sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                try:
                    _add_folder(sub, relative + name + os.sep, identities)
                finally:
                    os.close(sub)
            elif name.endswith(_KEYED_SUFFIXES):
                stat = os.stat(name, dir_fd=fd)
                identities.append(f"{relative}{name}:{stat.st_size}:{stat.st_mtime_ns}")
