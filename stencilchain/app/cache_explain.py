"""`cache explain`: would a program hit the caches, and if not, what differs.

A key is a hash of its components, so a miss is explained against the nearest entry of
the same program name, component by component, with what the entry recorded (see
`CacheEntry`) against what the toolchain would record now (see `Probe`):

- translation key = (program fingerprint, translation step settings, package version);
  an entry records all three.
- build key = (entry point, extension source, build context). A marker records the
  program's fingerprint, the fingerprint of the extension source, the settings of the
  steps that generated it (translation and bindings) and the build context, which holds
  the package version.

A differing setting is named with both values (`build_type: release when built, debug
now`), nested settings by their path (`python.python_version: ...`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stencilchain._version import package_version
from stencilchain.app.cache_inventory import as_dict
from stencilchain.app.cache_probe import Probe
from stencilchain.program.hashing import sha256_of
from stencilchain.steps.caches.entries import BUILD, TRANSLATION, CacheEntry

SAME, DIFFERS, UNKNOWN = "same", "differs", "unknown"
PROGRAM, SETTINGS, CONTEXT, VERSION = (
    "program fingerprint",
    "step settings",
    "build context",
    "version",
)
_VERSION_SETTING = "package"  # the build context's record of the package version
_LONGEST_VALUE = 60


@dataclasses.dataclass(frozen=True)
class Explanation:
    """One cache's answer: hit or miss, and on a miss how the nearest entry differs."""

    cache: str
    enabled: bool
    hit: bool
    key: str | None
    nearest: CacheEntry | None = None
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
            "nearest": None if self.nearest is None else as_dict(self.nearest),
            "components": dict(self.components),
            "differs": self.differs,
            "details": list(self.details),
        }


_Compare = Callable[[CacheEntry], tuple[dict[str, str], list[str]]]


def explain_translation(
    probe: Probe, entries: Sequence[CacheEntry], family: str = ""
) -> Explanation:
    """The translation cache's answer; the nearest entry is one of the same `family`
    (if any is cached)."""
    if probe.translation_key is None:
        return Explanation(TRANSLATION, False, False, None)
    if probe.translation_hit:
        return Explanation(TRANSLATION, True, True, probe.translation_key)
    name = probe.source.entry_point
    candidates = [e for e in entries if e.kind == TRANSLATION and e.name == name]
    candidates = [e for e in candidates if e.family == family] or candidates
    return _nearest(
        TRANSLATION,
        probe.translation_key,
        candidates,
        lambda entry: _translation_components(probe, entry),
        f"no translation of a program named {name!r} is cached",
    )


def explain_build(probe: Probe, entries: Sequence[CacheEntry], family: str = "") -> Explanation:
    """The build cache's answer; the nearest entry is one of the same `family` (if known)."""
    if probe.build_key is None or probe.build_cache is None:
        return Explanation(
            BUILD, False, False, None,
            details=["this toolchain's compiler does not tell its build key"],
        )  # fmt: skip
    if probe.build_hit:
        return Explanation(BUILD, True, True, probe.build_key)
    name = probe.extension.entry_point
    candidates = [
        e
        for e in entries
        if e.kind == BUILD and e.name == name and (not family or e.family in (family, ""))
    ]
    what = f"{family} build" if family else "build"
    return _nearest(
        BUILD,
        probe.build_key,
        candidates,
        lambda entry: _build_components(probe, entry),
        f"no {what} of a program named {name!r} is cached",
    )


def _nearest(
    cache: str, key: str, candidates: Sequence[CacheEntry], compare: _Compare, none: str
) -> Explanation:
    """The miss explained by the candidate with the most equal components (the newest of
    equals)."""
    best: tuple[int, float, CacheEntry, dict[str, str], list[str]] | None = None
    for entry in candidates:
        components, details = compare(entry)
        score = sum(s == SAME for s in components.values())
        if best is None or (score, entry.completed) > best[:2]:
            best = (score, entry.completed, entry, components, details)
    if best is None:
        return Explanation(cache, True, False, key, details=[none])
    return Explanation(cache, True, False, key, best[2], best[3], best[4])


def _translation_components(probe: Probe, entry: CacheEntry) -> tuple[dict[str, str], list[str]]:
    details: list[str] = []
    program = _program(probe, entry, details)
    version = SAME if entry.version == package_version() else DIFFERS
    if version == DIFFERS:
        details.append(f"written by stencilchain {entry.version}, this is {package_version()}")
    changes = differences(entry.translation_settings, probe.translation_settings, "translated")
    details += changes
    salt_then = entry.metadata.get("salt", "")
    salt_now = "" if probe.build_cache is None else probe.build_cache.salt
    if salt_then != salt_now:  # STENCILCHAIN_CACHE_SALT, in the key but not a setting
        details.append(f"salt: {salt_then or '(none)'} when translated, {salt_now or '(none)'} now")
    if changes:
        settings = DIFFERS
    elif salt_then != salt_now:
        settings = SAME
    elif not entry.translation_settings:
        settings = UNKNOWN  # an entry that records no settings
    elif program == SAME and version == SAME:
        settings = DIFFERS  # the only other component of the key
        details.append(
            "the recorded settings are equal: the translation step differs in what they do "
            "not record (its class, e.g. an overridden step)"
        )
    else:
        settings = SAME
    return {PROGRAM: program, SETTINGS: settings, VERSION: version}, details


