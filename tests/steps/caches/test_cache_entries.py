"""The caches list their own entries (what each records), remove them, and record their
last use without writing on every use."""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from stencilchain.program import ir
from stencilchain.program.device import Device
from stencilchain.steps.caches import entries as kinds
from stencilchain.steps.caches.build_cache import MARKER_NAME, BuildCache, BuildFunction
from stencilchain.steps.caches.cache_root import CacheLocation
from stencilchain.steps.caches.entries import CacheEntry
from stencilchain.steps.caches.translation_cache import encode_program_source
from stencilchain.steps.dace.family import DACE
from stencilchain.steps.gtfn.family import GTFN
from stencilchain.steps.stages import BindingSource, ExtensionSource, ProgramSource

HOUR = 3600.0
KEY = "smooth_" + "a" * 32


@pytest.fixture()
def location(tmp_path: Path) -> CacheLocation:
    return CacheLocation(tmp_path / "cache", families=(GTFN, DACE))


def _program() -> ir.Program:
    from stencilchain.examples import hdiff_staged

    return hdiff_staged.PROGRAM.ir


def _source(language: str = "cpp") -> ProgramSource:
    return ProgramSource(
        _program(),
        "smooth",
        "// code\n",
        language,
        Device.CPU,
        settings=json.dumps({"data_layout": "strided", "enable_transforms": "True"}),
    )


def _age(path: Path, *, completed: float, used: float) -> None:
    now = time.time()
    os.utime(path, (now - used, now - completed))


def _marker_metadata() -> dict[str, str]:
    extension = ExtensionSource(
        _source(), BindingSource("// bindings\n", "cpp", settings=json.dumps({"flavor": "capi"}))
    )
    context = json.dumps({"package": "1.0", "build_type": "release", "flags": ["-O3"]})
    return {
        "module": "m.so",
        "entry_point": "smooth",
        "device": "cpu",
        "build_type": "release",
        **extension.key_metadata("gtfn", context),
    }


def _build(metadata: Mapping[str, str]) -> BuildFunction:
    def build(folder: Path) -> Mapping[str, str]:
        (folder / "m.so").write_bytes(b"x" * 1000)
        return metadata

    return build


# --- build entries -----------------------------------------------------------------------------


def test_a_build_entry_records_what_its_marker_says(location: CacheLocation) -> None:
    cache = location.build_cache()
    cache.get_or_build(KEY, _build(_marker_metadata()))
    (entry,) = cache.entries()
    assert (entry.kind, entry.key, entry.path) == (kinds.BUILD, KEY, cache.folder(KEY))
    assert (entry.family, entry.name, entry.device, entry.build_type) == (
        "gtfn", "smooth", "cpu", "release",
    )  # fmt: skip
    assert entry.translation_settings == {"data_layout": "strided", "enable_transforms": "True"}
    assert entry.bindings_settings == {"flavor": "capi"}
    assert entry.build_context == {"package": "1.0", "build_type": "release", "flags": ["-O3"]}
    assert entry.version == "1.0"
    assert entry.program == _program().fingerprint()
    assert entry.size >= 1000 and entry.completed <= entry.last_used <= time.time()


def test_build_entries_of_every_kind(location: CacheLocation) -> None:
    cache = location.build_cache()
    cache.get_or_build(KEY, _build(_marker_metadata()))
    cache.get_or_build("toolchain-" + "d" * 32, _build({"platform_dir": ""}))
    builds = location.builds
    (builds / "crashed_x").mkdir()  # a lock, no marker
    (builds / "crashed_x.lock").touch()
    (builds / "damaged_x").mkdir()
    (builds / "damaged_x" / MARKER_NAME).write_text("{ trunc")
    (builds / ".gone_x.stale-0123456789ab").mkdir()
    (builds / "notes").mkdir()  # no marker, no lock: not the cache's
    (builds / "linked_x").symlink_to(builds / "notes")
    found = {e.key: e for e in cache.entries()}
    assert {k: e.kind for k, e in found.items()} == {
        KEY: kinds.BUILD,
        "toolchain-" + "d" * 32: kinds.SUPPORT,
        "crashed_x": kinds.INCOMPLETE,
        "damaged_x": kinds.DAMAGED,
        ".gone_x.stale-0123456789ab": kinds.STALE,
    }
    assert found["toolchain-" + "d" * 32].family == "gtfn"  # a support folder of GTFN's
    unnamed = BuildCache(cache.root, cache_root=location.root)  # no families: no guess
    assert {e.family for e in unnamed.entries() if e.key.startswith("toolchain-")} == {""}
    assert found[".gone_x.stale-0123456789ab"].name == "gone_x"
    assert (
        found["damaged_x"].problem
        == "its completion marker is not valid JSON (corrupt or truncated)"
    )
    assert cache.lock_count() == 3


