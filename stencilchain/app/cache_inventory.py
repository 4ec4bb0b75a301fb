"""What the persistent caches hold, and removing it safely.

Only what stencilchain wrote is ever listed or removed: translation entries
`<translations>/<xx>/<key>.json`, build folders `<builds>/<key>/` that have a completion
marker or a lock file, and folders a failed removal left aside (`.<key>.stale-*`).
Anything else under the cache root is left alone, and symbolic links are never followed.

A build folder is removed only under its lock, taken without waiting: a folder another
process is building is skipped. Lock files are kept: removing one while another process
has it open would let two processes build the same folder at once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from stencilchain.app.errors import CLIError
from stencilchain.containers.application import ApplicationContainer
from stencilchain.steps.caches.build_cache import MARKER_NAME, BuildCache
from stencilchain.steps.caches.cache_root import cache_root
from stencilchain.steps.caches.translation_cache import TranslationCache
from stencilchain.steps.settings import CacheLifetime
from stencilchain.steps.workflow import CachedStep

TRANSLATION = "translation"
BUILD = "build"
SUPPORT = "support"  # shared by builds: CMake's compiler detection, precompiled headers
INCOMPLETE = "incomplete"  # no completion marker: being built, or a crashed build
STALE = "stale"  # left aside by a removal that did not finish
KINDS = (TRANSLATION, BUILD, SUPPORT, INCOMPLETE, STALE)

_BUILD_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")
_TRANSLATION_KEY = re.compile(r"[A-Za-z0-9_-]{2,200}")
_STALE = re.compile(r"\.([A-Za-z0-9_][A-Za-z0-9_.-]{0,199})\.stale-[0-9a-f]{12}")
_SUPPORT_PREFIXES = ("toolchain-", "pch-")
_LANGUAGE_FAMILY = {"cpp": "gtfn", "cuda": "gtfn", "sdfg": "dace"}
_TEMPORARY_AGE = 3600.0  # a temporary file this old was abandoned by its writer


@dataclasses.dataclass(frozen=True)
class CacheLocation:
    """The folders of the persistent caches the environment configures."""

    root: Path
    translations: Path
    builds: Path


@dataclasses.dataclass(frozen=True)
class Entry:
    """One translation entry or build folder.

    `name` is the program (entry point) it belongs to, or the key for support folders;
    `time` is when it was completed (the marker's or the entry's modification time);
    `metadata` is the build marker's metadata, or for a translation entry its program
    fingerprint, package version, language and a sha256 of its source code.
    """

    kind: str
    family: str
    name: str
    key: str
    path: Path
    size: int
    time: float
    metadata: Mapping[str, str]

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "family": self.family,
            "name": self.name,
            "key": self.key,
            "path": str(self.path),
            "bytes": self.size,
            "time": self.time,
        }


def locate(container: ApplicationContainer) -> CacheLocation:
    """The cache folders of the container's toolchains; CLIError for a session cache."""
    toolchain = container.gtfn.toolchain()
    cfg = toolchain.config
    if cfg.cache_lifetime is CacheLifetime.SESSION:
        raise CLIError(
            "the cache lifetime is 'session' (STENCILCHAIN_CACHE_LIFETIME): every process "
            "builds in a temporary folder removed when it exits; there is no persistent cache"
        )
    root = cache_root(cfg.cache_lifetime, cfg.cache_dir)
    translation = toolchain.workflow.translation
    translations = root / "translations"
    if isinstance(translation, CachedStep) and isinstance(translation.cache, TranslationCache):
        translations = translation.cache.root
    cache = getattr(toolchain.workflow.compilation, "cache", None)
    builds = cache.root if isinstance(cache, BuildCache) else root / "builds"
    return CacheLocation(root, translations, builds)


# --- listing ------------------------------------------------------------------------------


def scan(location: CacheLocation) -> list[Entry]:
    """Every entry of both caches, oldest first."""
    entries = [*scan_translations(location.translations), *scan_builds(location.builds)]
    return sorted(entries, key=lambda e: e.time)


