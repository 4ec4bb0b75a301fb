"""Cache hygiene (issue 13): a size limit kept after builds (`STENCILCHAIN_CACHE_MAX_SIZE`,
least recently used first, never an entry another process holds nor the new build) and by
`stencilchain cache prune`, and a salt mixed into every key (`STENCILCHAIN_CACHE_SALT`).

Every test uses a cache folder of its own (never the session cache, never the user's).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.containers import build_container
from stencilchain.containers.config import GTFNConfig
from stencilchain.containers.environment import settings_from_environ
from stencilchain.errors import ConfigError
from stencilchain.runtime.config import output_settings
from stencilchain.steps.caches import pruning
from stencilchain.steps.caches.build_cache import MARKER_NAME
from stencilchain.steps.caches.entries import BUILD, INCOMPLETE, SUPPORT, TRANSLATION, CacheEntry
from stencilchain.steps.caches.files import folder_size
from tests._support import family_toolchain

I = sc.Dimension("I")
J = sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]
DAY = 86400.0


def _program(weight: float) -> sc.Program:
    """A small program of its own per weight (a new fingerprint: a new build)."""

    @sc.field_operator
    def blur(f: F) -> F:
        return weight * f + f(I + 1) + f(J - 1)

    @sc.program
    def hygiene_blur(f: F, out: F) -> None:
        blur(f, out=out)

    return hygiene_blur


def _check(program: sc.Program, toolchain: Any) -> None:
    """The compiled program gives the embedded executor's result."""
    f = np.random.default_rng(0).random((9, 7))
    expected, out = np.zeros_like(f), np.zeros_like(f)
    program(f, expected)
    program.with_backend(toolchain)(f, out)
    np.testing.assert_array_equal(out, expected)


# --- settings ----------------------------------------------------------------------------


def test_settings_parse_and_only_the_salt_changes_outputs() -> None:
    values = settings_from_environ(
        {"STENCILCHAIN_CACHE_MAX_SIZE": "1.5G", "STENCILCHAIN_CACHE_SALT": " a b "}
    )
    assert values["cache_max_size"] == 3 * 512 * 1024**2
    assert values["cache_salt"] == "a b"
    defaults = settings_from_environ({})
    assert defaults["cache_max_size"] is None and defaults["cache_salt"] == ""
    for bad in ("lots", "-1G", "2X"):
        with pytest.raises(ConfigError, match=f"STENCILCHAIN_CACHE_MAX_SIZE={bad!r}"):
            settings_from_environ({"STENCILCHAIN_CACHE_MAX_SIZE": bad})
    config = build_container({}, cache_max_size="500M", cache_salt="x").gtfn.toolchain_config()
    assert config.cache_max_size == 500 * 1024**2 and config.cache_salt == "x"
    # the limit changes no output (no key, no toolchain identity); the salt does
    base = GTFNConfig()
    assert output_settings(dataclasses.replace(base, cache_max_size=1)) == output_settings(base)
    assert output_settings(dataclasses.replace(base, cache_salt="x")) != output_settings(base)
    with pytest.raises(ConfigError, match="cache_max_size"):
        GTFNConfig(cache_max_size=-1)


