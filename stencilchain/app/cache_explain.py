"""`cache explain`: would a program hit the caches, and if not, what differs.

A key is a hash of its components, so a miss is explained against the nearest existing
entry of the same program name, component by component:

- translation key = (program fingerprint, translation step settings, package version).
  An entry stores the program's fingerprint and the version; if both match, the step
  settings must differ (nothing else enters the key).
- build key = (entry point, extension source, build context). The extension source is
  the program fingerprint with the generated program and bindings code (the translation
  and bindings settings); the build context holds the build type, flags, tools and the
  package version. Markers that record `key_program`, `key_source` and `key_context`
  (the context's JSON) are compared exactly; for other markers the components are
  inferred from the marker's device and build type, the sources kept in the build folder,
  and the translation entries (which tell the program fingerprint of a generated source).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from stencilchain._version import package_version
from stencilchain.app.cache_inventory import BUILD, TRANSLATION, Entry
from stencilchain.app.cache_probe import Probe
from stencilchain.program.hashing import sha256_of
from stencilchain.steps.stages import ProgramSource

SAME, DIFFERS, UNKNOWN = "same", "differs", "unknown"
PROGRAM, SETTINGS, CONTEXT, VERSION = (
    "program fingerprint",
    "step settings",
    "build context",
    "version",
)


@dataclasses.dataclass(frozen=True)
class Explanation:
    """One cache's answer: hit or miss, and on a miss how the nearest entry differs."""

    cache: str
    enabled: bool
    hit: bool
    key: str | None
    nearest: Entry | None = None
    components: Mapping[str, str] = dataclasses.field(default_factory=dict)
    details: Sequence[str] = ()

    @property
    def differs(self) -> list[str]:
        return [c for c, s in self.components.items() if s == DIFFERS]

    def as_dict(self) -> dict[str, object]:
        return {
            "cache": self.cache,
            "enabled": self.enabled,
            "hit": self.hit,
            "key": self.key,
            "nearest": None if self.nearest is None else self.nearest.as_dict(),
            "components": dict(self.components),
            "differs": self.differs,
            "details": list(self.details),
        }


def explain_translation(probe: Probe, entries: Sequence[Entry]) -> Explanation:
    if probe.translation_key is None:
        return Explanation(TRANSLATION, False, False, None)
    if probe.translation_hit:
        return Explanation(TRANSLATION, True, True, probe.translation_key)
    name, fingerprint = probe.program.name, probe.program.fingerprint()
    candidates = [
        e for e in entries if e.kind == TRANSLATION and e.name == probe.source.entry_point
    ]
    same_language = [e for e in candidates if e.metadata.get("language") == probe.source.language]
    best: tuple[int, float, Entry, dict[str, str], list[str]] | None = None
    for entry in same_language or candidates:
        components, details = _translation_components(entry, fingerprint)
        score = sum(s == SAME for s in components.values())
        if best is None or (score, entry.time) > best[:2]:
            best = (score, entry.time, entry, components, details)
    if best is None:
        return Explanation(
            TRANSLATION, True, False, probe.translation_key,
            details=[f"no translation of a program named {name!r} is cached"],
        )  # fmt: skip
    return Explanation(TRANSLATION, True, False, probe.translation_key, best[2], best[3], best[4])


def _translation_components(entry: Entry, fingerprint: str) -> tuple[dict[str, str], list[str]]:
    meta = entry.metadata
    if "problem" in meta:
        return {PROGRAM: UNKNOWN, SETTINGS: UNKNOWN, VERSION: UNKNOWN}, [meta["problem"]]
    details = []
    program = SAME if meta.get("program") == fingerprint else DIFFERS
    version = SAME if meta.get("version") == package_version() else DIFFERS
    if version == DIFFERS:
        details.append(
            f"written by stencilchain {meta.get('version')}, this is {package_version()}"
        )
    if program == DIFFERS:
        details.append("the program's IR changed since (its fingerprint differs)")
    if program == SAME and version == SAME:
        settings = DIFFERS  # the only other component of the key
        details.append("the translation step's settings differ (e.g. transforms, layout, device)")
    else:
        settings = UNKNOWN
    return {PROGRAM: program, SETTINGS: settings, VERSION: version}, details


def explain_build(probe: Probe, entries: Sequence[Entry], family: str = "") -> Explanation:
    """The build cache's answer; the nearest entry is one of the same `family` (if known)."""
    if probe.build_key is None or probe.build_cache is None:
        return Explanation(
            BUILD, False, False, None,
            details=["this toolchain's compiler does not tell its build key"],
        )  # fmt: skip
    if probe.build_hit:
        return Explanation(BUILD, True, True, probe.build_key)
    entry_point = probe.extension.entry_point
    candidates = [
        e
        for e in entries
        if e.kind == BUILD and e.name == entry_point and (not family or e.family in (family, ""))
    ]
    sources = _translated_sources(entries)
    best: tuple[int, float, Entry, dict[str, str], list[str]] | None = None
    for entry in candidates:
        components, details = _build_components(probe, entry, sources)
        score = sum(s == SAME for s in components.values())
        if best is None or (score, entry.time) > best[:2]:
            best = (score, entry.time, entry, components, details)
    if best is None:
        return Explanation(
            BUILD, True, False, probe.build_key,
            details=[f"no {family} build of a program named {entry_point!r} is cached".replace("  ", " ")],
        )  # fmt: skip
    return Explanation(BUILD, True, False, probe.build_key, best[2], best[3], best[4])


