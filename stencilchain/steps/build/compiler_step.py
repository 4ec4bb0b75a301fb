"""The base of both compiler steps: a step plans a build (`plan`, which builds nothing)
and knows how to make it (`_build`); calling it returns the artifact of the complete
build in the build cache, made first if there is none (see cached_build)."""

from __future__ import annotations

import abc
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from stencilchain.steps.build.cached_build import compile_cached
from stencilchain.steps.build.plan import BuildPlan
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.stages import CompiledArtifact, ExtensionSource


class CompilerStep(abc.ABC):
    """ExtensionSource -> CompiledArtifact through the build cache.

    `BUILT_FILES` are the marker's entries naming the files of a complete build (the
    module first); a complete folder that lost one is built again.
    """

    BUILT_FILES: ClassVar[tuple[str, ...]] = ("module",)
    cache: BuildCache  # where its builds live (a field of each subclass)

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
