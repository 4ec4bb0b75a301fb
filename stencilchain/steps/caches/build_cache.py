"""Build folders keyed by content, safe under concurrent processes and crashes, and trusted
only when no other user can have written them.

Each key owns a folder `<root>/<key>` and a lock file `<root>/<key>.lock`. A build runs
under an exclusive `flock` of the lock file, so concurrent processes build once and the
others wait; a small JSON completion marker is written last, atomically, so a folder
without one (a crashed, killed or failed build) is never trusted: it is cleared and
rebuilt. A complete folder is found without taking the lock, after checking that it and
every folder up to the cache root belong to this user alone (see `trust`): its module is
about to run in this process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import logging
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import stencilchain.steps.caches.entries as kinds
from stencilchain.errors import CacheDirectoryError
from stencilchain.steps.caches.entries import CacheEntry, settings_dict, times
from stencilchain.steps.caches.files import (
    atomic_write,
    children,
    folder_size,
    open_entry,
    read_all,
    read_entry,
    record_use,
    remove_folder,
    stale_folder_of,
)
from stencilchain.steps.caches.trust import (
    PRIVATE_FILE,
    PRIVATE_FOLDER,
    TrustedFolder,
    make_private_folder,
    require_trusted,
    require_trusted_file,
)
from stencilchain.steps.family import Family, family_of_marker

_log = logging.getLogger(__name__)

MARKER_NAME = ".stencilchain-complete.json"
_FORMAT = 1
_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")
_LOCK_SUFFIX = ".lock"
_RISK = (
    "Another user could replace the compiled module in it, which this process would then "
    "load and run as its own code."
)
# What marks a build of a program in its metadata: the compilers record `entry_point`
# (and ExtensionSource.key_metadata `key_program`); a folder recording neither is support
# shared by the builds (CMake's compiler detection, precompiled headers).
_PROGRAM_FIELDS = ("entry_point", "key_program")

BuildFunction = Callable[[Path], Mapping[str, str]]
"""Builds into the (empty) folder it is given; returns metadata stored in the marker."""

BuildFiles = dict[str, tuple[int, bytes]]
"""A complete build as `export` gives it: path in the folder -> (mode bits, content)."""


@dataclasses.dataclass(frozen=True)
class BuildResult:
    """A complete build folder, its metadata, and whether this call built it."""

    folder: Path
    metadata: Mapping[str, str]
    built: bool


@dataclasses.dataclass(frozen=True)
class BuildCache(TrustedFolder):
    """Build folders under `root`, one per key.

    Trusted as `TrustedFolder` says: only if no other user can write to it or to a
    folder up to `cache_root`. `salt` is mixed into every key made for this cache (by
    `plan_build` and the support folders' keys; see `salted`): builds made under another
    salt are never found, and nothing is removed. `families` say, in a listing, which
    family made a build whose marker does not name it (they change no key).
    """

    salt: str = dataclasses.field(default="", kw_only=True)
    families: tuple[Family, ...] = dataclasses.field(
        default=(), kw_only=True, repr=False, compare=False
    )

    KIND = "build cache"
    KEY = _KEY
    KEY_RULE = "1 to 200 characters from [A-Za-z0-9_.-], not starting with '.' or '-'"

    def folder(self, key: str) -> Path:
        """The build folder of `key` (it may not exist yet)."""
        return self.root / self.checked_key(key)

    def lookup(self, key: str) -> BuildResult | None:
        """The complete build of `key`, or None; takes no lock.

        CacheSecurityError if the build exists but its folder, its marker or a folder up
        to the cache root could have been written by another user.
        """
        folder = self.folder(key)
        metadata, _ = self._trusted_marker(folder, key)
        return None if metadata is None else BuildResult(folder, metadata, built=False)

    def get_or_build(self, key: str, build: BuildFunction) -> BuildResult:
        """The complete build of `key`, running `build(folder)` first if there is none.

        Concurrent callers for one key (threads or processes) wait for the one that
        builds. If `build` raises, the folder keeps what it wrote (e.g. a log) but no
        marker, and the exception propagates; the next call clears it and builds again.
        A build is made only in a folder no other user can write to (CacheSecurityError).
        """
        found = self.lookup(key)
        if found is not None:
            return found
        folder = self.folder(key)
        with self._locked(key, wait=True):
            metadata, problem = self._trusted_marker(folder, key)
            if metadata is not None:  # another process finished it while we waited
                return BuildResult(folder, metadata, built=False)
            require_trusted(self.root, self.top, entry=f"the build cache {self.root}", risk=_RISK)
            if problem:  # said once, by the process that rebuilds it
                _log.warning(
                    "build cache entry %s is damaged: %s; it is built again", folder, problem
                )
            remove_folder(folder)
            folder.mkdir(mode=PRIVATE_FOLDER)
            metadata = dict(build(folder))
            for name, value in metadata.items():
                if not isinstance(name, str) or not isinstance(value, str):
                    raise TypeError(f"build metadata must map str to str, got {name!r}: {value!r}")
            data = json.dumps({"format": _FORMAT, "key": key, "metadata": metadata}).encode()
            atomic_write(folder / MARKER_NAME, data)
        return BuildResult(folder, metadata, built=True)

    def export(self, key: str) -> BuildFiles | None:
        """The files of the complete build of `key` (its marker among them), to `install`
        in another cache, e.g. a node-local one; None if there is no complete build. Links
        are left out: a build's files are its own."""
        found = self.lookup(key)
        if found is None:
            return None
        files: BuildFiles = {}
        for parent, _, names in os.walk(found.folder):
            for name in names:
                path = Path(parent, name)
                info = path.lstat()
                if stat.S_ISREG(info.st_mode):
                    relative = path.relative_to(found.folder).as_posix()
                    files[relative] = (stat.S_IMODE(info.st_mode), path.read_bytes())
        return files

    def install(self, key: str, files: BuildFiles) -> BuildResult:
        """The complete build of `key` made from `files` (what `export` gave in another
        cache), unless this cache has one already. The marker is written last, as a build
        writes it: an interrupted install is an incomplete folder, never trusted. ValueError
        if `files` has no valid marker for `key` or a path that leaves the folder."""
        raw = files.get(MARKER_NAME)
        metadata, problem = _parse_marker(raw[1], key) if raw is not None else (None, "none")
        if metadata is None:
            raise ValueError(f"the files of build {key!r} have no valid marker ({problem})")
        for name in files:
            parts = Path(name).parts
            if not parts or Path(name).is_absolute() or ".." in parts:
                raise ValueError(f"build {key!r}: the file {name!r} is outside its folder")

        def build(folder: Path) -> Mapping[str, str]:
            for name, (mode, content) in files.items():
                if name == MARKER_NAME:
                    continue
                path = folder / name
                path.parent.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
                path.write_bytes(content)
                path.chmod(mode & 0o700)  # never group or other access (see trust)
            return metadata

        return self.get_or_build(key, build)

    def discard(self, item: str | CacheEntry, *, wait: bool = True) -> bool:
        """Remove a build (by key, or an entry of `entries()`), e.g. one found damaged.

        Waits for a build of it that is running, or with `wait=False` removes nothing and
        returns False if one is. Lock files are kept: removing one while another process
        holds it would let two processes build the same folder at once.
        """
        if isinstance(item, CacheEntry):
            self._require_own(item)
            if item.kind == kinds.STALE:  # nobody builds in a folder left aside
                shutil.rmtree(item.path, ignore_errors=True)
                return True
            key = item.key
        else:
            key = item
        folder = self.folder(key)
        with self._locked(key, wait=wait) as locked:
            if locked:
                remove_folder(folder)
            return locked

    def is_busy(self, key: str) -> bool:
        """Whether another process or thread holds the lock of `key` (is building it)."""
        with self._locked(key, wait=False) as locked:
            return not locked

    def lock_count(self) -> int:
        """The number of lock files (one per key ever built; they are never removed)."""
        return sum(1 for item in children(self.root) if _lock_key(item) is not None)

    def entries(self) -> Iterator[CacheEntry]:
        """Every build folder stencilchain made under `root`, by key: complete builds
        (BUILD, or SUPPORT shared by builds), INCOMPLETE ones (a lock, no marker), DAMAGED
        ones (a marker that cannot be read) and STALE ones (left aside by a removal).
        Anything else, and every symbolic link, is not the cache's and is skipped. Listing
        is not using: no access time changes, and no trust check (nothing is loaded)."""
        items = children(self.root)
        locks = {key for key in map(_lock_key, items) if key is not None}
        for item in items:
            if not item.is_dir(follow_symlinks=False):
                continue
            folder = Path(item.path)
            original = stale_folder_of(item.name)
            if original is not None:
                mtime = item.stat(follow_symlinks=False).st_mtime
                yield CacheEntry(
                    kinds.STALE, item.name, folder, folder_size(folder), mtime, mtime,
                    name=original,
                )  # fmt: skip
            elif _KEY.fullmatch(item.name) is not None:
                entry = _entry(folder, item.name, self.families, has_lock=item.name in locks)
                if entry is not None:
                    yield entry

    def _trusted_marker(self, folder: Path, key: str) -> tuple[dict[str, str] | None, str]:
        """(metadata, "") of a complete, trusted build of `key` in `folder`; (None, "")
        if there is none (no marker: no build, or an unfinished one); (None, problem) if
        its marker cannot be used (unreadable, a link, corrupt, of another key)."""
        marker = folder / MARKER_NAME
        try:
            fd = open_entry(marker)
        except FileNotFoundError:
            return None, ""
        except OSError as error:
            return None, f"its completion marker cannot be read ({error})"
        try:
            info = os.fstat(fd)
            require_trusted_file(
                marker, info, self.top, entry=f"the build cache entry {folder}", risk=_RISK
            )
            try:
                raw = read_all(fd, info.st_size)
            except OSError as error:
                return None, f"its completion marker cannot be read ({error})"
            metadata, problem = _parse_marker(raw, key)
            if metadata is not None:
                record_use(fd, info)
            return metadata, problem
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def _locked(self, key: str, *, wait: bool) -> Iterator[bool]:
        """The lock of `key`; yields False if `wait` is off and another holds it."""
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
        lock = self.folder(key).with_name(key + _LOCK_SUFFIX)
        try:
            make_private_folder(self.root, self.top)
            fd = os.open(lock, flags, PRIVATE_FILE)
        except OSError as error:
            raise unwritable_cache(self.root, error) from error
        try:
            try:  # released by the kernel if this process dies
                fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def _require_own(self, entry: CacheEntry) -> None:
        """ValueError unless `entry` names a folder of this cache (never anything outside)."""
        name = entry.path.name
        if entry.kind == kinds.STALE:
            own = stale_folder_of(name) is not None
        else:
            own = name == entry.key and _KEY.fullmatch(name) is not None
        if entry.path.parent != self.root or not own:
            raise ValueError(
                f"{entry.path} is not a {entry.kind} folder of the build cache {self.root}"
            )


def unwritable_cache(folder: Path, error: OSError) -> CacheDirectoryError:
    """The error of a cache folder that cannot be created or written (`error` says why)."""
    return CacheDirectoryError(
        f"the cache folder {folder} cannot be written ({error.strerror or error}): the "
        "caches need a folder that this user can create and write to. Set "
        "STENCILCHAIN_CACHE_DIR (or a container's cache_dir) to one."
    )


def _lock_key(item: os.DirEntry[str]) -> str | None:
    """The key whose lock file `item` is, or None."""
    key = item.name.removesuffix(_LOCK_SUFFIX)
    if key == item.name or _KEY.fullmatch(key) is None:
        return None
    return key if item.is_file(follow_symlinks=False) else None


def _entry(
    folder: Path, key: str, families: tuple[Family, ...], *, has_lock: bool
) -> CacheEntry | None:
    """The entry of the build folder of `key`; None if it is not the cache's (no marker,
    no lock)."""
    try:
        info, raw = read_entry(folder / MARKER_NAME)
    except OSError:
        if not has_lock:
            return None
        mtime = folder.lstat().st_mtime
        return CacheEntry(
            kinds.INCOMPLETE, key, folder, folder_size(folder), mtime, mtime, name=key
        )
    metadata, problem = _parse_marker(raw, key)
    completed, last_used = times(info)
    size = folder_size(folder)
    if metadata is None:
        return CacheEntry(
            kinds.DAMAGED, key, folder, size, completed, last_used, name=key, problem=problem
        )
    context = settings_dict(metadata.get("key_context"))
    program = any(field in metadata for field in _PROGRAM_FIELDS)
    return CacheEntry(
        kinds.BUILD if program else kinds.SUPPORT,
        key,
        folder,
        size,
        completed,
        last_used,
        family=family_of_marker(families, key, metadata),
        name=metadata.get("entry_point", key),
        device=metadata.get("device") or str(context.get("device") or ""),
        build_type=metadata.get("build_type") or str(context.get("build_type") or ""),
        version=str(context.get("package") or ""),
        program=metadata.get("key_program", ""),
        translation_settings=settings_dict(metadata.get("translation_settings")),
        bindings_settings=settings_dict(metadata.get("bindings_settings")),
        build_context=context,
        metadata=metadata,
    )


def _parse_marker(raw: bytes, key: str) -> tuple[dict[str, str] | None, str]:
    """(metadata, "") of a valid marker of `key`, else (None, what is wrong with it)."""
    try:
        marker = json.loads(raw)
    except ValueError:
        return None, "its completion marker is not valid JSON (corrupt or truncated)"
    if not isinstance(marker, dict) or marker.get("format") != _FORMAT:
        return None, "its completion marker is of an unknown format"
    if marker.get("key") != key:
        return None, f"its completion marker is for another key ({marker.get('key')!r})"
    metadata = marker.get("metadata")
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        return None, "its completion marker's metadata is not text"
    return metadata, ""
