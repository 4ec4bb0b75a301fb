"""A build through the build cache, the same for every compiler family.

A complete folder is loaded as it is (no tool runs); a folder whose marker survived the
files it names (deleted by hand, a partial copy) is discarded and built again, once; a
build that fails leaves its log but no marker (see BuildCache).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from stencilchain.errors import CompilationError
from stencilchain.steps.build.plan import BuildPlan
from stencilchain.steps.build.runner import LOG_NAME
from stencilchain.steps.stages import CompiledArtifact


def compile_cached(
    plan: BuildPlan[Any, Any],
    build: Callable[[Path], Mapping[str, str]],
    *,
    files: Sequence[str] = ("module",),
) -> CompiledArtifact:
    """The artifact of `plan`: its complete build folder, or `build(folder)` run first.

    `files` are the marker's metadata entries that name files of a complete build (the
    module first): a build must produce them all, and a complete folder that lost one is
    discarded and built again.
    """

    def checked_build(folder: Path) -> Mapping[str, str]:
        metadata = build(folder)
        missing = _missing(folder, metadata, files)
        if missing:
            raise CompilationError(
                f"building {plan.entry_point!r} produced no {' and no '.join(missing)}",
                "",
                folder / LOG_NAME,
            )
        return metadata

    cache = plan.compiler.cache
    result = cache.get_or_build(plan.key, checked_build)
    if _missing(result.folder, result.metadata, files):
        cache.discard(plan.key)
        result = cache.get_or_build(plan.key, checked_build)
    return CompiledArtifact(
        module_path=result.folder / result.metadata[files[0]],
        module_name=plan.module_name,
        entry_point=plan.entry_point,
        build_dir=result.folder,
        metadata_json=json.dumps(dict(result.metadata), sort_keys=True),
        built=result.built,
        workspace=plan.source.program_source.workspace,
    )


def _missing(folder: Path, metadata: Mapping[str, str], files: Sequence[str]) -> list[str]:
    """The files named by the `files` entries of `metadata` that `folder` lacks."""
    return [
        metadata.get(name) or name
        for name in files
        if not metadata.get(name) or not (folder / metadata[name]).is_file()
    ]
