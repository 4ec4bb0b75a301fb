"""Workflow vocabulary: the typed step protocol, a cached step, and the compile workflow,
the one place that runs the three steps of a toolchain.

    translation: Program IR -> ProgramSource      (behind the translation cache, if any)
    bindings:    ProgramSource -> ExtensionSource
    compilation: ExtensionSource -> CompiledArtifact  (a build cache of its own)

With a load index (docs/adr/0039-load-index.md), a run first asks it for the program's
complete build: a hit is one stage, `INDEX`, instead of the three (no translation, no
bindings, no build plan); a miss runs the three and records their build in the index.

A hook passed to a run sees each stage as it finishes (its time, its output, and whether
a cache held it): metrics, progress and the command line use it; none of them runs a step.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar, runtime_checkable

from stencilchain.errors import StencilchainError
from stencilchain.program import ir
from stencilchain.steps.caches.load_index import IndexRecord, LoadIndex, index_key
from stencilchain.steps.caches.translation_cache import (
    TranslationCache,
    TranslationKey,
    decode_program_source,
    encode_program_source,
    step_settings_key,
)
from stencilchain.steps.stages import CompiledArtifact, ExtensionSource, ProgramSource

_log = logging.getLogger(__name__)

StartT = TypeVar("StartT")
StartT_contra = TypeVar("StartT_contra", contravariant=True)
EndT = TypeVar("EndT")
EndT_co = TypeVar("EndT_co", covariant=True)

TRANSLATION, BINDINGS, COMPILATION = "translation", "bindings", "compilation"
STAGES = (TRANSLATION, BINDINGS, COMPILATION)
INDEX = "index"  # a load index hit: the one stage of a run that it answered


class Step(Protocol[StartT_contra, EndT_co]):
    """One stage of a toolchain: a pure callable from one stage value to the next."""

    def __call__(self, inp: StartT_contra, /) -> EndT_co: ...


@runtime_checkable
class PreparedStep(Protocol):
    """A step with a one-time set-up (finding tools, importing a code generator, a folder
    every build starts from) that `prepare()` does before several runs go side by side."""

    def prepare(self) -> None: ...


@runtime_checkable
class ParallelBuildStep(Protocol):
    """A compilation step whose native build runs parallel jobs: `with_build_jobs(n)` is
    the same step with at most `n` (an equal step otherwise: same output, same keys)."""

    def with_build_jobs(self, jobs: int, /) -> Step[ExtensionSource, CompiledArtifact]: ...


@runtime_checkable
class IndexedStep(Protocol):
    """A compilation step whose builds the load index can find: what keys them besides the
    translation and the bindings (`load_context`), the build an index entry names
    (`load_indexed`, None if it cannot be used) and what to record of its output
    (`index_record`). The compiler steps of both families are."""

    def load_context(self) -> str: ...

    def load_indexed(self, record: IndexRecord, program: str, /) -> CompiledArtifact | None: ...

    def index_record(self, artifact: CompiledArtifact, /) -> IndexRecord | None: ...


class TextCache(Protocol):
    """A persistent store of text entries (the translation cache satisfies it)."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, text: str) -> None: ...


@dataclasses.dataclass(frozen=True)
class CachedStep(Generic[StartT, EndT]):
    """Wraps `step` in a persistent cache.

    `key` maps an input to a content hash of everything that changes the output;
    `encode`/`decode` turn the output into text and back (never pickle). An entry that
    `decode` cannot read (ValueError, KeyError, TypeError) is a miss.
    """

    step: Step[StartT, EndT]
    cache: TextCache
    key: Callable[[StartT], str]
    encode: Callable[[EndT], str]
    decode: Callable[[StartT, str], EndT]

    def __call__(self, inp: StartT, /) -> EndT:
        return self.run(inp)[0]

    def run(self, inp: StartT) -> tuple[EndT, bool]:
        """The output for `inp`, and whether it came from the cache."""
        key = self.key(inp)
        found = self._decoded(inp, key)
        if found is not None:
            return found, True
        out = self.step(inp)
        self.cache.put(key, self.encode(out))
        return out, False

    def lookup(self, inp: StartT) -> EndT | None:
        """The cached output for `inp`, or None; runs and writes nothing."""
        return self._decoded(inp, self.key(inp))

    def _decoded(self, inp: StartT, key: str) -> EndT | None:
        text = self.cache.get(key)
        if text is None:
            return None
        try:
            return self.decode(inp, text)
        except (ValueError, KeyError, TypeError) as error:
            # an entry we cannot read is a miss, logged; a run overwrites it
            where = getattr(self.cache, "path", None)
            entry = where(key) if callable(where) else f"of key {key}"
            _log.warning("cache entry %s cannot be used (%s); treated as a miss", entry, error)
            return None


@dataclasses.dataclass(frozen=True)
class StageReport:
    """One finished stage of a run: its name (`STAGES`), time, output, and whether its cache
    held the output (None: the stage has no cache, or does not say)."""

    stage: str
    seconds: float
    output: object
    cached: bool | None


StageHook = Callable[[StageReport], None]