def _translated_sources(entries: Sequence[Entry]) -> dict[str, set[str]]:
    """Program fingerprints by the sha256 of the code translated from them."""
    sources: dict[str, set[str]] = {}
    for e in entries:
        if e.kind == TRANSLATION and "source_sha256" in e.metadata:
            sources.setdefault(e.metadata["source_sha256"], set()).add(e.metadata["program"])
    return sources


def _build_components(
    probe: Probe, entry: Entry, sources: Mapping[str, set[str]]
) -> tuple[dict[str, str], list[str]]:
    meta = entry.metadata
    fingerprint = probe.program.fingerprint()
    details: list[str] = []
    # the program fingerprint and the generated sources
    if "key_program" in meta and "key_source" in meta:
        program = SAME if meta["key_program"] == fingerprint else DIFFERS
        settings = SAME if meta["key_source"] == probe.extension.fingerprint() else DIFFERS
        if program == DIFFERS:
            settings = UNKNOWN  # the source fingerprint covers the program's too
    else:
        program, settings = _infer_from_sources(probe, entry.path, sources)
    if settings == DIFFERS:
        details.append("the generated code differs: translation or bindings settings changed")
    if program == DIFFERS:
        details.append("the program's IR changed since (its fingerprint differs)")
    # the build context, with the package version
    context, version = UNKNOWN, UNKNOWN
    compiler = getattr(probe.plan, "compiler", None)
    for field in ("device", "build_type"):
        now = getattr(getattr(compiler, field, None), "value", None)
        if field in meta and now is not None and meta[field] != now:
            context = DIFFERS
            details.append(f"{field}: {meta[field]} when built, {now} now")
    if "key_context" in meta:
        digest = getattr(probe.plan, "context_digest", None)
        if digest is not None:
            context = SAME if sha256_of(meta["key_context"]) == digest else DIFFERS
        try:
            built_with = json.loads(meta["key_context"]).get("package")
        except (ValueError, AttributeError):
            built_with = None
        if built_with is not None:
            version = SAME if built_with == package_version() else DIFFERS
            if version == DIFFERS:
                details.append(f"built by stencilchain {built_with}, this is {package_version()}")
    elif context == UNKNOWN and program == SAME and settings == SAME:
        context = DIFFERS  # same sources, other key: only the context (with the version) is left
        details.append("same generated code: the build context differs (flags, compiler, "
                       "tools, Python, or the stencilchain version)")  # fmt: skip
    return {PROGRAM: program, SETTINGS: settings, CONTEXT: context, VERSION: version}, details


def _infer_from_sources(
    probe: Probe, folder: Path, sources: Mapping[str, set[str]]
) -> tuple[str, str]:
    """(program, settings) of a build whose marker records no key components, from the
    sources kept in its folder: equal sources mean equal program and settings. A folder
    that keeps fewer sources than the extension has (e.g. no SDFG) cannot tell a
    difference, only a program fingerprint through the translation entries."""
    fingerprint = probe.program.fingerprint()
    texts = _source_texts(folder)
    parts = _extension_texts(probe)
    if all(_sha(t) in texts for t in parts):
        return SAME, SAME
    programs: set[str] = set().union(*(sources.get(t, set()) for t in texts))
    complete = len(texts) >= len(parts)  # every source of the extension was kept
    if complete and _sha(probe.source.source_code) in texts:
        return SAME, DIFFERS  # same translation, other bindings
    if fingerprint in programs:
        return SAME, DIFFERS if complete else UNKNOWN
    return (DIFFERS if programs else UNKNOWN), UNKNOWN


def _extension_texts(probe: Probe) -> list[str]:
    """Every generated source of the extension: program, bindings, and any other stage
    (e.g. the SDFG of a DaCe extension)."""
    extension = probe.extension
    texts = [extension.program_source.source_code, extension.binding_source.source_code]
    for field in dataclasses.fields(extension):
        value = getattr(extension, field.name)
        if isinstance(value, ProgramSource) and value.source_code not in texts:
            texts.append(value.source_code)
    return texts


def _source_texts(folder: Path) -> set[str]:
    """sha256 of each source file kept in a build folder (its `src` folder)."""
    digests = set()
    src = folder / "src"
    if src.is_dir() and not src.is_symlink():
        for path in src.iterdir():
            if path.is_file() and not path.is_symlink() and path.name != "CMakeLists.txt":
                try:
                    digests.add(_sha(path.read_text()))
                except (OSError, UnicodeDecodeError):
                    continue
    return digests


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
