"""What a toolchain family is, as one frozen value: its name, the languages of its translated
sources, what its build markers hold, and the names a program may not have.

Each family defines its one instance (`steps/gtfn/family.py`, `steps/dace/family.py`); the
caches and the containers take those instead of guessing a family from a name or a field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from stencilchain.program.names import CPP_RESERVED, ReservedNames


@dataclasses.dataclass(frozen=True)
class Family:
    """One toolchain family.

    `languages`: the `ProgramSource.language` values its translation writes. `marker_fields`:
    build-marker metadata fields that only its builds record (how a marker that does not name
    its family, an older one, is recognized); `support_prefixes`: the key prefixes of its
    support folders, whose markers name no family. `reserved_names`: the names its generated code
    keeps for itself (one list in program/names.py, which every program is checked against at
    definition; a family whose code keeps more names extends it there, ADR 0016).
    """

    name: str
    languages: frozenset[str]
    marker_fields: frozenset[str] = frozenset()
    support_prefixes: tuple[str, ...] = ()
    reserved_names: ReservedNames = dataclasses.field(default=CPP_RESERVED, repr=False)

    def writes_language(self, language: str) -> bool:
        return language in self.languages

    def made_marker(self, key: str, metadata: Mapping[str, str]) -> bool:
        """Whether the build marker of `key` with `metadata`, naming no family, is this one's."""
        return any(field in metadata for field in self.marker_fields) or key.startswith(
            self.support_prefixes
        )


def family_of_language(families: Iterable[Family], language: str) -> str:
    """The name of the family of `families` whose sources are in `language` ("" if none)."""
    return next((f.name for f in families if f.writes_language(language)), "")


def family_of_marker(families: Iterable[Family], key: str, metadata: Mapping[str, str]) -> str:
    """The family of a build marker: the one it names, else the first of `families` whose
    fields or support-folder prefix it has ("" if none)."""
    named = metadata.get("family")
    if named:
        return named
    return next((f.name for f in families if f.made_marker(key, metadata)), "")