@dataclasses.dataclass(frozen=True)
class CompileWorkflow:
    """translation -> bindings -> compilation, the translation behind `translation_cache`
    (None: not cached). `translation` is the bare step: the one a container provided."""

    translation: Step[ir.Program, ProgramSource]
    bindings: Step[ProgramSource, ExtensionSource]
    compilation: Step[ExtensionSource, CompiledArtifact]
    translation_cache: TranslationCache | None = None
    load_index: LoadIndex | None = None

    def __call__(self, program: ir.Program, /, hook: StageHook | None = None) -> CompiledArtifact:
        """Run every stage, or (a load index hit) find their build at once; `hook` sees
        each stage as it finishes."""
        start = time.perf_counter()
        indexed = self.indexed_load
        if indexed is None:
            return self.compile(self.bind(self.translate(program, hook), hook), hook)
        key = indexed.key(program)
        artifact = indexed.load(key, program)
        if artifact is not None:
            _report(hook, INDEX, start, artifact, True)
            return artifact
        artifact = self.compile(self.bind(self.translate(program, hook), hook), hook)
        indexed.record(key, artifact)
        return artifact

    def prepare(self) -> None:
        """Do each step's one-time set-up (see PreparedStep) now, in this thread."""
        for step in (self.translation, self.bindings, self.compilation):
            if isinstance(step, PreparedStep):
                step.prepare()

    def with_build_jobs(self, jobs: int) -> CompileWorkflow:
        """This workflow with the native build of its compilation running at most `jobs`
        parallel jobs, where the step says how (ParallelBuildStep); else this workflow."""
        if not isinstance(self.compilation, ParallelBuildStep):
            return self
        return dataclasses.replace(self, compilation=self.compilation.with_build_jobs(jobs))

    @functools.cached_property
    def cached_translation(self) -> CachedStep[ir.Program, ProgramSource] | None:
        """The translation behind the translation cache (None without a cache)."""
        cache = self.translation_cache
        if cache is None:
            return None
        return CachedStep(
            self.translation,
            cache,
            TranslationKey(step_settings_key(self.translation), cache.salt),
            encode_program_source,
            decode_program_source,
        )

    @functools.cached_property
    def indexed_load(self) -> IndexedLoad | None:
        """The load index as this workflow uses it, or None where it cannot: no index or no
        translation cache; a compilation step that is not an IndexedStep; a step whose
        settings are not a value (not a dataclass, or a repr naming an object's address:
        its key would differ in every process); a stage method customized by a subclass
        (a hit would skip it); or a tool of the build that is missing."""
        index, cache, compilation = self.load_index, self.translation_cache, self.compilation
        if index is None or cache is None or not isinstance(compilation, IndexedStep):
            return None
        steps = (self.translation, self.bindings, compilation)
        if not all(dataclasses.is_dataclass(step) for step in steps):
            return None
        own = type(self)
        if any(
            getattr(own, stage) is not getattr(CompileWorkflow, stage)
            for stage in ("translate", "bind", "compile")
        ):
            return None
        try:
            context = compilation.load_context()
        except StencilchainError:  # a tool is missing: the build says so
            return None
        settings = step_settings_key(self.bindings)
        if " at 0x" in f"{step_settings_key(self.translation)}{settings}{context}":
            return None
        translation_key = TranslationKey(step_settings_key(self.translation), cache.salt)
        return IndexedLoad(index, translation_key, settings, context, compilation)

    def translate(self, program: ir.Program, hook: StageHook | None = None) -> ProgramSource:
        """The program's source: from the translation cache, or translated (and stored)."""
        start = time.perf_counter()
        cached_step = self.cached_translation
        if cached_step is None:
            source, cached = self.translation(program), None
        else:
            source, cached = cached_step.run(program)
        _report(hook, TRANSLATION, start, source, cached)
        return source

    def bind(self, source: ProgramSource, hook: StageHook | None = None) -> ExtensionSource:
        start = time.perf_counter()
        extension = self.bindings(source)
        _report(hook, BINDINGS, start, extension, None)
        return extension

    def compile(
        self, extension: ExtensionSource, hook: StageHook | None = None
    ) -> CompiledArtifact:
        start = time.perf_counter()
        artifact = self.compilation(extension)
        _report(hook, COMPILATION, start, artifact, not artifact.built)
        return artifact

    def translation_key(self, program: ir.Program) -> str | None:
        """The program's translation cache key (None without a cache)."""
        cached_step = self.cached_translation
        return None if cached_step is None else cached_step.key(program)

    def cached_source(self, program: ir.Program) -> ProgramSource | None:
        """The program's source if the translation cache holds it; runs and writes nothing."""
        cached_step = self.cached_translation
        return None if cached_step is None else cached_step.lookup(program)


@dataclasses.dataclass(frozen=True)
class IndexedLoad:
    """A workflow's use of the load index: the key of a program (its translation key, the
    bindings' settings and the compilation's load context), the build an entry names, and
    the recording of a build the steps made."""

    index: LoadIndex
    translation_key: TranslationKey
    bindings_settings: str
    load_context: str
    compilation: IndexedStep

    def key(self, program: ir.Program) -> str:
        return index_key(self.translation_key(program), self.bindings_settings, self.load_context)

    def load(self, key: str, program: ir.Program) -> CompiledArtifact | None:
        """The complete build the entry of `key` names for `program`, or None (a miss)."""
        record = self.index.get(key)
        if record is None:
            return None
        return self.compilation.load_indexed(record, program.fingerprint())

    def record(self, key: str, artifact: CompiledArtifact) -> None:
        """Record `artifact`, the build the steps just gave, under `key`."""
        record = self.compilation.index_record(artifact)
        if record is not None:
            self.index.put(key, record)


def _report(
    hook: StageHook | None, stage: str, start: float, output: object, cached: bool | None
) -> None:
    if hook is not None:
        hook(StageReport(stage, time.perf_counter() - start, output, cached))
