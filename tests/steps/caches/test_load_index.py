"""The load index's store (docs/adr/0039-load-index.md): an entry is read back as written;
a missing, corrupt, truncated, foreign, tampered or older entry is a miss, never a crash;
an entry of another user is refused; an unwritable index is ignored; entries are private
and published whole."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stencilchain import _version
from stencilchain.errors import CacheSecurityError
from stencilchain.steps.caches import trust
from stencilchain.steps.caches.cache_root import CacheLocation
from stencilchain.steps.caches.load_index import IndexRecord, LoadIndex, index_key

RECORD = IndexRecord(
    build="lap_0123456789abcdef0123456789abcdef",
    module_name="_sc_lap_0123456789ab",
    entry_point="lap",
    workspace=False,
    context="c" * 64,
)
KEY = index_key("translation-key", "bindings settings", "load context")


def index(tmp_path: Path) -> LoadIndex:
    return CacheLocation(tmp_path / "cache").load_index()


def test_an_entry_is_read_back_as_written_and_is_private(tmp_path: Path) -> None:
    idx = index(tmp_path)
    assert idx.root == tmp_path / "cache" / "index"
    assert idx.get(KEY) is None  # nothing yet
    idx.put(KEY, RECORD)
    assert idx.get(KEY) == RECORD
    path = idx.path(KEY)
    assert path.parent.name == KEY[:2]
    assert os.stat(path).st_mode & 0o077 == 0
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left


def test_the_key_covers_each_of_its_parts() -> None:
    keys = {
        index_key("t", "b", "c"),
        index_key("t2", "b", "c"),
        index_key("t", "b2", "c"),
        index_key("t", "b", "c2"),
        index_key("tb", "", "c"),  # parts are length-prefixed: no two splits collide
    }
    assert len(keys) == 5


def _rewrite(path: Path, change: object) -> None:
    entry = json.loads(path.read_text())
    if callable(change):
        change(entry)
    path.write_text(json.dumps(entry))


@pytest.mark.parametrize(
    "damage",
    [
        "truncated",
        "not json",
        "another key",
        "another version",
        "another format",
        "record tampered",
        "record of the wrong types",
        "record missing a field",
    ],
)
def test_an_unusable_entry_is_a_miss(
    damage: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    idx = index(tmp_path)
    idx.put(KEY, RECORD)
    path = idx.path(KEY)
    text = path.read_text()
    changes = {
        "truncated": lambda: path.write_text(text[: len(text) // 2]),
        "not json": lambda: path.write_bytes(b"\x00\xff garbage"),
        "another key": lambda: _rewrite(path, lambda e: e.update(key="x" * 64)),
        "another version": lambda: _rewrite(path, lambda e: e.update(version="0.0.0+old")),
        "another format": lambda: _rewrite(path, lambda e: e.update(format=99)),
        "record tampered": lambda: _rewrite(
            path, lambda e: e["record"].update(build="other_0123456789abcdef0123456789abcdef")
        ),
        "record of the wrong types": lambda: _rewrite(
            path, lambda e: e["record"].update(workspace="no")
        ),
        "record missing a field": lambda: _rewrite(path, lambda e: e["record"].pop("context")),
    }
    changes[damage]()
    assert idx.get(KEY) is None
    assert "treated as a miss" in caplog.text
    idx.put(KEY, RECORD)  # the next build's record replaces it
    assert idx.get(KEY) == RECORD


def test_an_entry_of_this_version_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    idx = index(tmp_path)
    idx.put(KEY, RECORD)
    monkeypatch.setattr("stencilchain.steps.caches.load_index.package_version", lambda: "9.9.9+x")
    assert idx.get(KEY) is None
    assert _version.package_version() != "9.9.9+x"


def test_an_entry_another_user_could_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    idx = index(tmp_path)
    idx.put(KEY, RECORD)
    os.chmod(idx.path(KEY), 0o666)
    with pytest.raises(CacheSecurityError, match="load index entry"):
        idx.get(KEY)
    os.chmod(idx.path(KEY), 0o600)
    monkeypatch.setattr(trust, "current_uid", lambda: os.geteuid() + 1)
    with pytest.raises(CacheSecurityError):
        idx.get(KEY)


def test_an_unreadable_or_unwritable_index_only_costs_time(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    idx = index(tmp_path)
    idx.root.parent.mkdir(parents=True)
    idx.root.write_text("a file where the index folder would be")
    idx.put(KEY, RECORD)  # logged, not raised
    assert "cannot be written" in caplog.text
    assert idx.get(KEY) is None


def test_a_key_that_is_not_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="load index key"):
        index(tmp_path).get("../escape")


def test_clear_removes_every_entry_and_nothing_else(tmp_path: Path) -> None:
    idx = index(tmp_path)
    other = index_key("another", "b", "c")
    idx.put(KEY, RECORD)
    idx.put(other, RECORD)
    stranger = idx.root / "notes.txt"
    stranger.write_text("not the index's")
    assert idx.clear() == 2
    assert idx.get(KEY) is None and idx.get(other) is None
    assert sorted(p.name for p in idx.root.iterdir()) == ["notes.txt"]
    assert index(tmp_path / "none").clear() == 0  # no index yet
