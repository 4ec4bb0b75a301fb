"""The translation cache: JSON entries, atomic publication, corrupt entries are misses."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
from pathlib import Path

import pytest

from stencilchain.steps.caches import translation_cache as tc
from stencilchain.steps.caches.translation_cache import TranslationCache
from stencilchain.steps.workflow import CachedStep

KEY = "ab" + "0123456789" * 6


def test_miss_then_hit(tmp_path: Path) -> None:
    cache = TranslationCache(tmp_path)
    assert cache.get(KEY) is None
    cache.put(KEY, "int main() { return 0; }\n")
    assert cache.get(KEY) == "int main() { return 0; }\n"
    assert TranslationCache(tmp_path).get(KEY) == "int main() { return 0; }\n"  # another instance


def test_put_replaces_and_keys_are_independent(tmp_path: Path) -> None:
    cache = TranslationCache(tmp_path)
    cache.put(KEY, "old")
    cache.put(KEY, "new ✓")
    cache.put("cd" + KEY, "other")
    assert cache.get(KEY) == "new ✓"
    assert cache.get("cd" + KEY) == "other"


def test_entries_are_json_fanned_out_by_key_prefix(tmp_path: Path) -> None:
    cache = TranslationCache(tmp_path)
    cache.put(KEY, "payload")
    path = tmp_path / KEY[:2] / f"{KEY}.json"
    assert cache.path(KEY) == path
    entry = json.loads(path.read_text())
    assert entry["key"] == KEY
    assert entry["payload"] == "payload"
    assert {"version", "sha256", "format"} <= entry.keys()


@pytest.mark.parametrize("key", ["", "a", "../etc/passwd", "a/b", "a.b", "x" * 201, "ké"])
def test_invalid_keys_are_rejected(tmp_path: Path, key: str) -> None:
    with pytest.raises(ValueError, match="translation cache key"):
        TranslationCache(tmp_path).get(key)


def _corrupt(path: Path, how: str) -> None:
    raw = path.read_bytes()
    entry = json.loads(raw)
    if how == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif how == "garbage":
        path.write_bytes(b"\x80\x81 not json \xff")
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "payload edited":
        entry["payload"] += " tampered"
        path.write_text(json.dumps(entry))
    elif how == "another key":
        entry["key"] = "zz" + KEY
        path.write_text(json.dumps(entry))
    elif how == "another version":
        entry["version"] = "0.0.0-other"
        path.write_text(json.dumps(entry))
    elif how == "unknown format":
        entry["format"] = 999
        path.write_text(json.dumps(entry))
    elif how == "not an object":
        path.write_text(json.dumps([entry]))
    elif how == "payload not text":
        entry["payload"] = 42
        path.write_text(json.dumps(entry))


@pytest.mark.parametrize(
    "how",
    [
        "truncated",
        "garbage",
        "empty",
        "payload edited",
        "another key",
        "another version",
        "unknown format",
        "not an object",
        "payload not text",
    ],
)
def test_a_bad_entry_is_a_logged_miss(
    tmp_path: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    cache = TranslationCache(tmp_path)
    cache.put(KEY, "good payload")
    _corrupt(cache.path(KEY), how)
    with caplog.at_level(logging.WARNING, logger=tc.__name__):
        assert cache.get(KEY) is None
    assert any(str(cache.path(KEY)) in r.getMessage() for r in caplog.records)
    cache.put(KEY, "rewritten")  # a miss is repaired by the next put
    assert cache.get(KEY) == "rewritten"


def test_publication_is_an_atomic_rename_in_the_same_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renames: list[tuple[Path, Path]] = []
    real_replace = os.replace

    def recording_replace(src: str, dst: str) -> None:
        renames.append((Path(src), Path(dst)))
        assert not Path(dst).exists() or Path(dst).read_text() != Path(src).read_text()
        real_replace(src, dst)

    monkeypatch.setattr("stencilchain.steps.caches.translation_cache.os.replace", recording_replace)
    cache = TranslationCache(tmp_path)
    cache.put(KEY, "v1")
    cache.put(KEY, "v2")
    assert [dst for _, dst in renames] == [cache.path(KEY)] * 2
    assert all(src.parent == dst.parent and src != dst for src, dst in renames)
    assert sorted(p.name for p in cache.path(KEY).parent.iterdir()) == [f"{KEY}.json"]


def test_a_failed_publication_keeps_the_old_entry_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    cache = TranslationCache(tmp_path)
    cache.put(KEY, "v1")

    def failing_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("stencilchain.steps.caches.translation_cache.os.replace", failing_replace)
    with caplog.at_level(logging.WARNING, logger=tc.__name__):
        cache.put(KEY, "v2")  # logged, not raised: the cache only saves time
    assert "cannot be written" in caplog.text
    monkeypatch.undo()
    assert cache.get(KEY) == "v1"
    assert sorted(p.name for p in cache.path(KEY).parent.iterdir()) == [f"{KEY}.json"]


def test_readers_never_see_a_partial_entry(tmp_path: Path) -> None:
    cache = TranslationCache(tmp_path)
    payloads = [str(i) * 200_000 for i in range(4)]
    cache.put(KEY, payloads[0])
    stop = threading.Event()
    seen: list[str | None] = []

    def write() -> None:
        for n in range(40):
            cache.put(KEY, payloads[n % len(payloads)])
        stop.set()

    writer = threading.Thread(target=write)
    writer.start()
    while not stop.is_set():
        seen.append(cache.get(KEY))
    writer.join()
    assert seen and all(text in payloads for text in seen)


def test_an_unwritable_cache_is_a_logged_miss(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "file").write_text("not a folder")
    cache = TranslationCache(tmp_path / "file")
    with caplog.at_level(logging.WARNING, logger=tc.__name__):
        cache.put(KEY, "payload")
        assert cache.get(KEY) is None
    assert "cannot be written" in caplog.text


def test_it_backs_a_cached_step(tmp_path: Path) -> None:
    @dataclasses.dataclass
    class Upper:
        calls: int = 0

        def __call__(self, text: str) -> str:
            self.calls += 1
            return text.upper()

    step = Upper()
    cached = CachedStep(
        step,
        TranslationCache(tmp_path),
        key=lambda s: "k_" + s,
        encode=lambda out: out,
        decode=lambda inp, text: text,
    )
    assert cached("abc") == "ABC"
    assert cached("abc") == "ABC"
    assert step.calls == 1


@pytest.mark.parametrize("workspace", [False, True])
def test_program_sources_round_trip_with_every_field(workspace: bool) -> None:
    """What the toolchains store: every field of a ProgramSource comes back, the
    workspace flag (DaCe's external transients) included."""
    from stencilchain.examples import hdiff_staged
    from stencilchain.program.device import Device
    from stencilchain.steps.caches.translation_cache import (
        decode_program_source,
        encode_program_source,
    )
    from stencilchain.steps.stages import ProgramSource

    program = hdiff_staged.PROGRAM.ir
    source = ProgramSource(
        program, "entry", "code", "sdfg", Device.CPU, ("dace-sdfg",), workspace=workspace
    )
    again = decode_program_source(program, encode_program_source(source))
    assert again == source
    assert again.fingerprint() == source.fingerprint()
    other = dataclasses.replace(source, workspace=not workspace)
    assert other.fingerprint() != source.fingerprint()
