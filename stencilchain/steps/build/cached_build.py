"""A build through the build cache, the same for every compiler family.

A complete folder is loaded as it is (no tool runs), once its marker is checked against
the plan: a folder whose marker survived the files it names (deleted by hand, a partial
copy, a file cut short), or whose marker describes another build (another program's
module, a path out of the folder), is logged, discarded and built again, once; a build
that fails leaves its log but no marker (see BuildCache). A module that then fails to
load is discarded the same way (`discard_build`, by the toolchain).

A build records the size and a sha256 of each file it names. A first call checks the sizes
only (one `stat` each); `verify_build` (`stencilchain cache verify`) also reads the files
and checks their hashes, which finds a file damaged at the same size. A marker that records
no sizes (written before they were) is rebuilt once, never trusted unchecked.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from stencilchain.errors import CompilationError, StencilchainError
from stencilchain.steps.build.plan import BuildPlan
from stencilchain.steps.build.runner import LOG_NAME
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.caches.load_index import IndexRecord, context_digest
from stencilchain.steps.stages import CompiledArtifact

_log = logging.getLogger(__name__)

FILE_SIZES = "file_sizes"
"""The marker's entry recording the size of each built file (JSON: file -> bytes)."""
FILE_HASHES = "file_hashes"
"""The marker's entry recording a sha256 of each built file (JSON: file -> hex digest)."""


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
        try:
            metadata = dict(build(folder))
        except OSError as error:  # the folder cannot be written (a full disk, a quota)
            if isinstance(error, StencilchainError):
                raise
            raise CompilationError(
                f"building {plan.entry_point!r} in {folder} failed: {error}", "", None
            ) from error
        missing = _missing(folder, metadata, files)
        if missing:
            raise CompilationError(
                f"building {plan.entry_point!r} produced no {' and no '.join(missing)}",
                "",
                folder / LOG_NAME,
            )
        sizes = {metadata[name]: (folder / metadata[name]).stat().st_size for name in files}
        metadata[FILE_SIZES] = json.dumps(sizes, sort_keys=True)
        hashes = {metadata[name]: file_digest(folder / metadata[name]) for name in files}
        metadata[FILE_HASHES] = json.dumps(hashes, sort_keys=True)
        return metadata

    cache = plan.compiler.cache
    result = cache.get_or_build(plan.key, checked_build)
    problem = "" if result.built else _problem(plan, result.folder, result.metadata, files)
    if problem:
        _log.warning("build cache entry %s %s; it is built again", result.folder, problem)
        cache.discard(plan.key)
        result = cache.get_or_build(plan.key, checked_build)
        problem = _problem(plan, result.folder, result.metadata, files)
        if problem:  # another process put it back as it was
            raise CompilationError(
                f"the build of {plan.entry_point!r} in {result.folder} {problem}", "", None
            )
    return CompiledArtifact(
        module_path=result.folder / result.metadata[files[0]],
        module_name=plan.module_name,
        entry_point=plan.entry_point,
        build_dir=result.folder,
        metadata_json=json.dumps(dict(result.metadata), sort_keys=True),
        built=result.built,
        workspace=plan.source.program_source.workspace,
    )


def discard_build(artifact: CompiledArtifact) -> None:
    """Remove `artifact`'s build folder from its build cache (e.g. its module cannot be
    loaded), waiting for a build of it that is running."""
    folder = artifact.build_dir
    BuildCache(folder.parent).discard(folder.name)


def load_indexed(
    cache: BuildCache,
    record: IndexRecord,
    program: str,
    *,
    files: Sequence[str] = ("module",),
) -> CompiledArtifact | None:
    """The artifact of the complete build that a load index entry (`record`) names for the
    program of fingerprint `program`, or None (a miss: then the workflow runs every step,
    which rebuilds what needs it). The build is checked as a build-cache hit is (trust,
    marker, files present and of their size), and its marker must record what the entry
    says: the program, the module name, the entry point and the build context. Builds,
    removes and logs nothing: whatever is wrong is found again, and said, by the steps."""
    try:
        found = cache.lookup(record.build)
    except StencilchainError:  # not trusted: said by the steps, which look again
        raise
    except (ValueError, OSError):  # not a key of the build cache; a folder removed meanwhile
        return None
    if found is None:  # no build, an unfinished one, or an unusable marker
        return None
    metadata = found.metadata
    expected = {
        "entry_point": record.entry_point,
        "module_name": record.module_name,
        "key_program": program,
    }
    if any(metadata.get(name) != value for name, value in expected.items()):
        return None
    if context_digest(metadata.get("key_context", "")) != record.context:
        return None
    if _file_problem(found.folder, metadata, files):
        return None
    return CompiledArtifact(
        module_path=found.folder / metadata[files[0]],
        module_name=record.module_name,
        entry_point=record.entry_point,
        build_dir=found.folder,
        metadata_json=json.dumps(dict(metadata), sort_keys=True),
        built=False,
        workspace=record.workspace,
    )


