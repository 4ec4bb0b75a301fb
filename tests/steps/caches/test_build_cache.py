"""The build cache: a lock per folder, a completion marker written last, crash recovery.

Also the cache root (session and persistent folders).
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from stencilchain.steps.caches.build_cache import MARKER_NAME, BuildCache
from stencilchain.steps.caches.cache_root import cache_root
from stencilchain.steps.settings import CacheLifetime

KEY = "entry_0123456789abcdef"
# the module, not the function of the same name that the package exports
cache_root_module = importlib.import_module("stencilchain.steps.caches.cache_root")


class Builder:
    """A build function that counts its calls and writes one file."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, folder: Path) -> Mapping[str, str]:
        self.calls += 1
        assert folder.is_dir() and not any(folder.iterdir()), "a build starts in an empty folder"
        (folder / "module.so").write_text("binary")
        return {"module": "module.so"}


def test_builds_once_then_hits(tmp_path: Path) -> None:
    cache, build = BuildCache(tmp_path), Builder()
    assert cache.lookup(KEY) is None
    first = cache.get_or_build(KEY, build)
    second = cache.get_or_build(KEY, build)
    assert (first.built, second.built) == (True, False)
    assert first.folder == second.folder == tmp_path / KEY
    assert first.metadata == second.metadata == {"module": "module.so"}
    assert build.calls == 1
    found = cache.lookup(KEY)
    assert found is not None and found.metadata == {"module": "module.so"} and not found.built


def test_the_marker_is_json_written_last(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path)
    seen_marker_during_build: list[bool] = []

    def build(folder: Path) -> Mapping[str, str]:
        seen_marker_during_build.append((folder / MARKER_NAME).exists())
        return {"a": "b"}

    cache.get_or_build(KEY, build)
    assert seen_marker_during_build == [False]
    marker = json.loads((tmp_path / KEY / MARKER_NAME).read_text())
    assert marker["key"] == KEY and marker["metadata"] == {"a": "b"}
    assert [p.name for p in (tmp_path / KEY).iterdir()] == [MARKER_NAME]  # no temp files left


@pytest.mark.parametrize("key", ["", ".hidden", "-x", "a/b", "../up", "a b", "x" * 201])
def test_invalid_keys_are_rejected(tmp_path: Path, key: str) -> None:
    with pytest.raises(ValueError, match="build cache key"):
        BuildCache(tmp_path).folder(key)


def test_a_failed_build_keeps_its_log_has_no_marker_and_is_rebuilt(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path)

    def failing(folder: Path) -> Mapping[str, str]:
        (folder / "build.log").write_text("error: something went wrong\n")
        (folder / "half.o").write_text("partial")
        raise RuntimeError("compiler crashed")

    with pytest.raises(RuntimeError, match="compiler crashed"):
        cache.get_or_build(KEY, failing)
    assert (tmp_path / KEY / "build.log").read_text() == "error: something went wrong\n"
    assert not (tmp_path / KEY / MARKER_NAME).exists()
    assert cache.lookup(KEY) is None

    build = Builder()  # asserts that it starts in an empty folder: the stale one is cleared
    result = cache.get_or_build(KEY, build)
    assert result.built and build.calls == 1
    assert not (tmp_path / KEY / "half.o").exists()
    assert not [p for p in tmp_path.iterdir() if "stale" in p.name]


def test_bad_metadata_leaves_no_marker(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path)
    with pytest.raises(TypeError, match="metadata must map str to str"):
        cache.get_or_build(KEY, lambda folder: {"n": 1})  # type: ignore[dict-item]
    assert cache.lookup(KEY) is None


@pytest.mark.parametrize(
    "marker",
    [
        "{ truncated",
        json.dumps({"format": 1, "key": "another_key", "metadata": {}}),
        json.dumps({"format": 1, "key": KEY, "metadata": {"n": 1}}),
        json.dumps({"format": 2, "key": KEY, "metadata": {}}),
    ],
)
def test_a_bad_marker_is_not_trusted(tmp_path: Path, marker: str) -> None:
    (tmp_path / KEY).mkdir()
    (tmp_path / KEY / "stale").write_text("?")
    (tmp_path / KEY / MARKER_NAME).write_text(marker)
    cache, build = BuildCache(tmp_path), Builder()
    assert cache.lookup(KEY) is None
    assert cache.get_or_build(KEY, build).built
    assert not (tmp_path / KEY / "stale").exists()


