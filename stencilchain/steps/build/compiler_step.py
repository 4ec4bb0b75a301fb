"""The base of both compiler steps: a step plans a build (`plan`, which builds nothing)
and knows how to make it (`_build`); calling it returns the artifact of the complete
build in the build cache, made first if there is none (see cached_build). It also says
what the load index keys its builds by (`load_context`) and loads the build an index
entry names (`load_indexed`; docs/adr/0039-load-index.md)."""

from __future__ import annotations

import abc
import dataclasses
import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from stencilchain._version import package_version
from stencilchain.steps.build.cached_build import compile_cached, index_record, load_indexed
from stencilchain.steps.build.plan import BuildPlan
from stencilchain.steps.build.tools import (
    BuildEnvironment,
    Tools,
    host_cpu_identity,
    python_identity,
)
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.caches.load_index import IndexRecord
from stencilchain.steps.stages import CompiledArtifact, ExtensionSource

S = TypeVar("S", bound="CompilerStep")


class CompilerStep(abc.ABC):
    """ExtensionSource -> CompiledArtifact through the build cache.

    `BUILT_FILES` are the marker's entries naming the files of a complete build (the
    module first); a complete folder that lost one is built again. `environment` (a field
    of each subclass, changing no output) is what the build's processes run with; None for
    a step made by hand, which inherits the process's (see `tools.build_environment`).
    """

    BUILT_FILES: ClassVar[tuple[str, ...]] = ("module",)
    UNKEYED_SETTINGS: ClassVar[tuple[str, ...]] = ()  # settings that change no output (jobs)
    cache: BuildCache  # where its builds live (a field of each subclass)
    environment: BuildEnvironment | None  # a field of each subclass

    def with_environment(self: S, environment: BuildEnvironment, /) -> S:
        """This step with its processes running in `environment` (an equal step otherwise)."""
        replaced: S = dataclasses.replace(self, environment=environment)  # type: ignore[type-var]
        return replaced

    def __call__(self, source: ExtensionSource, /) -> CompiledArtifact:
        """Build `source` into the build cache, or load its complete build."""
        plan = self.plan(source)
        return compile_cached(plan, functools.partial(self._build, plan), files=self.BUILT_FILES)

    @abc.abstractmethod
    def plan(self, source: ExtensionSource) -> BuildPlan[Any, Any]:
        """Everything a build of `source` needs, with its cache key; builds nothing."""

    @abc.abstractmethod
    def _build(self, plan: BuildPlan[Any, Any], folder: Path) -> Mapping[str, str]:
        """Build `plan` in the empty `folder`; the metadata of its completion marker."""

    @abc.abstractmethod
    def load_context(self) -> str:
        """What the load index keys this step's builds by, besides the program's translation
        and bindings: everything of the build context that is not the source's (see
        `indexed_context`). CompilationError where a tool is missing (then no index)."""

    def load_indexed(self, record: IndexRecord, program: str) -> CompiledArtifact | None:
        """The complete build of this step's cache that the load index entry `record` names
        for the program of fingerprint `program`, checked as a cache hit is; None if none."""
        return load_indexed(self.cache, record, program, files=self.BUILT_FILES)

    def index_record(self, artifact: CompiledArtifact) -> IndexRecord | None:
        """What the load index records of `artifact`, this step's output; None if it is not
        a build of this step's cache (e.g. a batch's, handed over)."""
        if artifact.build_dir.parent != self.cache.root:
            return None
        return index_record(artifact)

    def indexed_context(self, tools: Tools, *, native_cpu: bool) -> str:
        """A `load_context`: the step's settings (each field's repr, leaving out those that
        change no output, `UNKEYED_SETTINGS`), the identities of its `tools`, of Python and,
        with `native_cpu`, of the host CPU, and the package version, as canonical JSON."""
        settings = {
            field.name: repr(getattr(self, field.name))
            for field in dataclasses.fields(self)  # type: ignore[arg-type]
            if field.repr and field.name not in self.UNKEYED_SETTINGS
        }
        return json.dumps(
            {
                "step": type(self).__qualname__,
                "settings": settings,
                "tools": tools.identity,
                "python": python_identity(),
                "cpu": host_cpu_identity() if native_cpu else None,
                "package": package_version(),
            },
            sort_keys=True,
        )