@pytest.fixture()
def held(location: CacheLocation) -> Iterator[BuildCache]:
    """A build cache in which another process is building KEY (its lock is held)."""
    cache = location.build_cache()
    cache.get_or_build(KEY, _build({"entry_point": "smooth"}))
    fd = os.open(location.builds / f"{KEY}.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield cache
    finally:
        os.close(fd)


def test_discard_skips_a_busy_build_without_waiting(held: BuildCache) -> None:
    (entry,) = held.entries()
    assert held.is_busy(KEY)
    assert held.discard(entry, wait=False) is False
    assert held.lookup(KEY) is not None


def test_discard_removes_a_build_and_keeps_its_lock(location: CacheLocation) -> None:
    cache = location.build_cache()
    cache.get_or_build(KEY, _build({"entry_point": "smooth"}))
    (entry,) = cache.entries()
    assert not cache.is_busy(KEY)
    assert cache.discard(entry, wait=False) is True
    assert not cache.folder(KEY).exists() and (location.builds / f"{KEY}.lock").exists()
    assert list(cache.entries()) == []


def test_discard_refuses_what_is_not_the_caches(location: CacheLocation, tmp_path: Path) -> None:
    cache = location.build_cache()
    outside = tmp_path / "outside"
    outside.mkdir()
    forged = CacheEntry(kinds.STALE, "outside", outside, 0, 0.0, 0.0)
    with pytest.raises(ValueError, match="is not a stale folder of the build cache"):
        cache.discard(forged)
    assert outside.is_dir()


# --- translation entries -------------------------------------------------------------------------


def test_a_translation_entry_records_its_program_and_settings(location: CacheLocation) -> None:
    cache = location.translation_cache()
    key = "ab" + "0" * 62
    cache.put(key, encode_program_source(_source("sdfg")))
    (entry,) = cache.entries()
    assert (entry.kind, entry.key, entry.path) == (kinds.TRANSLATION, key, cache.path(key))
    assert (entry.family, entry.name, entry.device) == ("dace", "smooth", "cpu")
    assert entry.translation_settings == {"data_layout": "strided", "enable_transforms": "True"}
    assert entry.program == _program().fingerprint()
    assert entry.size == cache.path(key).stat().st_size


def test_damaged_and_abandoned_translation_entries(location: CacheLocation) -> None:
    cache = location.translation_cache()
    good, bad, foreign = "ab" + "0" * 62, "ab" + "1" * 62, "ab" + "2" * 62
    cache.put(good, encode_program_source(_source()))
    cache.put(bad, encode_program_source(_source()))
    cache.path(bad).write_text(cache.path(bad).read_text()[:40])
    cache.put(foreign, "not a program source")
    abandoned = cache.path(good).parent / ".x.json.tmp"
    abandoned.write_text("half")
    _age(abandoned, completed=2 * HOUR, used=2 * HOUR)
    (cache.path(good).parent / ".y.json.tmp").write_text("being written")
    found = {e.key: e for e in cache.entries()}
    assert {k: e.kind for k, e in found.items()} == {
        good: kinds.TRANSLATION,
        bad: kinds.DAMAGED,
        foreign: kinds.DAMAGED,
        ".x.json.tmp": kinds.STALE,
    }
    assert found[bad].problem == "not valid JSON (corrupt or truncated)"
    assert found[foreign].problem == "its payload is not a translated program source"
    for entry in found.values():
        assert cache.discard(entry)
    assert [p.name for p in cache.path(good).parent.iterdir()] == [".y.json.tmp"]


def test_discarding_the_last_entry_removes_its_fan_out_folder(location: CacheLocation) -> None:
    cache = location.translation_cache()
    key = "cd" + "0" * 62
    cache.put(key, "text")
    assert cache.discard(key)
    assert not cache.path(key).parent.exists() and cache.get(key) is None


def test_discard_refuses_a_translation_entry_outside(
    location: CacheLocation, tmp_path: Path
) -> None:
    outside = tmp_path / "ab" / ("ab" + "0" * 62 + ".json")
    outside.parent.mkdir()
    outside.write_text("{}")
    forged = CacheEntry(kinds.TRANSLATION, "ab" + "0" * 62, outside, 2, 0.0, 0.0)
    with pytest.raises(ValueError, match="is not a translation entry of the translation cache"):
        location.translation_cache().discard(forged)
    assert outside.exists()


# --- last use ---------------------------------------------------------------------------------


def test_a_use_is_recorded_at_most_once_an_hour(location: CacheLocation) -> None:
    builds, translations = location.build_cache(), location.translation_cache()
    builds.get_or_build(KEY, _build({"entry_point": "smooth"}))
    key = "ab" + "0" * 62
    translations.put(key, "text")
    files_ = [builds.folder(KEY) / MARKER_NAME, translations.path(key)]

    def used() -> list[float]:
        return [e.last_used for e in [*builds.entries(), *translations.entries()]]

    for path in files_:
        _age(path, completed=30 * 24 * HOUR, used=2 * HOUR)
    listed = used()
    assert all(time.time() - t > 1.9 * HOUR for t in listed)
    assert used() == listed  # listing is not a use
    assert builds.lookup(KEY) is not None and translations.get(key) == "text"
    assert all(time.time() - t < 60 for t in used())
    assert all(time.time() - p.stat().st_mtime > 29 * 24 * HOUR for p in files_)  # completion kept

    for path in files_:
        _age(path, completed=30 * 24 * HOUR, used=HOUR / 2)
    recent = used()
    builds.lookup(KEY), translations.get(key)
    assert used() == recent  # recorded half an hour ago: not written again


def test_a_use_on_a_read_only_file_system_is_not_recorded(
    location: CacheLocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = location.translation_cache()
    key = "ab" + "0" * 62
    cache.put(key, "text")
    _age(cache.path(key), completed=2 * HOUR, used=2 * HOUR)

    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr("stencilchain.steps.caches.files.os.utime", read_only)
    assert cache.get(key) == "text"  # the hint is lost, the entry is not
