"""A persistent store of text entries (translated sources), safe to share between processes,
and trusted only when no other user can have written it.

Each entry is a small JSON file holding its key, the package version, the payload and
the payload's sha256. Entries are written to a private temporary file in the same folder
and published with an atomic rename, so a reader sees either the old entry, the new one,
or none; an entry that is corrupt, truncated or for another key is a miss (logged), never
a crash. An entry is read only after checking that it and every folder up to the cache
root belong to this user alone (see `trust`): its source is compiled and run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import stencilchain.steps.caches.entries as kinds
from stencilchain._version import package_version
from stencilchain.errors import CacheSecurityError
from stencilchain.program import ir
from stencilchain.program.device import Device
from stencilchain.program.hashing import sha256_of
from stencilchain.steps.caches.entries import CacheEntry, settings_dict, times
from stencilchain.steps.caches.files import (
    atomic_write,
    children,
    is_temporary,
    open_entry,
    read_all,
    read_entry,
    record_use,
)
from stencilchain.steps.caches.trust import TrustedFolder, make_private_folder, require_trusted_file
from stencilchain.steps.family import Family, family_of_language
from stencilchain.steps.stages import ProgramSource

_log = logging.getLogger(__name__)

_FORMAT = 1
_KEY = re.compile(r"[A-Za-z0-9_-]{2,200}")
_SUFFIX = ".json"
_RISK = (
    "Another user could replace the source code in it, which this process would then "
    "compile and run as its own code."
)
_ABANDONED = 3600.0  # a temporary file this old was abandoned by its writer


@dataclasses.dataclass(frozen=True)
class TranslationCache(TrustedFolder):
    """Text entries under `root`, fanned out into subfolders by the first two key characters.

    Trusted as `TrustedFolder` says: only if no other user can write to it or to a
    folder up to `cache_root`. `salt` is mixed into every key made for this cache
    (`TranslationKey`): entries made under another salt are never found.
    `families` say, in a listing, which family an entry's language is of (no key changes).
    """

    salt: str = dataclasses.field(default="", kw_only=True)
    families: tuple[Family, ...] = dataclasses.field(
        default=(), kw_only=True, repr=False, compare=False
    )

    KIND = "translation cache"
    KEY = _KEY
    KEY_RULE = "2 to 200 characters from [A-Za-z0-9_-] (a content hash)"

    def path(self, key: str) -> Path:
        """The file of `key`'s entry."""
        key = self.checked_key(key)
        return Path(self.root, key[:2], f"{key}{_SUFFIX}")

    def get(self, key: str) -> str | None:
        """The payload stored under `key`, or None on a miss (missing or unreadable entry).

        CacheSecurityError if the entry exists but it, or a folder up to the cache root,
        could have been written by another user.
        """
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
                path, info, self.top, entry=f"the translation cache entry {path}", risk=_RISK
            )
            problem, payload = _decode(read_all(fd, info.st_size), key)
            if problem:
                return _miss(path, f"is {problem}")
            record_use(fd, info)
            return payload
        except CacheSecurityError:
            raise
        except OSError as error:
            return _miss(path, f"cannot be read ({error})")
        finally:
            os.close(fd)

    def put(self, key: str, text: str) -> None:
        """Store `text` under `key`, replacing any previous entry atomically.

        A cache that cannot be written (full disk, read-only folder) is logged and
        otherwise ignored: the cache only saves time.
        """
        if not isinstance(text, str):
            raise TypeError(f"translation cache payload must be str, got {type(text).__name__}")
        path = self.path(key)
        data = json.dumps(
            {
                "format": _FORMAT,
                "key": key,
                "version": package_version(),
                "sha256": _sha256(text),
                "payload": text,
                **({"salt": self.salt} if self.salt else {}),
            }
        ).encode()
        try:
            make_private_folder(path.parent, self.top)
            atomic_write(path, data)
        except OSError as error:
            _log.warning("translation cache entry %s cannot be written (%s)", path, error)

    def entries(self) -> Iterator[CacheEntry]:
        """Every entry stencilchain wrote under `root`, by fan-out folder and key: the
        TRANSLATION entries (of any stencilchain version), DAMAGED ones (that a `get` would
        miss whatever the program), and STALE temporary files that a writer abandoned.
        Anything else, and every symbolic link, is skipped. Listing is not using: no
        access time changes, and no trust check (nothing is compiled)."""
        for folder in children(self.root):
            if not folder.is_dir(follow_symlinks=False) or len(folder.name) != 2:
                continue
            for item in children(Path(folder.path)):
                if not item.is_file(follow_symlinks=False):
                    continue
                path, key = Path(item.path), item.name.removesuffix(_SUFFIX)
                if item.name.endswith(_SUFFIX) and _KEY.fullmatch(key) and key[:2] == folder.name:
                    entry = _entry(path, key, self.families)
                    if entry is not None:
                        yield entry
                elif is_temporary(item.name):
                    info = item.stat(follow_symlinks=False)
                    if time.time() - info.st_mtime > _ABANDONED:
                        completed, used = times(info)
                        yield CacheEntry(
                            kinds.STALE, item.name, path, info.st_size, completed, used,
                            name=item.name,
                        )  # fmt: skip

    def discard(self, item: str | CacheEntry) -> bool:
        """Remove an entry (by key, or an entry of `entries()`); its fan-out folder too
        once empty. Returns True (nothing waits: an entry is replaced atomically)."""
        if isinstance(item, CacheEntry):
            path = item.path
            own = item.kind == kinds.STALE and is_temporary(path.name)
            own = own or (_KEY.fullmatch(item.key) is not None and path == self.path(item.key))
            if path.parent.parent != self.root or not own:
                raise ValueError(
                    f"{path} is not a {item.kind} entry of the translation cache {self.root}"
                )
        else:
            path = self.path(item)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        with contextlib.suppress(OSError):  # not empty, or already gone
            path.parent.rmdir()
        return True


