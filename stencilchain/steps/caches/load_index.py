"""The load index: from what keys a program's translation and build settings straight to
its complete build folder, so that a first call of a cached program in a fresh process
skips the translation, the bindings and the build plan (docs/adr/0039-load-index.md).

An entry is a small JSON file under `<root>/<key[:2]>/<key>.json` naming a build of the
build cache (its key, module name, entry point, whether it takes a workspace, and the
sha256 of its build context), with a sha256 of those fields. It only says where to look:
the build it names is trusted only after the build cache's own checks (trust, completion
marker, the marker against the entry, file sizes). Entries are written to a private
temporary file and published with an atomic rename; one that is missing, corrupt, of
another key, format or stencilchain version is a miss (logged when it exists), never a
crash. A cache that cannot be written is logged and otherwise ignored: the index only
saves time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import re
from pathlib import Path
from typing import Any

from stencilchain._version import package_version
from stencilchain.errors import CacheSecurityError
from stencilchain.program.hashing import sha256_of
from stencilchain.steps.caches.files import atomic_write, children, open_entry, read_all
from stencilchain.steps.caches.trust import TrustedFolder, make_private_folder, require_trusted_file

_log = logging.getLogger(__name__)

_FORMAT = 1
_KEY = re.compile(r"[A-Za-z0-9_-]{2,200}")
_SUFFIX = ".json"
_RISK = (
    "Another user could point it at a build folder of their choosing; this process would "
    "still check that folder's ownership before loading its module."
)


@dataclasses.dataclass(frozen=True)
class IndexRecord:
    """What an index entry says: the build cache key of the program's complete build, the
    module name and entry point its marker must record, whether the entry point takes a
    workspace, and the sha256 of the build context its marker must record."""

    build: str
    module_name: str
    entry_point: str
    workspace: bool
    context: str

    def fields(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


_RECORD_TYPES: dict[str, type] = {
    "build": str,
    "module_name": str,
    "entry_point": str,
    "workspace": bool,
    "context": str,
}


def index_key(translation_key: str, bindings_settings: str, build_context: str) -> str:
    """The index key of a program: its translation cache key (the program's fingerprint,
    the translation step's settings, the package version and the salt), the bindings
    step's settings, and the compilation step's load context (its settings that change
    the output, its tools', Python's and the CPU's identities; see CompilerStep)."""
    return sha256_of("load-index/1", translation_key, bindings_settings, build_context)


def context_digest(context: str) -> str:
    """What an entry records of a build context (a marker's `key_context`)."""
    return sha256_of(context)


@dataclasses.dataclass(frozen=True)
class LoadIndex(TrustedFolder):
    """Index entries under `root`, fanned out by the first two key characters, trusted as
    `TrustedFolder` says (only if no other user can write to it or a folder up to
    `cache_root`)."""

    KIND = "load index"
    KEY = _KEY
    KEY_RULE = "2 to 200 characters from [A-Za-z0-9_-] (a content hash)"

    def path(self, key: str) -> Path:
        """The file of `key`'s entry."""
        key = self.checked_key(key)
        return Path(self.root, key[:2], f"{key}{_SUFFIX}")

    def get(self, key: str) -> IndexRecord | None:
        """The record stored under `key`, or None (missing or unusable: a miss).

        CacheSecurityError if the entry exists but it, or a folder up to the cache root,
        could have been written by another user."""
        path = self.path(key)
        try:
            fd = open_entry(path)
        except FileNotFoundError:
            return None
        except OSError as error:
            return _miss(path, f"cannot be read ({error})")
        try:
            info = os.fstat(fd)
            require_trusted_file(
                path, info, self.top, entry=f"the load index entry {path}", risk=_RISK
            )
            record, problem = _decode(read_all(fd, info.st_size), key)
            return record if record is not None else _miss(path, f"is {problem}")
        except CacheSecurityError:
            raise
        except OSError as error:
            return _miss(path, f"cannot be read ({error})")
        finally:
            os.close(fd)

    def put(self, key: str, record: IndexRecord) -> None:
        """Store `record` under `key`, replacing any previous entry atomically; a cache that
        cannot be written is logged and otherwise ignored."""
        path = self.path(key)
        fields = record.fields()
        data = json.dumps(
            {
                "format": _FORMAT,
                "key": key,
                "version": package_version(),
                "record": fields,
                "sha256": _digest(fields),
            }
        ).encode()
        try:
            make_private_folder(path.parent, self.top)
            atomic_write(path, data, sync=False)  # a hint: a lost one is a miss
        except OSError as error:
            _log.warning("load index entry %s cannot be written (%s)", path, error)

    def clear(self) -> int:
        """Remove every entry (and temporary file) of the index, and its fan-out folders
        once empty; the number of files removed. Links and anything else are left."""
        removed = 0
        for folder in children(self.root):
            if not folder.is_dir(follow_symlinks=False) or len(folder.name) != 2:
                continue
            for item in children(Path(folder.path)):
                if item.is_file(follow_symlinks=False) and item.name.endswith((_SUFFIX, ".tmp")):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(item.path)
                        removed += 1
            with contextlib.suppress(OSError):  # not empty
                os.rmdir(folder.path)
        return removed


def _miss(path: Path, problem: str) -> IndexRecord | None:
    """A miss (None) for an entry that cannot be used, logged: the index only saves time."""
    _log.warning("load index entry %s %s; treated as a miss", path, problem)
    return None


def _digest(fields: dict[str, Any]) -> str:
    return sha256_of(json.dumps(fields, sort_keys=True))


def _decode(raw: bytes, key: str) -> tuple[IndexRecord | None, str]:
    """(record, "") of an intact entry of `key` written by this stencilchain version, else
    (None, what is wrong with it)."""
    try:
        entry = json.loads(raw)
    except ValueError:
        return None, "not valid JSON (corrupt or truncated)"
    if not isinstance(entry, dict) or entry.get("format") != _FORMAT:
        return None, "of an unknown format"
    if entry.get("key") != key:
        return None, f"stored for another key ({entry.get('key')!r})"
    if entry.get("version") != package_version():
        return None, f"written by stencilchain {entry.get('version')!r}, not {package_version()!r}"
    fields = entry.get("record")
    if not isinstance(fields, dict) or set(fields) != set(_RECORD_TYPES):
        return None, "missing its record"
    if any(type(fields[name]) is not kind for name, kind in _RECORD_TYPES.items()):
        return None, "holding a record of the wrong types"
    if entry.get("sha256") != _digest(fields):
        return None, "damaged (its record does not match its sha256)"
    return IndexRecord(**fields), ""
