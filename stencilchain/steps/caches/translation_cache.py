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

from stencilchain._version import package_version

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
