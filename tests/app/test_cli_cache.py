"""`stencilchain cache info | list | clear | prune | explain` on caches of the test's own."""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from stencilchain.steps.caches.build_cache import MARKER_NAME, BuildCache
from stencilchain.steps.caches.translation_cache import TranslationCache

from .cli_support import CLI, STENCILS

DAY = 86400.0
KIB = 1024


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def make_build(
    builds: Path, key: str, *, age: float = 0.0, size: int = KIB, **metadata: str
) -> Path:
    """A complete build folder of `size` bytes, completed `age` seconds ago."""

    def build(folder: Path) -> Mapping[str, str]:
        (folder / "module.so").write_bytes(b"x" * size)
        return {"module": "module.so", **metadata}

    folder = BuildCache(builds).get_or_build(key, build).folder
    _age(folder / MARKER_NAME, age)
    return folder


def make_translation(
    translations: Path, key: str, name: str, *, language: str = "cpp", age: float = 0.0
) -> Path:
    payload = {
        "entry_point": name,
        "source_code": f"// {name} in {language}\n",
        "language": language,
        "device": "cpu",
        "library_deps": [],
        "workspace": False,
        "settings": json.dumps({"device": "cpu", "data_layout": "any"}),
        "program": "f" * 64,
    }
    cache = TranslationCache(translations)
    cache.put(key, json.dumps(payload))
    _age(cache.path(key), age)
    return cache.path(key)


@pytest.fixture()
def folders(cli: CLI, cache_dir: Path) -> tuple[Path, Path]:
    """(translations, builds) of the private cache, as `cache info` reports them."""
    info = cli("cache", "info", "--json").json()
    assert info["root"] == str(cache_dir)
    return Path(info["translations"]), Path(info["builds"])


@pytest.fixture()
def populated(folders: tuple[Path, Path]) -> dict[str, Path]:
    """Entries of every kind, old and new, and things that are not the cache's."""
    translations, builds = folders
    paths = {
        "old_build": make_build(builds, "old_" + "a" * 32, age=10 * DAY, entry_point="old"),
        "new_build": make_build(
            builds,
            "new_" + "b" * 32,
            age=1 * DAY,
            entry_point="new",
            device="cpu",
            build_type="debug",
        ),
        "dace_build": make_build(
            builds, "new_dace_" + "c" * 32, age=2 * DAY, entry_point="new", sdfg_name="new"
        ),
        "support": make_build(builds, "toolchain-" + "d" * 32, age=30 * DAY),
        "old_translation": make_translation(translations, "aa" + "0" * 62, "old", age=10 * DAY),
        "new_translation": make_translation(
            translations, "bb" + "0" * 62, "new", language="sdfg", age=DAY
        ),
    }
    incomplete = builds / ("crashed_" + "e" * 32)  # a build that died: a lock, no marker
    incomplete.mkdir()
    (incomplete / "build.log").write_text("killed\n")
    (builds / f"{incomplete.name}.lock").touch()
    stale = builds / f".gone_{'f' * 32}.stale-0123456789ab"
    stale.mkdir()
    (stale / "left.o").write_bytes(b"o" * 100)
    foreign = builds / "notes"  # no lock, no marker: not the cache's
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine\n")
    (builds.parent / "README.txt").write_text("mine too\n")
    paths.update(incomplete=incomplete, stale=stale, foreign=foreign)
    return paths


def test_info_of_an_empty_cache(cli: CLI, cache_dir: Path) -> None:
    result = cli("cache", "info", "--json")
    assert result.status == 0, result.err
    data = result.json()
    assert (data["entries"], data["bytes"], data["groups"]) == (0, 0, [])
    assert "total: 0 B in 0 entries" in cli("cache", "info").out


