"""What a toolchain would do with a program, cache-wise, without building anything:
its translation key and build key, and whether each is in the caches."""

from __future__ import annotations

import dataclasses
from typing import Any

from stencilchain.program import ir
from stencilchain.runtime.toolchain import Toolchain
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.caches.translation_cache import TranslationCache
from stencilchain.steps.stages import ExtensionSource, ProgramSource
from stencilchain.steps.workflow import CachedStep


@dataclasses.dataclass(frozen=True)
class Probe:
    """The keys of one program in one toolchain's caches, and whether each hits.

    `translation_key` is None when translations are not cached; `build_key` is None when
    the compiler does not tell its key (it has no `plan(source)`)."""

    program: ir.Program
    source: ProgramSource
    extension: ExtensionSource
    translation_cache: TranslationCache | None
    translation_key: str | None
    translation_hit: bool
    build_cache: BuildCache | None
    build_key: str | None
    build_hit: bool
    plan: Any


def probe(toolchain: Toolchain, program: ir.Program) -> Probe:
    """Translate (from the cache on a hit; nothing is written), bind, and plan the build."""
    workflow = toolchain.workflow
    translation = workflow.translation
    translation_cache, translation_key, source = None, None, None
    if isinstance(translation, CachedStep):
        translation_key = translation.key(program)
        if isinstance(translation.cache, TranslationCache):
            translation_cache = translation.cache
        text = translation.cache.get(translation_key)
        if text is not None:
            try:
                source = translation.decode(program, text)
            except (ValueError, KeyError, TypeError):
                source = None  # unreadable: a miss, as CachedStep treats it
        translation_hit = source is not None
        if source is None:
            source = translation.step(program)
    else:
        translation_hit = False
        source = translation(program)
    extension = workflow.bindings(source)
    compilation = workflow.compilation
    plan_of = getattr(compilation, "plan", None)
    cache = getattr(compilation, "cache", None)
    plan = plan_of(extension) if callable(plan_of) else None
    build_key = getattr(plan, "key", None) if plan is not None else None
    build_cache = cache if isinstance(cache, BuildCache) else None
    build_hit = False
    if build_cache is not None and isinstance(build_key, str):
        found = build_cache.lookup(build_key)
        module = None if found is None else found.metadata.get("module")
        build_hit = found is not None and (module is None or (found.folder / module).is_file())
    return Probe(
        program=program,
        source=source,
        extension=extension,
        translation_cache=translation_cache,
        translation_key=translation_key,
        translation_hit=translation_hit,
        build_cache=build_cache,
        build_key=build_key if isinstance(build_key, str) else None,
        build_hit=build_hit,
        plan=plan,
    )