# --- the salt ----------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_a_salt_builds_afresh_and_keeps_the_other_salts_builds(family: str, tmp_path: Path) -> None:
    if family == "dace":
        pytest.importorskip("dace", reason="the DaCe toolchains need the `dace` extra")
    program = _program(2.0 if family == "gtfn" else 3.0)
    cache = tmp_path / "cache"
    artifacts, translation_keys = {}, {}
    for salt in ("A", "B", ""):
        toolchain = family_toolchain(family, cache, cache_salt=salt)
        compiled = program.with_backend(toolchain).compile()
        assert compiled.artifact.built, f"salt {salt!r} found another salt's build"
        _check(program, toolchain)
        artifacts[salt] = compiled.artifact
        translation_keys[salt] = toolchain.workflow.translation_key(program.ir)
        assert toolchain.workflow.translation_cache.salt == salt
    assert len({a.build_dir for a in artifacts.values()}) == 3
    assert len({a.module_name for a in artifacts.values()}) == 3
    assert len(set(translation_keys.values())) == 3
    assert all(a.build_dir.is_dir() for a in artifacts.values())  # nothing was removed
    # the same salt again, in a new container (a new process would do the same): a hit
    again = family_toolchain(family, cache, cache_salt="A")
    compiled = program.with_backend(again).compile()
    assert not compiled.artifact.built
    assert compiled.artifact.build_dir == artifacts["A"].build_dir
    _check(program, again)
    # the salt is what the build context records (`cache explain` names it)
    entries = {e.path: e for e in again.workflow.compilation.cache.entries()}
    assert entries[artifacts["A"].build_dir].build_context["salt"] == "A"
    assert "salt" not in entries[artifacts[""].build_dir].build_context
    # `cache explain` says that the salt is what differs
    from stencilchain.app.cache_explain import explain_build, explain_translation
    from stencilchain.app.cache_probe import probe

    other = family_toolchain(family, cache, cache_salt="C")
    found = probe(other, program.ir)
    listed = [*other.workflow.translation_cache.entries(), *entries.values()]
    for answer in (
        explain_translation(found, listed, family),
        explain_build(found, listed, family),
    ):
        assert not answer.hit
        assert any(d.startswith("salt: ") and d.endswith(", C now") for d in answer.details)
    if family == "gtfn":  # support folders are salted too: CMake's detection is redone
        detection = [e for e in entries.values() if e.key.startswith("toolchain-")]
        assert len(detection) == 3


def test_the_dace_build_key_holds_the_compiler_identity_and_flags(tmp_path: Path) -> None:
    """As tests/steps/gtfn/test_cmake_compiler.py checks for GTFN: a compiler that now reports
    another version, or other flags, never reuse a DaCe build."""
    pytest.importorskip("dace", reason="the DaCe toolchains need the `dace` extra")
    from stencilchain.steps.build.tools import find_tools

    toolchain = family_toolchain("dace", tmp_path / "cache")
    extension = toolchain.workflow.bindings(toolchain.workflow.translation(_program(5.0).ir))
    real = shutil.which("g++") or shutil.which("c++")
    assert real is not None
    wrapper = tmp_path / "bin" / "c++"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    compiler = dataclasses.replace(toolchain.workflow.compilation, cxx=str(wrapper))
    before = compiler.plan(extension).key
    assert dataclasses.replace(compiler, cpu_args=("-O1",)).plan(extension).key != before
    wrapper.write_text(
        '#!/bin/sh\nif [ "$1" = --version ]; then echo "c++ (upgraded) 99.1"; exit 0; fi\n'
        f'exec {real} "$@"\n'
    )
    os.utime(wrapper, ns=(wrapper.stat().st_mtime_ns + 10**9,) * 2)
    find_tools.cache_clear()
    try:
        after = compiler.plan(extension).key
    finally:
        find_tools.cache_clear()
    assert after != before


# --- the policy, on entries made up ------------------------------------------------------


def _entry(kind: str, name: str, size: int, used: float) -> CacheEntry:
    return CacheEntry(kind, name, Path("/cache/builds") / name, size, used, used, name=name)


def test_plan_prune_goes_by_last_use_and_spares_what_it_must_keep() -> None:
    now = 10 * DAY
    old, middle, new = (
        _entry(BUILD, "old", 100, now - 3 * DAY),
        _entry(BUILD, "middle", 100, now - 2 * DAY),
        _entry(BUILD, "new", 100, now - 1 * DAY),
    )
    support = _entry(SUPPORT, "toolchain-x", 100, now - 9 * DAY)
    crashed = _entry(INCOMPLETE, "crashed", 10, now)
    text = _entry(TRANSLATION, "t", 1, now - 2.5 * DAY)
    entries = [new, support, crashed, middle, old, text]
    chosen = pruning.plan_prune(entries, max_size=250, older_than=None, now=now)
    assert [e.name for e in chosen] == ["crashed", "old", "t", "middle"]
    kept = pruning.plan_prune(entries, max_size=250, older_than=None, now=now, keep={old.path})
    assert [e.name for e in kept] == ["crashed", "t", "middle", "new"]
    # support folders go last, however old
    assert pruning.plan_prune(entries, max_size=0, older_than=None, now=now)[-1] is support


# --- after builds, on real builds ----------------------------------------------------------