def test_info_and_list_by_family_and_kind(cli: CLI, populated: dict[str, Path]) -> None:
    data = cli("cache", "info", "--json").json()
    groups = {(g["family"], g["kind"]): g["entries"] for g in data["groups"]}
    assert groups == {
        ("dace", "build"): 1,  # recognized by its SDFG
        ("dace", "translation"): 1,
        ("gtfn", "support"): 1,
        ("gtfn", "translation"): 1,
        ("unknown", "build"): 2,  # markers that say nothing of their family
        ("unknown", "incomplete"): 1,
        ("unknown", "stale"): 1,
    }
    assert data["entries"] == 8
    listing = cli("cache", "list", "--json").json()
    assert [e["name"] for e in listing][:2] == [f"toolchain-{'d' * 32}", "old"]  # oldest first
    assert str(populated["foreign"]) not in {e["path"] for e in listing}
    new_build = next(e for e in listing if e["key"] == "new_" + "b" * 32)
    assert (new_build["device"], new_build["build_type"]) == ("cpu", "debug")
    text = cli("cache", "list").out
    header, *rows = (line.split() for line in text.splitlines())
    assert header == [
        "kind", "family", "device", "build_type", "name", "size", "age", "used", "key"
    ]  # fmt: skip
    assert ["build", "?", "cpu", "debug", "new"] in [row[:5] for row in rows]
    assert ["translation", "dace", "cpu", "-", "new"] in [row[:5] for row in rows]


def test_prune_older_than(cli: CLI, populated: dict[str, Path]) -> None:
    result = cli("cache", "prune", "--older-than", "7d", "--json")
    assert result.status == 0, result.err
    removed = {Path(e["path"]) for e in result.json()["removed"]}
    assert removed == {
        populated[k] for k in ("old_build", "old_translation", "incomplete", "stale")
    }
    for name in ("new_build", "dace_build", "support", "new_translation", "foreign"):
        assert populated[name].exists(), name  # the support folder counts as used by new builds
    assert not populated["old_build"].exists()


def test_prune_to_a_size_removes_the_oldest_first(cli: CLI, folders: tuple[Path, Path]) -> None:
    _, builds = folders
    for days in (3, 2, 1):
        key = f"p{days}_" + "a" * 32
        make_build(builds, key, age=days * DAY, size=100 * KIB, entry_point=f"p{days}")
    result = cli("cache", "prune", "--max-size", "250k", "--json")
    assert result.status == 0, result.err
    data = result.json()
    assert [e["key"] for e in data["removed"]] == ["p3_" + "a" * 32]
    assert data["remaining_bytes"] <= 250 * KIB
    result = cli("cache", "prune", "--max-size", "0")
    assert result.status == 0
    assert "removed 2 entries" in result.out
    assert cli("cache", "info", "--json").json()["entries"] == 0


def test_prune_dry_run_removes_nothing(cli: CLI, populated: dict[str, Path]) -> None:
    result = cli("cache", "prune", "--older-than", "7d", "--dry-run")
    assert result.status == 0, result.err
    assert "would remove 4 entries" in result.out
    assert str(populated["old_build"]) in result.out
    assert populated["old_build"].exists() and populated["stale"].exists()


