"""What the persistent caches hold, and removing it safely: asked of the caches.

The caches list their own entries (`entries()`: only what stencilchain wrote, never
through a link) and remove them (`discard`: a build folder only under its lock, taken
without waiting, so a folder another process is building is skipped; lock files are
kept). This module finds the caches the configuration names and shows their entries;
what `prune` removes is the policy the runtime applies after builds too
(`stencilchain.steps.caches.pruning`, re-exported here).
"""

from __future__ import annotations

from collections.abc import Iterable

from stencilchain.app.errors import CLIError
from stencilchain.containers.application import ApplicationContainer
from stencilchain.steps.caches.entries import KINDS, CacheEntry
from stencilchain.steps.caches.pruning import (
    LEFTOVERS,
    Caches,
    PruneResult,
    Removal,
    plan_prune,
    prune,
    remove,
    scan,
)
from stencilchain.steps.settings import CacheLifetime

__all__ = [
    "LEFTOVERS",
    "Caches",
    "PruneResult",
    "Removal",
    "as_dict",
    "locate",
    "plan_prune",
    "prune",
    "remove",
    "scan",
    "summarize",
]


def locate(container: ApplicationContainer) -> Caches:
    """The caches of the container's configuration; CLIError for a session cache."""
    if container.gtfn.toolchain_config().cache_lifetime is CacheLifetime.SESSION:
        raise CLIError(
            "the cache lifetime is 'session' (STENCILCHAIN_CACHE_LIFETIME): every process "
            "builds in a temporary folder removed when it exits; there is no persistent cache"
        )
    return Caches.at(container.gtfn.cache_location())


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
