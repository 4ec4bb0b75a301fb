"""The base of both compiler steps: a step plans a build (`plan`, which builds nothing)
and knows how to make it (`_build`); calling it returns the artifact of the complete
build in the build cache, made first if there is none (see cached_build)."""

from __future__ import annotations

import abc
import dataclasses
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from stencilchain.steps.build.cached_build import compile_cached
from stencilchain.steps.build.plan import BuildPlan
from stencilchain.steps.build.tools import BuildEnvironment
from stencilchain.steps.caches.build_cache import BuildCache
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