@pytest.fixture()
def held_lock(populated: dict[str, Path]) -> Iterator[Path]:
    """Another process building `old_build`: its lock is held."""
    folder = populated["old_build"]
    fd = os.open(folder.parent / f"{folder.name}.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield folder
    finally:
        os.close(fd)


def test_prune_and_clear_skip_a_folder_being_built(cli: CLI, held_lock: Path) -> None:
    result = cli("cache", "prune", "--older-than", "7d", "--json")
    assert result.status == 0
    assert [e["path"] for e in result.json()["busy"]] == [str(held_lock)]
    assert f"skipped {held_lock}: another process is building it" in result.err
    assert held_lock.is_dir()
    result = cli("cache", "clear")
    assert result.status == 0
    assert held_lock.is_dir()
    assert cli("cache", "info", "--json").json()["entries"] == 1


def test_clear_removes_only_what_is_the_caches(
    cli: CLI, populated: dict[str, Path], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / MARKER_NAME).write_text("{}")
    builds = populated["old_build"].parent
    (builds / ("linked_" + "9" * 32)).symlink_to(outside, target_is_directory=True)
    result = cli("cache", "clear", "--json")
    assert result.status == 0, result.err
    assert len(result.json()["removed"]) == 8
    assert result.json()["remaining_bytes"] == 0
    assert cli("cache", "info", "--json").json()["entries"] == 0
    assert (populated["foreign"] / "keep.txt").read_text() == "mine\n"
    assert (builds.parent / "README.txt").exists()
    assert (outside / MARKER_NAME).exists()  # a link is never followed
    assert (builds / ("linked_" + "9" * 32)).is_symlink()
    assert (builds / f"{populated['old_build'].name}.lock").exists()  # locks are kept


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["prune"], "cache prune needs --max-size SIZE, --older-than AGE, or both"),
        (["prune", "--max-size", "lots"], "size 'lots' is not valid"),
        (["prune", "--older-than", "7 days"], "age '7 days' is not valid"),
        (["info", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_cache_usage_errors(cli: CLI, cache_dir: Path, argv: list[str], message: str) -> None:
    result = cli("cache", *argv)
    assert result.status == 2
    assert message in result.error_line


def test_a_session_cache_has_nothing_to_inspect(
    cli: CLI, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STENCILCHAIN_CACHE_LIFETIME", "session")
    result = cli("cache", "info")
    assert result.status == 2
    assert "the cache lifetime is 'session'" in result.error_line


# --- explain ------------------------------------------------------------------------------


def _explain(cli: CLI, target: str, *extra: str) -> dict[str, dict[str, object]]:
    result = cli("cache", "explain", target, "--json", *extra)
    assert result.status == 0, result.err
    data: dict[str, dict[str, object]] = result.json()
    return data


def test_explain_hit_and_each_kind_of_miss(
    cli: CLI, cache_dir: Path, stencils: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = f"{stencils}:smooth"
    before = _explain(cli, target)
    assert before["would_hit"] is False
    assert before["build"]["details"] == ["no gtfn build of a program named 'smooth' is cached"]
    assert cli("compile", target).status == 0  # the one compilation of this test

    hit = _explain(cli, target)
    assert hit["would_hit"] is True
    assert hit["translation"]["hit"] is True and hit["build"]["hit"] is True
    assert "loads from the cache, no compilation" in cli("cache", "explain", target).out

    # another build type: the same translation, another build context
    monkeypatch.setenv("STENCILCHAIN_BUILD_TYPE", "debug")
    debug = _explain(cli, target)
    monkeypatch.delenv("STENCILCHAIN_BUILD_TYPE")
    assert debug["translation"]["hit"] is True
    assert debug["build"]["hit"] is False
    assert debug["build"]["differs"] == ["build context"]
    assert debug["build"]["components"]["program fingerprint"] == "same"
    assert "build_type: release when built, debug now" in debug["build"]["details"]
    assert debug["build"]["nearest"]["build_type"] == "release"  # type: ignore[index]

    # another data layout: both caches name the setting that differs
    monkeypatch.setenv("STENCILCHAIN_DATA_LAYOUT", "unit_stride")
    layout = _explain(cli, target)
    monkeypatch.delenv("STENCILCHAIN_DATA_LAYOUT")
    assert layout["translation"]["differs"] == ["step settings"]
    assert layout["translation"]["details"] == [
        "data_layout: strided when translated, unit_stride now"
    ]
    assert layout["build"]["differs"] == ["step settings"]
    assert layout["build"]["details"] == ["data_layout: strided when built, unit_stride now"]

    # other translation settings
    other = _explain(cli, target, "--backend", "run_gtfn_cpu_no_transforms")
    assert other["translation"]["differs"] == ["step settings"]
    assert other["translation"]["details"] == ["enable_transforms: True when translated, False now"]
    assert other["build"]["components"]["program fingerprint"] == "same"
    assert other["build"]["differs"] == ["step settings"]
    assert other["build"]["details"] == ["enable_transforms: True when built, False now"]

    # an edited program
    changed = stencils.with_name("changed.py")
    changed.write_text(STENCILS.replace("-4.0 * f", "-4.0 * f + 1.0"))
    edited = _explain(cli, f"{changed}:smooth")
    assert edited["translation"]["differs"] == ["program fingerprint"]
    assert edited["build"]["differs"] == ["program fingerprint"]
    text = cli("cache", "explain", f"{changed}:smooth").out
    assert "program fingerprint: differs" in text and "would compile" in text

    # translations not cached at all
    monkeypatch.setenv("STENCILCHAIN_CACHED_TRANSLATION", "no")
    uncached = _explain(cli, target)
    assert uncached["translation"]["enabled"] is False
    assert uncached["would_hit"] is True

    info = cli("cache", "info", "--json").json()
    groups = {(g["family"], g["kind"]): g["entries"] for g in info["groups"]}
    assert groups[("gtfn", "translation")] == 1 and groups[("gtfn", "build")] == 1
    assert groups[("gtfn", "support")] >= 1


def test_explain_compares_recorded_key_components(
    cli: CLI, folders: tuple[Path, Path], stencils: Path
) -> None:
    """A marker that records its key components (key_program, key_source, key_context) is
    compared exactly, the package version included."""
    _, builds = folders
    fingerprint = _explain(cli, f"{stencils}:smooth")["fingerprint"]
    make_build(
        builds,
        "smooth_" + "0" * 32,
        entry_point="smooth",
        device="cpu",
        build_type="release",
        key_program=str(fingerprint),
        key_source="an older extension source",
        key_context=json.dumps({"package": "0.0.1+old"}),
    )
    build = _explain(cli, f"{stencils}:smooth")["build"]
    assert build["components"] == {
        "program fingerprint": "same",
        "step settings": "differs",
        "build context": "differs",
        "version": "differs",
    }
    assert any("built by stencilchain 0.0.1+old" in d for d in build["details"])  # type: ignore[attr-defined]


def test_list_and_prune_damaged_entries(cli: CLI, folders: tuple[Path, Path]) -> None:
    translations, builds = folders
    entry = make_translation(translations, "cc" + "0" * 62, "broken")
    entry.write_text(entry.read_text()[:30])
    folder = make_build(builds, "broken_" + "a" * 32, entry_point="broken")
    (folder / MARKER_NAME).write_text("{ truncated")
    listing = cli("cache", "list", "--json").json()
    assert {(e["kind"], e["path"]) for e in listing} == {
        ("damaged", str(entry)),
        ("damaged", str(folder)),
    }
    problems = {e["path"]: e["problem"] for e in listing}
    assert problems[str(entry)] == "not valid JSON (corrupt or truncated)"
    assert "not valid JSON" in problems[str(folder)]
    text = cli("cache", "list")
    assert f"damaged {entry}: not valid JSON (corrupt or truncated)" in text.err
    result = cli("cache", "prune", "--older-than", "30d", "--json")  # leftovers go first
    assert {e["path"] for e in result.json()["removed"]} == {str(entry), str(folder)}
    assert cli("cache", "info", "--json").json()["entries"] == 0


def test_prune_goes_by_last_use(cli: CLI, folders: tuple[Path, Path]) -> None:
    """An entry built long ago but used recently is kept by --older-than."""
    _, builds = folders
    used = make_build(builds, "used_" + "a" * 32, age=30 * DAY, entry_point="used")
    unused = make_build(builds, "unused_" + "a" * 32, age=30 * DAY, entry_point="unused")
    marker = used / MARKER_NAME
    os.utime(marker, (time.time() - DAY, marker.stat().st_mtime))  # used a day ago
    listing = {e["name"]: e for e in cli("cache", "list", "--json").json()}
    assert listing["used"]["time"] == pytest.approx(listing["unused"]["time"], abs=60)
    assert listing["used"]["last_used"] > listing["unused"]["last_used"]
    result = cli("cache", "prune", "--older-than", "7d", "--json")
    assert [e["path"] for e in result.json()["removed"]] == [str(unused)]
    assert used.is_dir()


def test_explain_refuses_a_cache_others_can_write(
    cli: CLI, folders: tuple[Path, Path], stencils: Path
) -> None:
    _, builds = folders
    key = _explain(cli, f"{stencils}:smooth")["build"]["key"]
    make_build(builds, str(key), entry_point="smooth")  # what the build would load
    builds.chmod(0o777)
    try:
        result = cli("cache", "explain", f"{stencils}:smooth")
    finally:
        builds.chmod(0o700)
    assert result.status == 1
    assert result.error_line.startswith(
        "stencilchain: error: CacheSecurityError: refusing the build"
    )
    assert (
        f"the folder {builds} is writable by its group and others (mode 0777)" in result.error_line
    )
    assert f"`chmod go-w {builds}`" in result.error_line
