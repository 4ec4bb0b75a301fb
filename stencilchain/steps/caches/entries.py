"""What a cache entry records about itself, as the caches list it (`entries()`).

Both caches describe their entries with one record, so that a command line can list,
explain and remove them without knowing how either cache lays out its files.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TRANSLATION = "translation"  # a translated program source
BUILD = "build"  # a complete build of one program
SUPPORT = "support"  # a complete build shared by program builds (e.g. compiler detection)
INCOMPLETE = "incomplete"  # a build folder without its completion marker: building, or crashed
DAMAGED = "damaged"  # an entry that cannot be read (corrupt, truncated, of another format)
STALE = "stale"  # left aside by a removal that did not finish, or an abandoned temporary file
KINDS = (TRANSLATION, BUILD, SUPPORT, INCOMPLETE, DAMAGED, STALE)


@dataclasses.dataclass(frozen=True)
class CacheEntry:
    """One entry of a cache: what it is, where, how big, and what it was made with.

    `completed` is when it was completed (its file's or marker's modification time);
    `last_used` when it was last used (its access time, recorded at most once an hour, or
    `completed` if later). `family`, `name` (the program's entry point; a support folder's
    key), `device`, `build_type`, `version` (of stencilchain), `program` (the program's
    fingerprint) and the settings are what the entry records, "" or empty when it does not
    say. The settings are those of the steps that made it (translation and bindings, as
    `step_settings` writes them) and a build's context (flags, tools, build type, ...).
    `problem` says why a damaged entry cannot be used.
    """

    kind: str
    key: str
    path: Path
    size: int
    completed: float
    last_used: float
    family: str = ""
    name: str = ""
    device: str = ""
    build_type: str = ""
    version: str = ""
    program: str = ""
    translation_settings: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    bindings_settings: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    build_context: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    metadata: Mapping[str, str] = dataclasses.field(default_factory=dict)
    problem: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"cache entry kind {self.kind!r} is not one of {', '.join(KINDS)}")


def settings_dict(text: str | None) -> dict[str, Any]:
    """Recorded settings (JSON text of an object) as a dict; {} if absent or unreadable."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def times(info: os.stat_result) -> tuple[float, float]:
    """(completed, last used) of an entry whose file or marker has the stat `info`."""
    return info.st_mtime, max(info.st_mtime, info.st_atime)