def scan_translations(root: Path) -> Iterator[Entry]:
    for folder in _children(root):
        if not folder.is_dir(follow_symlinks=False) or len(folder.name) != 2:
            continue
        for item in _children(Path(folder.path)):
            if not item.is_file(follow_symlinks=False):
                continue
            stat = item.stat(follow_symlinks=False)
            key = item.name.removesuffix(".json")
            if (
                item.name.endswith(".json")
                and _TRANSLATION_KEY.fullmatch(key)
                and key[:2] == folder.name
            ):
                info = _translation_info(Path(item.path))
                family = _LANGUAGE_FAMILY.get(info.get("language", ""), "")
                name = info.get("entry_point", "")
                yield Entry(
                    TRANSLATION,
                    family,
                    name,
                    key,
                    Path(item.path),
                    stat.st_size,
                    stat.st_mtime,
                    info,
                )
            elif _abandoned_temporary(item.name, stat.st_mtime):
                path = Path(item.path)
                yield Entry(STALE, "", item.name, item.name, path, stat.st_size, stat.st_mtime, {})


def _abandoned_temporary(name: str, mtime: float) -> bool:
    """A writer's temporary file, old enough that its writer is gone (else: being written)."""
    return name.startswith(".") and name.endswith(".tmp") and time.time() - mtime > _TEMPORARY_AGE


def _translation_info(path: Path) -> dict[str, str]:
    """What a translation entry says about itself; {"problem": ...} if it is unreadable."""
    try:
        entry = json.loads(path.read_bytes())
        payload = json.loads(entry["payload"])
        return {
            "entry_point": str(payload["entry_point"]),
            "program": str(payload["program"]),
            "language": str(payload["language"]),
            "version": str(entry["version"]),
            "source_sha256": hashlib.sha256(str(payload["source_code"]).encode()).hexdigest(),
        }
    except (OSError, ValueError, KeyError, TypeError):
        return {"problem": "unreadable (corrupt, truncated or of another format)"}


def scan_builds(root: Path) -> Iterator[Entry]:
    cache = BuildCache(root)
    for item in _children(root):
        if not item.is_dir(follow_symlinks=False):
            continue
        folder = Path(item.path)
        stale = _STALE.fullmatch(item.name)
        if stale is not None:
            yield Entry(
                STALE,
                "",
                stale[1],
                item.name,
                folder,
                _size(folder),
                item.stat(follow_symlinks=False).st_mtime,
                {},
            )
            continue
        if _BUILD_KEY.fullmatch(item.name) is None:
            continue
        key = item.name
        found = cache.lookup(key)
        if found is not None:
            support = key.startswith(_SUPPORT_PREFIXES)
            metadata = dict(found.metadata)
            name = key if support else metadata.get("entry_point", key.rpartition("_")[0] or key)
            completed = _mtime(folder / MARKER_NAME, item.stat(follow_symlinks=False).st_mtime)
            family = metadata.get("family") or _family_of(key, metadata)
            kind = SUPPORT if support else BUILD
            yield Entry(kind, family, name, key, folder, _size(folder), completed, metadata)
        elif (root / f"{key}.lock").is_file():
            name = key.rpartition("_")[0] or key
            yield Entry(
                INCOMPLETE,
                "",
                name,
                key,
                folder,
                _size(folder),
                item.stat(follow_symlinks=False).st_mtime,
                {},
            )


def _family_of(key: str, metadata: Mapping[str, str]) -> str:
    """The family of a build whose marker does not say (`family`), from what it records."""
    if "sdfg_name" in metadata or "dace_library" in metadata or "_dace_" in key:
        return "dace"
    if key.startswith(_SUPPORT_PREFIXES) or "precompiled_header" in metadata:
        return "gtfn"
    return ""


