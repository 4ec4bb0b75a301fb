"""What the persistent caches hold, and removing it safely: asked of the caches.

The caches list their own entries (`entries()`: only what stencilchain wrote, never
through a link) and remove them (`discard`: a build folder only under its lock, taken
without waiting, so a folder another process is building is skipped; lock files are
kept). This module finds the caches the configuration names, sums and orders entries,
and chooses what `prune` removes.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable

from stencilchain.app.errors import CLIError
from stencilchain.containers.application import ApplicationContainer
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.caches.cache_root import CacheLocation
from stencilchain.steps.caches.entries import (
    BUILD,
    DAMAGED,
    INCOMPLETE,
    KINDS,
    STALE,
    SUPPORT,
    CacheEntry,
)
from stencilchain.steps.caches.translation_cache import TranslationCache
from stencilchain.steps.settings import CacheLifetime

LEFTOVERS = (STALE, INCOMPLETE, DAMAGED)  # never used again: pruned first


@dataclasses.dataclass(frozen=True)
class Caches:
    """The persistent caches a configuration names."""

    location: CacheLocation
    translations: TranslationCache
    builds: BuildCache

    @classmethod
    def at(cls, location: CacheLocation) -> Caches:
        return cls(location, location.translation_cache(), location.build_cache())

    def cache_of(self, entry: CacheEntry) -> TranslationCache | BuildCache:
        """The cache that listed `entry`."""
        return self.builds if entry.path.parent == self.builds.root else self.translations


def locate(container: ApplicationContainer) -> Caches:
    """The caches of the container's configuration; CLIError for a session cache."""
    if container.gtfn.toolchain_config().cache_lifetime is CacheLifetime.SESSION:
        raise CLIError(
            "the cache lifetime is 'session' (STENCILCHAIN_CACHE_LIFETIME): every process "
            "builds in a temporary folder removed when it exits; there is no persistent cache"
        )
    return Caches.at(container.gtfn.cache_location())


def scan(caches: Caches) -> list[CacheEntry]:
    """Every entry of both caches, oldest (first completed) first."""
    entries = [*caches.translations.entries(), *caches.builds.entries()]
    return sorted(entries, key=lambda e: e.completed)


def as_dict(entry: CacheEntry) -> dict[str, object]:
    """An entry as the JSON output shows it (`time` is when it was completed)."""
    return {
        "kind": entry.kind,
        "family": entry.family,
        "device": entry.device,
        "build_type": entry.build_type,
        "name": entry.name,
        "key": entry.key,
        "path": str(entry.path),
        "bytes": entry.size,
        "time": entry.completed,
        "last_used": entry.last_used,
        **({"problem": entry.problem} if entry.problem else {}),
    }


def summarize(entries: Iterable[CacheEntry]) -> list[dict[str, object]]:
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


# --- pruning ------------------------------------------------------------------------------


def plan_prune(
    entries: list[CacheEntry],
    *,
    max_size: int | None,
    older_than: float | None,
    now: float | None = None,
) -> list[CacheEntry]:
    """What `prune` removes: leftovers (stale, damaged, and incomplete builds nobody is
    building), then entries not used for `older_than` seconds, then the least recently
    used until the rest fits in `max_size` bytes. Support folders count as used when the
    last build was, and go last, since every build needs them."""
    now = time.time() if now is None else now
    last_build = max((e.last_used for e in entries if e.kind == BUILD), default=0.0)

    def used(entry: CacheEntry) -> float:
        return max(entry.last_used, last_build) if entry.kind == SUPPORT else entry.last_used

    chosen = [e for e in entries if e.kind in LEFTOVERS]
    rest = [e for e in entries if e.kind not in LEFTOVERS]
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
