"""Batch builds: the native builds of several programs run as one, each program still
getting its own build-cache entry.

A compilation step that can build several sources at once (`BatchBuildStep`; GTFN's
CMakeCompiler, DaCe's DaCeCompiler on the CPU) builds them in a support folder of the build cache (`batch-<digest>`, a
folder like the precompiled headers': under its lock, trusted only with its marker) and
then puts each program that the batch built into its own entry (`publish_member`), through
`compile_cached` as any build: under the entry's lock, its marker written last and
atomically, with the sizes and hashes of its files. A batch that fails or is interrupted
leaves no marker, neither its own nor a program's; a program the batch could not build is
left to the caller, which builds it alone (and reports its error by name). See
docs/adr/0036-compile-many-batches.md, docs/adr/0058-dace-batch-units.md and
docs/adr/0063-shared-glue-units.md (a batch's bindings as one unit).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from stencilchain.errors import StencilchainError
from stencilchain.program.hashing import sha256_of
from stencilchain.steps.build.cached_build import compile_cached
from stencilchain.steps.build.plan import BuildPlan
from stencilchain.steps.build.runner import LOG_NAME
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.stages import CompiledArtifact, ExtensionSource

BATCH_PREFIX = "batch-"


@runtime_checkable
class BatchBuildStep(Protocol):
    """A compilation step that builds several sources in one native build."""

    def build_batch(self, sources: Sequence[ExtensionSource], /) -> list[CompiledArtifact | None]:
        """Build `sources` together into the build cache; for each, the artifact of its
        entry if this batch built it (None: not built here: complete already, not
        batchable, or failed; the caller compiles it alone, which finds it or reports its
        error)."""
        ...


PlanT = TypeVar("PlanT", bound=BuildPlan[Any, Any])


def batch_members(
    sources: Sequence[ExtensionSource],
    plan: Callable[[ExtensionSource], PlanT],
    cache: BuildCache,
    alone: Callable[[ExtensionSource], bool] = lambda source: False,
) -> dict[int, PlanT]:
    """The plans of the `sources` a batch builds, by their index: a source is left out
    (to be built alone, which reports its error or finds its entry) when its plan fails,
    when `alone(source)`, when its build context differs from the first member's, when
    another member has its entry point, or when its entry is complete already."""
    members: dict[int, PlanT] = {}
    for index, source in enumerate(sources):
        try:
            planned = plan(source)
        except (ValueError, TypeError, StencilchainError):  # reported by its own build
            continue
        first = next(iter(members.values()), planned)
        if (
            alone(source)
            or planned.context_digest != first.context_digest
            or any(planned.entry_point == other.entry_point for other in members.values())
            or cache.lookup(planned.key) is not None
        ):
            continue
        members[index] = planned
    return members


def batch_key(plans: Iterable[BuildPlan[Any, Any]]) -> str:
    """The support folder's key of a batch of `plans` (their keys hold the cache's salt)."""
    digest = sha256_of("stencilchain-batch/1", *sorted(plan.key for plan in plans))
    return f"{BATCH_PREFIX}{digest[:32]}"


def publish_member(
    plan: BuildPlan[Any, Any],
    files: Mapping[str, tuple[Path, str]],
    texts: Mapping[str, str],
    batch_folder: Path,
    details: Mapping[str, str],
    *,
    built_files: Sequence[str] = ("module",),
) -> CompiledArtifact:
    """Put the program of `plan`, built in the batch in `batch_folder`, into its own entry:
    each of `files` (marker entry -> (the file built in the batch, its path in the entry);
    `built_files` name them, the module first) linked (or copied) into the entry, `texts`
    (path in the entry -> text: its sources) written beside, a log pointing at the
    batch's."""
    relative = {name: target for name, (_, target) in files.items()}

    def build(folder: Path) -> dict[str, str]:
        for path, name in files.values():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            _link_or_copy(path, target)
        for name, text in texts.items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        (folder / LOG_NAME).write_text(
            f"built with other programs in the batch {batch_folder}: see its {LOG_NAME}\n"
        )
        return plan.marker(relative[built_files[0]], {**details, **relative})

    return compile_cached(plan, build, files=built_files)


def _link_or_copy(source: Path, target: Path) -> None:
    """A hard link of `source` at `target` (one copy on disk for the batch's programs), or
    a copy where the file system has no hard links."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