def _miss(path: Path, problem: str) -> str | None:
    """A miss (None) for an entry that cannot be used, logged: a cache only saves time."""
    _log.warning("translation cache entry %s %s; treated as a miss", path, problem)
    return None


def _entry(path: Path, key: str, families: tuple[Family, ...]) -> CacheEntry | None:
    """The entry of `key` stored in `path`; None if it vanished meanwhile."""
    try:
        info, raw = read_entry(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        info = path.lstat()
        completed, used = times(info)
        return CacheEntry(
            kinds.DAMAGED, key, path, info.st_size, completed, used, name=key,
            problem=f"it cannot be read ({error})",
        )  # fmt: skip
    problem, envelope = _envelope(raw, key)
    completed, used = times(info)
    fields: dict[str, Any] = {}
    if not problem:
        try:
            fields = _payload_fields(envelope["payload"])
        except (ValueError, KeyError, TypeError):
            problem = "its payload is not a translated program source"
    if problem:
        return CacheEntry(
            kinds.DAMAGED, key, path, info.st_size, completed, used, name=key, problem=problem
        )
    return CacheEntry(
        kinds.TRANSLATION,
        key,
        path,
        info.st_size,
        completed,
        used,
        family=family_of_language(families, fields["language"]),
        name=fields["entry_point"],
        device=fields["device"],
        version=str(envelope.get("version", "")),
        program=fields["program"],
        translation_settings=settings_dict(fields["settings"]),
        metadata={
            "language": fields["language"],
            **({"salt": str(envelope["salt"])} if envelope.get("salt") else {}),
        },
    )


def _envelope(raw: bytes, key: str) -> tuple[str, dict[str, Any]]:
    """(problem, entry): `problem` is empty when `raw` is an intact entry of `key`, of any
    stencilchain version."""
    try:
        entry = json.loads(raw)
    except ValueError:
        return "not valid JSON (corrupt or truncated)", {}
    if not isinstance(entry, dict) or entry.get("format") != _FORMAT:
        return "of an unknown format", {}
    payload = entry.get("payload")
    if not isinstance(payload, str):
        return "missing its payload", {}
    if entry.get("key") != key:
        return f"stored for another key ({entry.get('key')!r})", {}
    if entry.get("sha256") != _sha256(payload):
        return "damaged (its payload does not match its sha256)", {}
    return "", entry


def _decode(raw: bytes, key: str) -> tuple[str, str]:
    """(problem, payload): `problem` is empty when the entry is valid for `key` and was
    written by this stencilchain version."""
    problem, entry = _envelope(raw, key)
    if problem:
        return problem, ""
    if entry.get("version") != package_version():
        return f"written by stencilchain {entry.get('version')!r}, not {package_version()!r}", ""
    return "", str(entry["payload"])


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# --- what the toolchains store: translated program sources -------------------------------


def step_settings_key(step: object) -> str:
    """What identifies a translation step's settings in a key: its frozen repr."""
    return repr(step)


@dataclasses.dataclass(frozen=True)
class TranslationKey:
    """The translation cache key of a program under the step settings `settings` (a value,
    so that equal workflows compare equal): the program's fingerprint, the settings, the
    package version and the cache's salt, if any."""

    settings: str
    salt: str = ""  # the cache's salt (STENCILCHAIN_CACHE_SALT); empty adds nothing

    def __call__(self, program: ir.Program) -> str:
        salt = (f"salt={self.salt}",) if self.salt else ()
        return sha256_of(
            "translation/1", program.fingerprint(), self.settings, package_version(), *salt
        )


def encode_program_source(source: ProgramSource) -> str:
    """A ProgramSource as the payload of an entry (JSON; the IR is kept by fingerprint)."""
    return json.dumps(
        {
            "entry_point": source.entry_point,
            "source_code": source.source_code,
            "language": source.language,
            "device": source.device.value,
            "library_deps": list(source.library_deps),
            "workspace": source.workspace,
            "settings": source.settings,
            "program": source.program.fingerprint(),
        }
    )


def decode_program_source(program: ir.Program, text: str) -> ProgramSource:
    """The ProgramSource of `program` stored as `text`; ValueError/KeyError/TypeError if it
    is not one (another program's, or of another format)."""
    data = _payload_fields(text)
    if data["program"] != program.fingerprint():
        raise ValueError("translation cache entry of another program")
    return ProgramSource(
        program=program,
        entry_point=data["entry_point"],
        source_code=data["source_code"],
        language=data["language"],
        device=Device(data["device"]),
        library_deps=tuple(data["library_deps"]),
        workspace=data["workspace"],
        settings=data["settings"],
    )


_PAYLOAD_FIELDS: dict[str, type] = {
    "entry_point": str,
    "source_code": str,
    "language": str,
    "device": str,
    "library_deps": list,
    "workspace": bool,
    "settings": str,
    "program": str,
}


def _payload_fields(text: str) -> dict[str, Any]:
    """The fields of a payload written by `encode_program_source`, each of its type;
    ValueError/KeyError/TypeError if `text` is not one."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise TypeError(f"a translated program source is a JSON object, not {type(data).__name__}")
    for name, kind in _PAYLOAD_FIELDS.items():
        if not isinstance(data[name], kind):
            raise TypeError(f"the field {name!r} of a translated program source is not a {kind}")
    if not all(isinstance(dep, str) for dep in data["library_deps"]):
        raise TypeError("the library_deps of a translated program source are not all text")
    return data
