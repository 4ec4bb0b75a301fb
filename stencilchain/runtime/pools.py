"""Compiled-program pools: each toolchain's loaded programs, by program fingerprint.

A container provides one `CompiledProgramPools` (a Singleton a host application may
override or share); toolchains built from it with the same settings share a pool. A
program is built once: callers that want the same program of the same toolchain wait for
the one that builds it, while different programs build at the same time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class CompiledProgramPools(Generic[T]):
    """Pools keyed by toolchain identity, each mapping a program fingerprint to its value."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards the dicts, never held while building
        self._pools: dict[str, dict[str, T]] = {}
        self._building: dict[tuple[str, str], threading.Lock] = {}

    def pool(self, identity: str) -> dict[str, T]:
        """The pool of the toolchain `identity` (read it; `get_or_build` fills it)."""
        with self._lock:
            return self._pools.setdefault(identity, {})

    def get_or_build(self, identity: str, key: str, build: Callable[[], T]) -> T:
        """The value of `key` in the pool of `identity`, built by `build()` if missing.

        One lock per (identity, key): a second caller for the same program waits for the
        first build; a caller for another program does not."""
        pool = self.pool(identity)
        found = pool.get(key)
        if found is not None:
            return found
        with self._lock:
            lock = self._building.setdefault((identity, key), threading.Lock())
        with lock:
            found = pool.get(key)
            if found is None:
                found = build()
                with self._lock:
                    pool[key] = found
                    self._building.pop((identity, key), None)
        return found
