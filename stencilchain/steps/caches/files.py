"""How the caches read and write their files: atomically, privately, never through a link,
and recording an entry's last use without writing on every use."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
import uuid
from pathlib import Path

from stencilchain.steps.caches.trust import PRIVATE_FILE

LAST_USE_RESOLUTION = 3600.0
"""An entry's use is recorded (as its file's access time) when the recorded one is older
than this: at most one write an hour per entry, whatever the number of processes."""

_READ = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
_NOATIME = getattr(os, "O_NOATIME", 0)
_STALE = re.compile(r"\.(.+)\.stale-[0-9a-f]{12}")


def open_entry(path: Path) -> int:
    """A descriptor of an entry's file, opened for reading, never through a symbolic link
    (OSError then), and where the system allows without updating its access time: reading
    an entry to list it is not a use (O_NOATIME needs the owner; retried without)."""
    if _NOATIME:
        try:
            return os.open(path, _READ | _NOATIME)
        except PermissionError:
            pass
    return os.open(path, _READ)


def read_all(fd: int, size: int = 0) -> bytes:
    """Everything left to read from `fd`, whose size (its `fstat`) is `size` if known: read
    in one call then (a small entry on a first call needs no megabyte buffer)."""
    chunks = []
    block = size + 1 if size else 1 << 16  # os.read allocates the whole block each call
    while chunk := os.read(fd, block):
        chunks.append(chunk)
        block = 1 << 16
    return b"".join(chunks)


def read_entry(path: Path) -> tuple[os.stat_result, bytes]:
    """The stat and content of an entry's file, read as `open_entry` opens it (to list
    it: no trust check, no use recorded); OSError if it cannot be read."""
    fd = open_entry(path)
    try:
        info = os.fstat(fd)
        return info, read_all(fd, info.st_size)
    finally:
        os.close(fd)


def record_use(fd: int, info: os.stat_result) -> None:
    """Record a use of the open file `fd` (whose stat is `info`): its access time becomes
    now, its modification time (the entry's completion) stays, unless the recorded use is
    recent (`LAST_USE_RESOLUTION`). A file that cannot be touched (a read-only file
    system) keeps its time: it is only a hint for pruning."""
    now = time.time_ns()
    if now - max(info.st_atime_ns, info.st_mtime_ns) < LAST_USE_RESOLUTION * 1e9:
        return
    with contextlib.suppress(OSError, NotImplementedError):
        os.utime(fd, ns=(now, info.st_mtime_ns))


def atomic_write(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Publish `data` as `path`: written to a private temporary file (mode 0600) next to
    it, synced (unless `sync` is off: a hint that may be lost in a crash), then renamed
    onto it, so readers see the old file or the new, never a part."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            os.fchmod(file.fileno(), PRIVATE_FILE)  # mkstemp's mode already; said, not assumed
            file.write(data)
            if sync:
                file.flush()
                os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def is_temporary(name: str) -> bool:
    """Whether `name` is one of `atomic_write`'s temporary files."""
    return name.startswith(".") and name.endswith(".tmp")


def remove_folder(folder: Path) -> None:
    """Remove `folder`: renamed aside first (atomic), so a half-removed folder is never
    mistaken for an entry even if removal fails (e.g. files still open on NFS). A link is
    removed, never followed."""
    if folder.is_symlink():
        folder.unlink()
        return
    if not folder.exists():
        return
    aside = folder.with_name(stale_name(folder.name))
    os.rename(folder, aside)
    shutil.rmtree(aside, ignore_errors=True)


def stale_name(name: str) -> str:
    """The name a folder `name` gets while `remove_folder` removes it."""
    return f".{name}.stale-{uuid.uuid4().hex[:12]}"


def folder_size(folder: Path) -> int:
    """Bytes of the files under `folder` (links counted, never followed)."""
    total = 0
    for parent, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(parent, name)).st_size
    return total


def stale_folder_of(name: str) -> str | None:
    """The name of the folder that `remove_folder` left aside as `name`, or None."""
    match = _STALE.fullmatch(name)
    return None if match is None else match[1]


def children(folder: Path) -> list[os.DirEntry[str]]:
    """The items of `folder` by name; none if it is missing or not a folder."""
    try:
        with os.scandir(folder) as items:
            return sorted(items, key=lambda item: item.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