def test_discard_forces_a_rebuild(tmp_path: Path) -> None:
    cache, build = BuildCache(tmp_path), Builder()
    cache.get_or_build(KEY, build)
    cache.discard(KEY)
    assert cache.lookup(KEY) is None
    assert cache.get_or_build(KEY, build).built and build.calls == 2


# --- several processes ---------------------------------------------------------------------

_WORKER = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path
    from stencilchain.steps.caches.build_cache import BuildCache

    root, key, go, mode = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), sys.argv[4]
    while not go.exists():  # start together
        time.sleep(0.001)

    def build(folder):
        with open(root / "builds.txt", "a") as log:
            log.write(f"{os.getpid()}\\n")
        (folder / "partial.o").write_text("half written")
        if mode == "hang":
            (root / "started").write_text("")
            time.sleep(600)
        time.sleep(1.0)  # a slow compiler: the others must wait, not build
        (folder / "module.so").write_text(str(os.getpid()))
        return {"builder": str(os.getpid())}

    result = BuildCache(root).get_or_build(key, build)
    print(json.dumps({"built": result.built, "builder": result.metadata["builder"],
                      "module": (result.folder / "module.so").read_text()}))
    """
)


def _start_worker(root: Path, go: Path, mode: str = "build") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WORKER, str(root), KEY, str(go), mode],
        stdout=subprocess.PIPE,
        text=True,
    )


def test_concurrent_processes_build_once_and_the_others_wait(tmp_path: Path) -> None:
    go = tmp_path / "go"
    workers = [_start_worker(tmp_path, go) for _ in range(3)]
    time.sleep(0.5)  # let them import and wait at the start line
    go.write_text("")
    results = []
    for worker in workers:
        out, _ = worker.communicate(timeout=120)
        assert worker.returncode == 0
        results.append(json.loads(out))
    assert sorted(r["built"] for r in results) == [False, False, True]
    builder = next(r["builder"] for r in results if r["built"])
    assert all(r["builder"] == builder and r["module"] == builder for r in results)
    assert (tmp_path / "builds.txt").read_text().split() == [builder]


def test_a_killed_build_is_rebuilt_and_its_lock_released(tmp_path: Path) -> None:
    go = tmp_path / "go"
    go.write_text("")
    worker = _start_worker(tmp_path, go, mode="hang")
    deadline = time.monotonic() + 60
    while not (tmp_path / "started").exists():
        assert time.monotonic() < deadline and worker.poll() is None, "the build did not start"
        time.sleep(0.01)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=60)
    assert (tmp_path / KEY / "partial.o").exists()  # what the killed build left behind

    cache, build = BuildCache(tmp_path), Builder()
    assert cache.lookup(KEY) is None
    result = cache.get_or_build(KEY, build)  # would block forever if the lock were still held
    assert result.built and build.calls == 1
    assert not (tmp_path / KEY / "partial.o").exists()


# --- cache root ------------------------------------------------------------------------------


def test_persistent_root_is_the_configured_folder(tmp_path: Path) -> None:
    root = cache_root(CacheLifetime.PERSISTENT, tmp_path / "cache")
    assert root == tmp_path / "cache" and root.is_dir()


def test_persistent_default_is_the_user_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import platformdirs

    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda app: str(tmp_path / app))
    assert cache_root(CacheLifetime.PERSISTENT, None) == tmp_path / "stencilchain"


def test_session_root_is_one_temporary_folder_per_process(tmp_path: Path) -> None:
    first = cache_root(CacheLifetime.SESSION, tmp_path)
    assert first == cache_root(CacheLifetime.SESSION, tmp_path)
    assert first.parent == tmp_path and first.is_dir()
    cache_root_module._session_root.cache_clear()  # a new "process"
    assert cache_root(CacheLifetime.SESSION, tmp_path) != first


def test_session_root_is_removed_at_exit(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from stencilchain.steps.caches.cache_root import cache_root
        from stencilchain.steps.settings import CacheLifetime
        root = cache_root(CacheLifetime.SESSION, Path({str(tmp_path)!r}))
        (root / "build").mkdir()
        print(root)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    root = Path(done.stdout.strip())
    assert root.parent == tmp_path
    assert not root.exists()


def test_cache_root_checks_its_lifetime(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="CacheLifetime"):
        cache_root("session", tmp_path)  # type: ignore[arg-type]
