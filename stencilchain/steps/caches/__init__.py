"""The caches of the toolchain: where they live, translated sources, and build folders;
what their entries record, and whether an entry can be trusted."""

from __future__ import annotations

from stencilchain.steps.caches.build_cache import BuildCache, BuildFunction, BuildResult
from stencilchain.steps.caches.cache_root import CacheLocation, cache_location, cache_root
from stencilchain.steps.caches.entries import KINDS, CacheEntry
from stencilchain.steps.caches.translation_cache import TranslationCache

__all__ = [
    "KINDS",
    "BuildCache",
    "BuildFunction",
    "BuildResult",
    "CacheEntry",
    "CacheLocation",
    "TranslationCache",
    "cache_location",
    "cache_root",
]
