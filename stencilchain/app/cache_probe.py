"""What a toolchain would do with a program, cache-wise, without building anything or
writing to a cache: its translation key and build key, whether each is in the caches, and
the settings a cached entry would have to record to match.

Everything is asked of the toolchain's workflow (its keys, a read-only lookup of the
translation, the bare translation on a miss, the bindings) and of its compiler's plan.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from stencilchain.program import ir
from stencilchain.runtime.toolchain import Toolchain
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.caches.entries import settings_dict
from stencilchain.steps.stages import ExtensionSource, ProgramSource, step_settings


class _Plan(Protocol):
    """What a compiler's plan says of a build: its key and its build context (JSON)."""

    @property
    def key(self) -> str: ...

    @property
    def context(self) -> str: ...

    @property
    def context_digest(self) -> str: ...


@runtime_checkable
class _Planner(Protocol):
    """A compiler that tells its build plan and its build cache (both families do)."""

    @property
    def cache(self) -> BuildCache: ...

    def plan(self, source: Any, /) -> _Plan: ...


@dataclasses.dataclass(frozen=True)
class Probe:
    """The keys of one program in one toolchain's caches, whether each hits, and what the
    toolchain's settings are now (to compare with what an entry recorded).

    `translation_key` is None when translations are not cached; `build_key` is None when
    the compiler does not tell its plan. As dicts: `translation_settings` are the bare
    translation's `step_settings` (what a translation entry records); `source_settings`
    and `bindings_settings` what the extension's two sources record (what a build marker
    records); `build_context` the plan's build context."""

    program: ir.Program
    source: ProgramSource
    extension: ExtensionSource
    translation_key: str | None
    translation_hit: bool
    translation_settings: Mapping[str, Any]
    source_settings: Mapping[str, Any]
    bindings_settings: Mapping[str, Any]
    build_cache: BuildCache | None
    build_key: str | None
    build_hit: bool
    build_context: Mapping[str, Any]
    context_digest: str | None


def probe(toolchain: Toolchain, program: ir.Program) -> Probe:
    """Look the program up in both caches (nothing is written), translating with the bare
    translation on a miss, binding, and planning the build (nothing is built)."""
    workflow = toolchain.workflow
    key = workflow.translation_key(program)
    cached = workflow.cached_source(program)
    source = cached if cached is not None else workflow.translation(program)
    extension = workflow.bind(source)
    compilation = workflow.compilation
    plan = compilation.plan(extension) if isinstance(compilation, _Planner) else None
    cache = compilation.cache if isinstance(compilation, _Planner) else None
    build_hit = False
    if plan is not None and cache is not None:
        found = cache.lookup(plan.key)
        module = None if found is None else found.metadata.get("module")
        build_hit = found is not None and (module is None or (found.folder / module).is_file())
    return Probe(
        program=program,
        source=source,
        extension=extension,
        translation_key=key,
        translation_hit=cached is not None,
        translation_settings=settings_dict(step_settings(workflow.translation)),
        source_settings=settings_dict(extension.program_source.settings),
        bindings_settings=settings_dict(extension.binding_source.settings),
        build_cache=cache,
        build_key=None if plan is None else plan.key,
        build_hit=build_hit,
        build_context={} if plan is None else settings_dict(plan.context),
        context_digest=None if plan is None else plan.context_digest,
    )
