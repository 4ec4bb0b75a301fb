"""Keeping the persistent caches within a size: one policy for the runtime (after a new
build, `prune_after_build`) and the command line (`stencilchain cache prune`).

The policy (`plan_prune`): leftovers first (stale, damaged, and incomplete builds nobody
is building), then entries not used for a given age, then the least recently used until
the rest fits. Removal asks the caches (`discard`): a build folder only under its lock,
taken without waiting, so a folder that another process is building is skipped.

After a build the total is not measured by walking the caches: a small usage record at
the cache root (`USAGE_NAME`) holds the total of the last walk plus what builds added
since. Only when that estimate passes the limit, or the record is older than
`RESCAN_AFTER` (it misses what other processes' lost updates and translations added),
are the caches walked; a walk that finds them too big prunes down to `LOW_WATER` of the
limit, so that the next walk is many builds away, sparing support folders and entries
made or used in the last `RECENT` seconds. See docs/adr/0017-cache-size-limit-and-salt.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Iterable, Set
from pathlib import Path

from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.caches.cache_root import CacheLocation
from stencilchain.steps.caches.entries import (
    BUILD,
    DAMAGED,
    INCOMPLETE,
    STALE,
    SUPPORT,
    CacheEntry,
)
from stencilchain.steps.caches.files import atomic_write, folder_size, read_entry
from stencilchain.steps.caches.translation_cache import TranslationCache

LEFTOVERS = (STALE, INCOMPLETE, DAMAGED)  # never used again: pruned first
USAGE_NAME = ".stencilchain-usage.json"
RESCAN_AFTER = 3600.0
"""Seconds after which the usage record is not trusted: the next build walks the caches."""
RECENT = 300.0
"""Seconds during which an entry completed or used is never pruned after a build: another
thread or process may have just made or found it, and not loaded it yet."""
LOW_WATER = 0.9
"""A walk after a build that finds the caches over the limit prunes them to this fraction
of it (the command line prunes to the limit itself)."""
_FORMAT = 1


@dataclasses.dataclass(frozen=True)
class Caches:
    """The persistent caches of one location: translations and builds."""

    location: CacheLocation
    translations: TranslationCache
    builds: BuildCache

    @classmethod
    def at(cls, location: CacheLocation) -> Caches:
        return cls(location, location.translation_cache(), location.build_cache())

    def cache_of(self, entry: CacheEntry) -> TranslationCache | BuildCache:
        """The cache that listed `entry`."""
        return self.builds if entry.path.parent == self.builds.root else self.translations


def scan(caches: Caches) -> list[CacheEntry]:
    """Every entry of both caches, oldest (first completed) first."""
    entries = [*caches.translations.entries(), *caches.builds.entries()]
    return sorted(entries, key=lambda e: e.completed)


@dataclasses.dataclass
class Removal:
    """What a clear or prune removed, and what it skipped because a process is building it."""

    removed: list[CacheEntry] = dataclasses.field(default_factory=list)
    busy: list[CacheEntry] = dataclasses.field(default_factory=list)

    @property
    def freed(self) -> int:
        return sum(e.size for e in self.removed)


def remove(caches: Caches, entries: Iterable[CacheEntry], *, dry_run: bool = False) -> Removal:
    """Remove `entries` (from `scan(caches)`), skipping build folders that are busy."""
    result = Removal()
    for entry in entries:
        cache = caches.cache_of(entry)
        if isinstance(cache, BuildCache):
            if dry_run:
                done = entry.kind == STALE or not cache.is_busy(entry.key)
            else:
                done = cache.discard(entry, wait=False)
        else:
            done = dry_run or cache.discard(entry)
        (result.removed if done else result.busy).append(entry)
    return result


def plan_prune(
    entries: list[CacheEntry],
    *,
    max_size: int | None,
    older_than: float | None,
    now: float | None = None,
    keep: Set[Path] = frozenset(),
) -> list[CacheEntry]:
    """What `prune` removes: leftovers (stale, damaged, and incomplete builds nobody is
    building), then entries not used for `older_than` seconds, then the least recently
    used until the rest fits in `max_size` bytes. Support folders count as used when the
    last build was, and go last, since every build needs them. Entries whose path is in
    `keep` (a build just made) are never chosen, but count in the size."""
    now = time.time() if now is None else now
    last_build = max((e.last_used for e in entries if e.kind == BUILD), default=0.0)

    def used(entry: CacheEntry) -> float:
        return max(entry.last_used, last_build) if entry.kind == SUPPORT else entry.last_used

    chosen = [e for e in entries if e.kind in LEFTOVERS and e.path not in keep]
    rest = [e for e in entries if e.kind not in LEFTOVERS or e.path in keep]
    if older_than is not None:
        chosen += [e for e in rest if now - used(e) > older_than and e.path not in keep]
        rest = [e for e in rest if now - used(e) <= older_than or e.path in keep]
    if max_size is not None:
        total = sum(e.size for e in rest)
        candidates = [e for e in rest if e.path not in keep]
        for entry in sorted(candidates, key=lambda e: (e.kind == SUPPORT, used(e))):
            if total <= max_size:
                break
            chosen.append(entry)
            total -= entry.size
    return chosen


@dataclasses.dataclass(frozen=True)
class PruneResult:
    """A prune: what it removed or skipped (busy), and the bytes left in the caches."""

    removal: Removal
    remaining: int


def prune(
    caches: Caches,
    *,
    max_size: int | None,
    older_than: float | None = None,
    dry_run: bool = False,
    keep: Set[Path] = frozenset(),
) -> PruneResult:
    """Walk the caches and remove what `plan_prune` chooses (nothing with `dry_run`); the
    usage record then holds the bytes left."""
    entries = scan(caches)
    removal = _remove_planned(caches, entries, max_size, older_than, keep, dry_run=dry_run)
    remaining = sum(e.size for e in entries) - removal.freed
    if not dry_run:
        _write_usage(caches.location, remaining, time.time())
    return PruneResult(removal, remaining)


def _remove_planned(
    caches: Caches,
    entries: list[CacheEntry],
    max_size: int | None,
    older_than: float | None,
    keep: Set[Path],
    *,
    dry_run: bool = False,
    now: float | None = None,
) -> Removal:
    """Remove what `plan_prune` chooses; where a chosen build is busy (another process
    holds its lock), plan again without it, so that the rest still fits if it can."""
    removal = Removal()
    keep = set(keep)
    while True:
        gone = {e.path for e in removal.removed}
        rest = [e for e in entries if e.path not in gone]
        chosen = plan_prune(rest, max_size=max_size, older_than=older_than, now=now, keep=keep)
        step = remove(caches, chosen, dry_run=dry_run)
        removal.removed += step.removed
        removal.busy += step.busy
        if not step.busy:
            return removal
        keep |= {e.path for e in step.busy}


def prune_after_build(
    location: CacheLocation, max_size: int, built: Path, *, now: float | None = None
) -> PruneResult | None:
    """Keep the caches of `location` within `max_size` bytes after the build folder `built`
    was made: None (nothing walked, nothing removed) while the usage record says they fit;
    else the caches are walked, and if they are over the limit the least recently used
    entries are removed down to `LOW_WATER` of it: never `built`, never a folder being
    built, never a support folder (`stencilchain cache prune` removes those, last), which
    a build in another process may be reading, and never an entry completed or used in
    the last `RECENT` seconds (it may be about to load elsewhere: until then the caches
    may stay over the limit)."""
    now = time.time() if now is None else now
    added = folder_size(built)
    usage = _read_usage(location, now)
    if usage is not None and usage[0] + added <= max_size:
        _write_usage(location, usage[0] + added, usage[1])
        return None
    caches = Caches.at(location)
    entries = scan(caches)
    total = sum(e.size for e in entries)
    if total <= max_size:
        _write_usage(location, total, now)
        return PruneResult(Removal(), total)
    target = int(max_size * LOW_WATER)
    # support folders stay: a build running in another process may be reading them; and
    # what was just made or found may be about to load in another thread or process
    keep = {built}
    keep |= {e.path for e in entries if e.kind == SUPPORT}
    keep |= {e.path for e in entries if now - max(e.completed, e.last_used) < RECENT}
    removal = _remove_planned(caches, entries, target, None, keep, now=now)
    remaining = total - removal.freed
    _write_usage(location, remaining, now)
    return PruneResult(removal, remaining)


def _read_usage(location: CacheLocation, now: float) -> tuple[int, float] | None:
    """(bytes, when they were last measured) of the usage record, or None if it is missing,
    unreadable or too old to trust."""
    try:
        _, raw = read_entry(location.root / USAGE_NAME)
        record = json.loads(raw)
        size, scanned = record["bytes"], record["scanned"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if record.get("format") != _FORMAT or not isinstance(size, int) or size < 0:
        return None
    if not isinstance(scanned, (int, float)) or not 0 <= now - scanned <= RESCAN_AFTER:
        return None
    return size, float(scanned)


def _write_usage(location: CacheLocation, size: int, scanned: float) -> None:
    """Record `size` bytes, measured at `scanned`; a record that cannot be written is left
    as it is (the next build walks the caches)."""
    data = json.dumps({"format": _FORMAT, "bytes": size, "scanned": scanned}).encode()
    path = location.root / USAGE_NAME
    with contextlib.suppress(OSError):  # renamed into place, not synced: a hint, not an entry
        atomic_write(path, data, sync=False)


def usage_record(location: CacheLocation) -> Path:
    """The file of `location`'s usage record (it may not exist)."""
    return location.root / USAGE_NAME