def _build_components(probe: Probe, entry: CacheEntry) -> tuple[dict[str, str], list[str]]:
    details: list[str] = []
    program = _program(probe, entry, details)
    settings = _build_settings(probe, entry, program, details)
    context, version = _build_context(probe, entry, details)
    if context == UNKNOWN and program == SAME and settings == SAME:
        context = DIFFERS  # same sources, another key: only the context is left
        details.append(
            "same generated code: the build context differs (flags, compiler, tools, "
            "Python, or the stencilchain version)"
        )
    return {PROGRAM: program, SETTINGS: settings, CONTEXT: context, VERSION: version}, details


def _program(probe: Probe, entry: CacheEntry, details: list[str]) -> str:
    if not entry.program:
        return UNKNOWN
    if entry.program == probe.program.fingerprint():
        return SAME
    details.append("the program's IR changed since (its fingerprint differs)")
    return DIFFERS


def _build_settings(probe: Probe, entry: CacheEntry, program: str, details: list[str]) -> str:
    """Whether the generated sources differ because the steps' settings do."""
    recorded = bool(entry.translation_settings or entry.bindings_settings)
    changes = []
    if entry.translation_settings:
        changes += differences(entry.translation_settings, probe.source_settings, "built")
    if entry.bindings_settings:
        changes += differences(entry.bindings_settings, probe.bindings_settings, "built")
    changes = list(dict.fromkeys(changes))  # a setting both steps have (e.g. the layout)
    details += changes
    source = entry.metadata.get("key_source")
    if changes:
        return DIFFERS
    if source is not None and source == probe.extension.fingerprint():
        return SAME
    if program == DIFFERS:  # the program explains another source
        return SAME if recorded else UNKNOWN
    if source is None:
        return UNKNOWN
    details.append(
        "the generated code differs although the recorded settings are equal"
        if recorded
        else "the generated code differs: translation or bindings settings changed"
    )
    return DIFFERS


def _build_context(probe: Probe, entry: CacheEntry, details: list[str]) -> tuple[str, str]:
    """(context, version): whether the build context differs, and the package version."""
    built = entry.build_context
    if not built:  # a marker that records no context: its device and build type, if any
        for name, value in (("device", entry.device), ("build_type", entry.build_type)):
            now = probe.build_context.get(name)
            if value and now is not None and value != now:
                details.append(f"{name}: {value} when built, {now} now")
                return DIFFERS, UNKNOWN
        return UNKNOWN, UNKNOWN
    raw = entry.metadata.get("key_context", "")
    context = SAME if sha256_of(raw) == probe.context_digest else DIFFERS
    version = UNKNOWN
    if _VERSION_SETTING in built:
        version = SAME if built[_VERSION_SETTING] == package_version() else DIFFERS
        if version == DIFFERS:
            details.append(
                f"built by stencilchain {built[_VERSION_SETTING]}, this is {package_version()}"
            )
    others = {k: v for k, v in built.items() if k != _VERSION_SETTING}
    now = {k: v for k, v in probe.build_context.items() if k != _VERSION_SETTING}
    details += differences(others, now, "built")
    return context, version


# --- naming what differs -------------------------------------------------------------------

_ABSENT = object()


def differences(
    then: Mapping[str, Any], now: Mapping[str, Any], when: str, prefix: str = ""
) -> list[str]:
    """One line per setting that differs: `name: <then> when <when>, <now> now`. Nested
    settings (objects, or JSON text of one) are compared setting by setting, named by
    their path (`python.python_version`)."""
    lines = []
    for name in sorted(then.keys() | now.keys()):
        before, after = then.get(name, _ABSENT), now.get(name, _ABSENT)
        if before == after:
            continue
        label = f"{prefix}{name}"
        nested_before, nested_after = _nested(before), _nested(after)
        if nested_before is not None and nested_after is not None:
            lines += differences(nested_before, nested_after, when, f"{label}.")
        else:
            lines.append(f"{label}: {_show(before)} when {when}, {_show(after)} now")
    return lines


def _nested(value: object) -> Mapping[str, Any] | None:
    """`value` as settings of their own: an object, or the JSON text of one."""
    if isinstance(value, str) and value.startswith("{"):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _show(value: object) -> str:
    if value is _ABSENT:
        return "(none)"
    if value is None:
        return "none"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    if len(text) > _LONGEST_VALUE:
        text = text[: _LONGEST_VALUE - 3] + "..."
    return text