def _children(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as items:
            return sorted(items, key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _mtime(path: Path, default: float) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return default


def _size(folder: Path) -> int:
    """Bytes of the files under `folder` (links counted, never followed)."""
    total = 0
    for parent, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(parent, name)).st_size
    return total


def lock_count(location: CacheLocation) -> int:
    return sum(1 for e in _children(location.builds) if e.name.endswith(".lock"))


def summarize(entries: Iterable[Entry]) -> list[dict[str, object]]:
    """Entries and bytes per (family, kind)."""
    groups: dict[tuple[str, str], list[int]] = {}
    for e in entries:
        group = groups.setdefault((e.family or "unknown", e.kind), [0, 0])
        group[0] += 1
        group[1] += e.size
    return [
        {"family": family, "kind": kind, "entries": count, "bytes": size}
        for (family, kind), (count, size) in sorted(
            groups.items(), key=lambda g: (g[0][0], KINDS.index(g[0][1]))
        )
    ]


# --- removing -----------------------------------------------------------------------------


@dataclasses.dataclass
class Removal:
    """What a clear or prune removed, and what it skipped because a process is building it."""

    removed: list[Entry] = dataclasses.field(default_factory=list)
    busy: list[Entry] = dataclasses.field(default_factory=list)

    @property
    def freed(self) -> int:
        return sum(e.size for e in self.removed)


def remove(location: CacheLocation, entries: Iterable[Entry], *, dry_run: bool = False) -> Removal:
    """Remove `entries` (from `scan(location)`), skipping build folders that are busy."""
    result = Removal()
    for entry in entries:
        if dry_run:
            busy = entry.kind in (BUILD, SUPPORT, INCOMPLETE) and _is_busy(
                location.builds, entry.key
            )
            (result.busy if busy else result.removed).append(entry)
        elif _remove(location, entry):
            result.removed.append(entry)
        else:
            result.busy.append(entry)
    if not dry_run:
        for folder in _children(location.translations):  # fan-out folders left empty
            if folder.is_dir(follow_symlinks=False) and len(folder.name) == 2:
                with contextlib.suppress(OSError):
                    os.rmdir(folder.path)
    return result


def _remove(location: CacheLocation, entry: Entry) -> bool:
    """Remove one entry; False if its build is busy."""
    if entry.path.parent not in (location.builds, location.translations) and (
        entry.path.parent.parent != location.translations
    ):
        raise AssertionError(f"{entry.path} is not inside the cache")  # never outside it
    if entry.kind == TRANSLATION or (entry.kind == STALE and not entry.path.is_dir()):
        with contextlib.suppress(FileNotFoundError):
            entry.path.unlink()
        return True
    if entry.kind == STALE:
        shutil.rmtree(entry.path, ignore_errors=True)
        return True
    with _try_lock(location.builds, entry.key) as locked:
        if not locked:
            return False
        if entry.path.is_dir() and not entry.path.is_symlink():
            # renamed aside first, so a half-removed folder never passes for a build
            aside = entry.path.with_name(f".{entry.key}.stale-{uuid.uuid4().hex[:12]}")
            os.rename(entry.path, aside)
            shutil.rmtree(aside, ignore_errors=True)
    return True


def _is_busy(root: Path, key: str) -> bool:
    with _try_lock(root, key) as locked:
        return not locked


@contextlib.contextmanager
def _try_lock(root: Path, key: str) -> Iterator[bool]:
    """The build lock of `key`, taken without waiting: yields False if another holds it."""
    fd = os.open(root / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


# --- pruning ------------------------------------------------------------------------------


def plan_prune(
    entries: list[Entry],
    *,
    max_size: int | None,
    older_than: float | None,
    now: float | None = None,
) -> list[Entry]:
    """What `prune` removes: leftovers (stale, and incomplete builds nobody is building),
    then entries older than `older_than` seconds, then the oldest until the rest fits in
    `max_size` bytes. Support folders count as used when the newest build was made, and go
    last, since every build needs them."""
    now = time.time() if now is None else now
    newest_build = max((e.time for e in entries if e.kind == BUILD), default=0.0)

    def used(entry: Entry) -> float:
        return max(entry.time, newest_build) if entry.kind == SUPPORT else entry.time

    chosen = [e for e in entries if e.kind in (STALE, INCOMPLETE)]
    rest = [e for e in entries if e.kind not in (STALE, INCOMPLETE)]
    if older_than is not None:
        chosen += [e for e in rest if now - used(e) > older_than]
        rest = [e for e in rest if now - used(e) <= older_than]
    if max_size is not None:
        total = sum(e.size for e in rest)
        for entry in sorted(rest, key=lambda e: (e.kind == SUPPORT, used(e))):
            if total <= max_size:
                break
            chosen.append(entry)
            total -= entry.size
    return chosen
