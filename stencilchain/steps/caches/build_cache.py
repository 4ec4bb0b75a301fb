"""Build folders keyed by content, safe under concurrent processes and crashes.

Each key owns a folder `<root>/<key>` and a lock file `<root>/<key>.lock`. A build runs
under an exclusive `flock` of the lock file, so concurrent processes build once and the
others wait; a small JSON completion marker is written last, atomically, so a folder
without one (a crashed, killed or failed build) is never trusted: it is cleared and
rebuilt. A complete folder is found without taking the lock.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

MARKER_NAME = ".stencilchain-complete.json"
_FORMAT = 1
_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")

BuildFunction = Callable[[Path], Mapping[str, str]]
"""Builds into the (empty) folder it is given; returns metadata stored in the marker."""


@dataclasses.dataclass(frozen=True)
class BuildResult:
    """A complete build folder, its metadata, and whether this call built it."""

    folder: Path
    metadata: Mapping[str, str]
    built: bool


@dataclasses.dataclass(frozen=True)
class BuildCache:
    """Build folders under `root`, one per key."""

    root: Path

    def folder(self, key: str) -> Path:
        """The build folder of `key` (it may not exist yet)."""
        if not isinstance(key, str) or _KEY.fullmatch(key) is None:
            raise ValueError(
                f"build cache key {key!r} is not valid: expected 1 to 200 characters from "
                "[A-Za-z0-9_.-], not starting with '.' or '-'"
            )
        return self.root / key

    def lookup(self, key: str) -> BuildResult | None:
        """The complete build of `key`, or None; takes no lock."""
        folder = self.folder(key)
        metadata = _read_marker(folder, key)
        return None if metadata is None else BuildResult(folder, metadata, built=False)

    def get_or_build(self, key: str, build: BuildFunction) -> BuildResult:
        """The complete build of `key`, running `build(folder)` first if there is none.

        Concurrent callers for one key (threads or processes) wait for the one that
        builds. If `build` raises, the folder keeps what it wrote (e.g. a log) but no
        marker, and the exception propagates; the next call clears it and builds again.
        """
        found = self.lookup(key)
        if found is not None:
            return found
        folder = self.folder(key)
        with self._locked(key):
            metadata = _read_marker(folder, key)
            if metadata is not None:  # another process finished it while we waited
                return BuildResult(folder, metadata, built=False)
            _clear(folder)
            folder.mkdir(parents=True)
            metadata = dict(build(folder))
            for name, value in metadata.items():
                if not isinstance(name, str) or not isinstance(value, str):
                    raise TypeError(f"build metadata must map str to str, got {name!r}: {value!r}")
            _write_marker(folder, key, metadata)
        return BuildResult(folder, metadata, built=True)

    def discard(self, key: str) -> None:
        """Remove the build of `key` (e.g. found damaged), waiting for a running build."""
        with self._locked(key):
            _clear(self.folder(key))

    @contextlib.contextmanager
    def _locked(self, key: str) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released by the kernel if this process dies
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock


def _read_marker(folder: Path, key: str) -> dict[str, str] | None:
    """The metadata of a complete build of `key` in `folder`, or None."""
    try:
        marker = json.loads((folder / MARKER_NAME).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(marker, dict) or marker.get("format") != _FORMAT or marker.get("key") != key:
        return None
    metadata = marker.get("metadata")
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        return None
    return metadata


def _write_marker(folder: Path, key: str, metadata: Mapping[str, str]) -> None:
    """Publish the marker atomically (temporary file, fsync, rename): it is written last."""
    data = json.dumps({"format": _FORMAT, "key": key, "metadata": dict(metadata)}).encode()
    fd, tmp = tempfile.mkstemp(prefix=f"{MARKER_NAME}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, folder / MARKER_NAME)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _clear(folder: Path) -> None:
    """Remove a stale folder: renamed aside first (atomic), so a half-removed folder is
    never mistaken for a build even if removal fails (e.g. files still open on NFS)."""
    if not folder.exists():
        return
    aside = folder.with_name(f".{folder.name}.stale-{uuid.uuid4().hex[:12]}")
    os.rename(folder, aside)
    shutil.rmtree(aside, ignore_errors=True)