@contextlib.contextmanager
def _held_by_another_process(lock: Path) -> Iterator[None]:
    """Another process holds the flock of `lock` (as a build of it would) meanwhile."""
    code = textwrap.dedent(
        f"""
        import fcntl, os, sys
        fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("held", flush=True)
        sys.stdin.read()
        """
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        probe = os.open(lock, os.O_RDWR)
        try:  # the lock is really taken
            with pytest.raises(BlockingIOError):
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(probe)
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def _used(folder: Path, days_ago: float) -> None:
    """Make the build in `folder` completed and last used `days_ago` days ago."""
    then = time.time() - days_ago * DAY
    os.utime(folder / MARKER_NAME, (then, then))


def _total(cache: Path) -> int:
    location = build_container({}, cache_dir=cache).gtfn.cache_location()
    entries = [*location.translation_cache().entries(), *location.build_cache().entries()]
    return sum(e.size for e in entries)


@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_a_build_over_the_limit_prunes_the_least_recently_used_but_never_a_held_entry(
    family: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if family == "dace":
        pytest.importorskip("dace", reason="the DaCe toolchains need the `dace` extra")
    results: list[pruning.PruneResult | None] = []
    real_prune = pruning.prune_after_build

    def recording_prune(*args: Any, **kwargs: Any) -> pruning.PruneResult | None:
        results.append(real_prune(*args, **kwargs))
        return results[-1]

    monkeypatch.setattr(pruning, "prune_after_build", recording_prune)
    offset = 0.0 if family == "gtfn" else 100.0
    cache = tmp_path / "cache"
    unlimited = family_toolchain(family, cache)
    held, oldest, newer = (_program(offset + w) for w in (11.0, 12.0, 13.0))
    folders = [
        p.with_backend(unlimited).compile().artifact.build_dir for p in (held, oldest, newer)
    ]
    for folder, days in zip(folders, (3, 2, 1)):
        _used(folder, days)
    limit = _total(cache)  # the next build takes the cache over it
    fresh = _program(offset + 14.0)
    limited = family_toolchain(family, cache, cache_max_size=limit)
    with _held_by_another_process(folders[0].with_name(folders[0].name + ".lock")):
        new = fresh.with_backend(limited).compile().artifact
        assert new.built
        _check(fresh, limited)  # the new build is there and runs
    assert (folders[0] / MARKER_NAME).is_file(), "a build another process held was removed"
    (result,) = results  # one prune, after the one new build, and it met the held entry
    assert result is not None and [e.path for e in result.removal.busy] == [folders[0]]
    assert folders[1] in {e.path for e in result.removal.removed}
    assert not folders[1].exists(), "the least recently used build was kept"
    assert (new.build_dir / MARKER_NAME).is_file()
    location = build_container({}, cache_dir=cache).gtfn.cache_location()
    entries = pruning.scan(pruning.Caches.at(location))
    programs = {e.path for e in entries if e.kind == BUILD}
    assert sum(e.size for e in entries if e.kind != SUPPORT) <= limit
    assert programs <= {folders[0], folders[2], new.build_dir}
    assert all(e.path.is_dir() for e in entries if e.kind == SUPPORT)  # never after builds
    assert pruning.usage_record(location).is_file()
    # what was held loads as it is; what was pruned builds again; both are right
    again = family_toolchain(family, cache)
    assert not held.with_backend(again).compile().artifact.built
    _check(held, again)
    assert oldest.with_backend(again).compile().artifact.built
    _check(oldest, again)


def test_under_the_limit_a_build_walks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    walks: list[int] = []
    real_scan = pruning.scan

    def counting_scan(caches: pruning.Caches) -> list[CacheEntry]:
        walks.append(1)
        return real_scan(caches)

    monkeypatch.setattr(pruning, "scan", counting_scan)
    cache = tmp_path / "cache"
    toolchain = family_toolchain("gtfn", cache, cache_max_size="1T")
    location = build_container({}, cache_dir=cache).gtfn.cache_location()
    first = _program(21.0).with_backend(toolchain).compile().artifact
    assert walks == [1]  # no usage record yet: measured once
    recorded = json.loads(pruning.usage_record(location).read_text())
    assert recorded["bytes"] == _total(cache)
    second = _program(22.0).with_backend(toolchain).compile().artifact
    assert walks == [1], "a build under the limit walked the caches"
    after = json.loads(pruning.usage_record(location).read_text())
    assert after["bytes"] >= recorded["bytes"] + folder_size(second.build_dir)
    assert after["scanned"] == recorded["scanned"]
    # a record too old to trust is measured again
    after["scanned"] -= 2 * pruning.RESCAN_AFTER
    pruning.usage_record(location).write_text(json.dumps(after))
    _program(23.0).with_backend(toolchain).compile()
    assert walks == [1, 1]
    assert first.build_dir.is_dir() and second.build_dir.is_dir()  # nothing was removed


def test_builds_side_by_side_never_prune_what_another_has_just_made(tmp_path: Path) -> None:
    """`compile_many` under a limit of 0: each build prunes, but what was made or used in
    the last `pruning.RECENT` seconds may be about to load in another thread: all load and
    are right. Once they are older, the next build prunes them."""
    cache = tmp_path / "cache"
    toolchain = family_toolchain("gtfn", cache, cache_max_size=0)
    programs = [_program(41.0 + k) for k in range(3)]
    compiled = toolchain.compile_many(programs, jobs=2)
    folders = [c.artifact.build_dir for c in compiled]
    assert all(c.artifact.built for c in compiled)
    for program in programs:
        _check(program, toolchain)
    assert all((f / MARKER_NAME).is_file() for f in folders)
    for folder in folders:
        _used(folder, 1)
    last = _program(45.0).with_backend(toolchain).compile().artifact
    assert not any(f.exists() for f in folders)
    assert (last.build_dir / MARKER_NAME).is_file()
    _check(_program(45.0), toolchain)


def test_session_caches_are_never_pruned(tmp_path: Path) -> None:
    toolchain = family_toolchain("gtfn", tmp_path, cache_lifetime="session", cache_max_size=0)
    artifact = _program(31.0).with_backend(toolchain).compile().artifact
    assert artifact.built and (artifact.build_dir / MARKER_NAME).is_file()
    assert not list(tmp_path.rglob(pruning.USAGE_NAME))


# --- `stencilchain cache prune` ----------------------------------------------------------


def test_cache_prune_applies_the_configured_limit_and_skips_held_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from stencilchain.app.cli import main

    cache = tmp_path / "cache"
    builds = build_container({}, cache_dir=cache).gtfn.cache_location().build_cache()

    def make(key: str, days: float) -> Path:
        def build(folder: Path) -> dict[str, str]:
            (folder / "module.so").write_bytes(b"x" * 1024)
            return {"module": "module.so", "entry_point": key}

        folder = builds.get_or_build(key, build).folder
        _used(folder, days)
        return folder

    held, old, recent = (
        make("held_" + "a" * 32, 3),
        make("old_" + "b" * 32, 2),
        make("recent_" + "c" * 32, 1),
    )
    monkeypatch.setenv("STENCILCHAIN_CACHE_DIR", str(cache))
    monkeypatch.delenv("STENCILCHAIN_CACHE_MAX_SIZE", raising=False)
    capsys.readouterr()
    assert main(["cache", "prune"]) != 0
    assert "STENCILCHAIN_CACHE_MAX_SIZE" in capsys.readouterr().err
    monkeypatch.setenv("STENCILCHAIN_CACHE_MAX_SIZE", "3k")  # room for two of the three
    with _held_by_another_process(held.with_name(held.name + ".lock")):
        assert main(["cache", "prune", "--dry-run", "--json"]) == 0
        planned = json.loads(capsys.readouterr().out)
        assert [e["path"] for e in planned["busy"]] == [str(held)]
        assert [e["path"] for e in planned["removed"]] == [str(old)]
        assert old.is_dir()
        assert main(["cache", "prune", "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
    assert [e["path"] for e in result["busy"]] == [str(held)]
    assert [e["path"] for e in result["removed"]] == [str(old)]
    assert held.is_dir() and recent.is_dir() and not old.exists()
    assert result["remaining_bytes"] <= 3072
    # --max-size still wins over the configured limit
    assert main(["cache", "prune", "--max-size", "0", "--json"]) == 0
    assert not held.exists() and not recent.exists()
