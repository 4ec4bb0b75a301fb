"""A persistent store of text entries (translated sources), safe to share between processes.

Each entry is a small JSON file holding its key, the package version, the payload and
the payload's sha256. Entries are written to a temporary file in the same folder and
published with an atomic rename, so a reader sees either the old entry, the new one, or
none; an entry that is corrupt, truncated or for another key is a miss (logged), never a
crash.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from stencilchain._version import package_version
from stencilchain.program import ir
from stencilchain.program.device import Device
from stencilchain.program.hashing import sha256_of
from stencilchain.steps.stages import ProgramSource

_log = logging.getLogger(__name__)

_FORMAT = 1
_KEY = re.compile(r"[A-Za-z0-9_-]{2,200}")


@dataclasses.dataclass(frozen=True)
class TranslationCache:
    """Text entries under `root`, fanned out into subfolders by the first two key characters."""

    root: Path

    def path(self, key: str) -> Path:
        """The file of `key`'s entry."""
        if not isinstance(key, str) or _KEY.fullmatch(key) is None:
            raise ValueError(
                f"translation cache key {key!r} is not valid: expected 2 to 200 characters "
                "from [A-Za-z0-9_-] (a content hash)"
            )
        return Path(self.root, key[:2], f"{key}.json")

    def get(self, key: str) -> str | None:
        """The payload stored under `key`, or None on a miss (missing or unreadable entry)."""
        path = self.path(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            _log.warning(
                "translation cache entry %s cannot be read (%s); treated as a miss", path, error
            )
            return None
        problem, payload = _decode(raw, key)
        if problem:
            _log.warning("translation cache entry %s is %s; treated as a miss", path, problem)
            return None
        return payload

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
            }
        ).encode()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _atomic_write(path, data)
        except OSError as error:
            _log.warning("translation cache entry %s cannot be written (%s)", path, error)


def _decode(raw: bytes, key: str) -> tuple[str, str]:
    """(problem, payload): `problem` is empty when the entry is valid for `key`."""
    try:
        entry = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return "not valid JSON (corrupt or truncated)", ""
    if not isinstance(entry, dict) or entry.get("format") != _FORMAT:
        return "of an unknown format", ""
    payload = entry.get("payload")
    if not isinstance(payload, str):
        return "missing its payload", ""
    if entry.get("key") != key:
        return f"stored for another key ({entry.get('key')!r})", ""
    if entry.get("version") != package_version():
        return f"written by stencilchain {entry.get('version')!r}, not {package_version()!r}", ""
    if entry.get("sha256") != _sha256(payload):
        return "damaged (its payload does not match its sha256)", ""
    return "", payload


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to a temporary file next to `path`, then rename it onto `path`."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# --- what the toolchains store: translated program sources -------------------------------


def step_settings_key(step: object) -> str:
    """What identifies a translation step's settings in a key: its frozen repr."""
    return repr(step)


@dataclasses.dataclass(frozen=True)
class TranslationKey:
    """The translation cache key of a program under the step settings `settings` (a value,
    so that equal workflows compare equal): the program's fingerprint, the settings and
    the package version."""

    settings: str

    def __call__(self, program: ir.Program) -> str:
        return sha256_of("translation/1", program.fingerprint(), self.settings, package_version())


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
    data: dict[str, Any] = json.loads(text)
    if data["program"] != program.fingerprint():
        raise ValueError("translation cache entry of another program")
    return ProgramSource(
        program=program,
        entry_point=str(data["entry_point"]),
        source_code=str(data["source_code"]),
        language=str(data["language"]),
        device=Device(data["device"]),
        library_deps=tuple(str(d) for d in data["library_deps"]),
        workspace=data["workspace"] is True,
        settings=str(data["settings"]),
    )