def index_record(artifact: CompiledArtifact) -> IndexRecord | None:
    """What a load index entry records of `artifact`, a complete build of the build cache;
    None if its marker does not say it all."""
    metadata = artifact.metadata
    context = metadata.get("key_context")
    if not isinstance(context, str):
        return None
    return IndexRecord(
        build=artifact.build_dir.name,
        module_name=artifact.module_name,
        entry_point=artifact.entry_point,
        workspace=artifact.workspace,
        context=context_digest(context),
    )


def _problem(
    plan: BuildPlan[Any, Any], folder: Path, metadata: Mapping[str, str], files: Sequence[str]
) -> str:
    """What makes the complete build in `folder` unusable for `plan` ("" if nothing): a
    marker of another build (another program or module: the module name holds the key's
    digest), a file it names outside the folder, missing, or of another size than built
    (`FILE_SIZES`; a marker without them, of an older version, is rebuilt once)."""
    expected = {
        "entry_point": plan.entry_point,
        "module_name": plan.module_name,
        "key_program": plan.source.program_source.program.fingerprint(),
    }
    for name, value in expected.items():
        if name in metadata and metadata[name] != value:
            return f"is marked as a build of another {name} ({metadata[name]!r}, not {value!r})"
    return _file_problem(folder, metadata, files)


def _file_problem(folder: Path, metadata: Mapping[str, str], files: Sequence[str]) -> str:
    """What is wrong with the files of the complete build in `folder` ("" if nothing): a
    file its marker names outside the folder, missing, or of another size than built."""
    if FILE_SIZES not in metadata:
        return "records no file sizes (its marker is of an older version)"
    try:
        sizes = json.loads(metadata[FILE_SIZES])
    except ValueError:
        sizes = None
    if not isinstance(sizes, dict):
        return f"records unreadable file sizes ({metadata[FILE_SIZES]!r})"
    base = os.fspath(folder)
    for name in files:  # one stat each: this runs on every program's first call
        relative = metadata.get(name)
        if not relative:
            return f"lacks its {name}"
        if os.path.isabs(relative) or os.path.normpath(relative).split(os.sep)[0] == os.pardir:
            return f"names a {name} outside its folder ({relative!r})"
        try:
            info = os.stat(os.path.join(base, relative))
        except OSError:
            return f"lacks its {relative}"
        if not stat.S_ISREG(info.st_mode):
            return f"lacks its {relative} (not a file)"
        size = sizes.get(relative)
        if size is not None and info.st_size != size:
            return f"has a {relative!r} of {info.st_size} bytes, built with {size}"
    return ""


def file_digest(path: Path) -> str:
    """The sha256 of the file `path`, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


UNVERIFIED = "records no content hashes (built by an older version): sizes checked only"


def verify_build(folder: Path, metadata: Mapping[str, str]) -> str:
    """What is wrong with the complete build in `folder` ("" if nothing): a file its marker
    records that is missing, or of another size or content than built. UNVERIFIED where the
    marker records sizes but no hashes. Reads every recorded file: for a check on request,
    not for a first call."""
    records = {}
    for entry in (FILE_SIZES, FILE_HASHES):
        try:
            records[entry] = json.loads(metadata[entry]) if entry in metadata else None
        except ValueError:
            return f"records unreadable {entry.replace('_', ' ')}"
        if records[entry] is not None and not isinstance(records[entry], dict):
            return f"records unreadable {entry.replace('_', ' ')}"
    sizes, hashes = records[FILE_SIZES], records[FILE_HASHES]
    if sizes is None:
        return "records no file sizes (its marker is of an older version)"
    for relative, size in sorted(sizes.items()):
        path = folder / relative
        if os.path.isabs(relative) or not path.resolve().is_relative_to(folder.resolve()):
            return f"names a file outside its folder ({relative!r})"
        try:
            actual = path.stat().st_size
        except OSError:
            return f"lacks its {relative}"
        if actual != size:
            return f"has a {relative!r} of {actual} bytes, built with {size}"
        if hashes is not None:
            expected = hashes.get(relative)
            if expected is not None and file_digest(path) != expected:
                return f"has a {relative!r} whose content changed since it was built (sha256)"
    return "" if hashes is not None else UNVERIFIED


def _missing(folder: Path, metadata: Mapping[str, str], files: Sequence[str]) -> list[str]:
    """The files named by the `files` entries of `metadata` that `folder` lacks."""
    return [
        metadata.get(name) or name
        for name in files
        if not metadata.get(name) or not (folder / metadata[name]).is_file()
    ]
