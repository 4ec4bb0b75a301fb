"""The caches are private to their user, and refuse an entry another user could have
written: a module loaded from it, or a source compiled from it, would run their code.

Ownership by another user cannot be made without root: the owner check is tested by
replacing the uid it compares with (`trust.current_uid`).
"""

from __future__ import annotations

import importlib
import os
import shutil
import stat
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.errors import CacheSecurityError, StencilchainError
from stencilchain.steps.caches import trust
from stencilchain.steps.caches.build_cache import MARKER_NAME, BuildCache
from stencilchain.steps.caches.cache_root import CacheLocation, cache_root
from stencilchain.steps.caches.translation_cache import TranslationCache
from stencilchain.steps.settings import CacheLifetime
from tests._support import family_toolchain

KEY = "entry_0123456789abcdef"
TRANSLATION_KEY = "ab" + "0123456789" * 6
cache_root_module = importlib.import_module("stencilchain.steps.caches.cache_root")


def _build(folder: Path) -> Mapping[str, str]:
    (folder / "module.so").write_text("binary")
    return {"module": "module.so"}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _widen(path: Path, bits: int) -> None:
    path.chmod(_mode(path) | bits)


@pytest.fixture()
def location(tmp_path: Path) -> CacheLocation:
    """Caches under a root that stencilchain creates (its parent is the test's folder)."""
    return CacheLocation(cache_root(CacheLifetime.PERSISTENT, tmp_path / "cache"))


@pytest.fixture()
def built(location: CacheLocation) -> BuildCache:
    cache = location.build_cache()
    cache.get_or_build(KEY, _build)
    return cache


@pytest.fixture()
def translated(location: CacheLocation) -> TranslationCache:
    cache = location.translation_cache()
    cache.put(TRANSLATION_KEY, "int main() { return 0; }\n")
    return cache


# --- what stencilchain creates is private -------------------------------------------------


def test_created_folders_are_private_and_files_are_the_users_alone(
    location: CacheLocation, built: BuildCache, translated: TranslationCache
) -> None:
    entry = translated.path(TRANSLATION_KEY)
    folders = [location.root, location.builds, built.folder(KEY), location.translations]
    folders.append(entry.parent)
    assert {str(f): _mode(f) for f in folders} == {str(f): 0o700 for f in folders}
    files = [entry, built.folder(KEY) / MARKER_NAME, location.builds / f"{KEY}.lock"]
    assert {str(f): _mode(f) for f in files} == {str(f): 0o600 for f in files}


def test_a_session_cache_is_private_and_trusted(tmp_path: Path) -> None:
    cache_root_module._session_root.cache_clear()  # a session root of this test's own
    try:
        location = CacheLocation(cache_root(CacheLifetime.SESSION, tmp_path))
        assert _mode(location.root) == 0o700
        cache = location.build_cache()
        assert cache.get_or_build(KEY, _build).built
        assert cache.lookup(KEY) is not None
        translations = location.translation_cache()
        translations.put(TRANSLATION_KEY, "text")
        assert translations.get(TRANSLATION_KEY) == "text"
    finally:
        cache_root_module._session_root.cache_clear()


def test_the_parent_of_the_cache_root_is_not_the_caches(
    tmp_path: Path, built: BuildCache, translated: TranslationCache
) -> None:
    _widen(tmp_path, stat.S_IWOTH)  # like /tmp: not the cache's, not checked
    try:
        assert built.lookup(KEY) is not None
        assert translated.get(TRANSLATION_KEY) is not None
    finally:
        tmp_path.chmod(0o755)


# --- the build cache refuses what others can write ------------------------------------------


def _refusal(error: pytest.ExceptionInfo[CacheSecurityError], path: Path) -> str:
    """The message, checked for what every refusal says: where, the risk and the fix."""
    message = str(error.value)
    assert isinstance(error.value, StencilchainError) and isinstance(error.value, PermissionError)
    assert f" {path} " in message  # the folder or file that is wrong
    assert "Another user could replace" in message and "run as its own code" in message
    assert "STENCILCHAIN_CACHE_DIR" in message
    return message


@pytest.mark.parametrize("bits", [stat.S_IWOTH, stat.S_IWGRP, stat.S_IWGRP | stat.S_IWOTH])
def test_a_build_folder_writable_by_others_is_refused(built: BuildCache, bits: int) -> None:
    folder = built.folder(KEY)
    _widen(folder, bits)
    with pytest.raises(CacheSecurityError) as error:
        built.lookup(KEY)
    message = _refusal(error, folder)
    assert f"refusing the build cache entry {folder}: the folder {folder} is writable by" in message
    assert f"(mode {_mode(folder):04o})" in message
    assert f"`chmod go-w {folder}`" in message
    assert ("its group" in message) == bool(bits & stat.S_IWGRP)
    assert ("others" in message.split(". ")[0]) == bool(bits & stat.S_IWOTH)
    with pytest.raises(CacheSecurityError):
        built.get_or_build(KEY, _build)  # a hit is refused as well, never rebuilt over
    folder.chmod(0o700)
    assert built.lookup(KEY) is not None  # the fix the message names


@pytest.mark.parametrize("level", ["builds", "root"])
def test_a_folder_above_the_build_up_to_the_root_is_checked(
    location: CacheLocation, built: BuildCache, level: str
) -> None:
    above = location.builds if level == "builds" else location.root
    _widen(above, stat.S_IWOTH)
    with pytest.raises(CacheSecurityError) as error:
        built.lookup(KEY)
    assert f"the folder {above} is writable by others" in _refusal(error, above)
    with pytest.raises(CacheSecurityError):  # nor is a new build made there
        built.get_or_build("another_" + KEY, _build)
    assert not built.folder("another_" + KEY).exists()


def test_a_build_owned_by_another_user_is_refused(
    built: BuildCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    me = os.geteuid()
    monkeypatch.setattr(trust, "current_uid", lambda: me + 1)  # the folders are now another's
    with pytest.raises(CacheSecurityError) as error:
        built.lookup(KEY)
    message = str(error.value)
    marker = built.folder(KEY) / MARKER_NAME
    assert f"the file {marker} is owned by uid {me}, not by this user (uid {me + 1})" in message
    assert f"`chown $(id -un) {marker}`" in message


def test_a_marker_writable_by_others_is_refused(built: BuildCache) -> None:
    marker = built.folder(KEY) / MARKER_NAME
    _widen(marker, stat.S_IWOTH)
    with pytest.raises(CacheSecurityError) as error:
        built.lookup(KEY)
    assert f"the file {marker} is writable by others" in _refusal(error, marker)


def test_a_missing_build_needs_no_check(built: BuildCache) -> None:
    _widen(built.folder(KEY), stat.S_IWOTH)
    assert built.lookup("absent_" + KEY) is None  # nothing there to trust or refuse


# --- the translation cache likewise -----------------------------------------------------------


def _translation_refusal(error: pytest.ExceptionInfo[CacheSecurityError], path: Path) -> str:
    message = str(error.value)
    assert f" {path} " in message
    assert "Another user could replace the source code" in message
    assert "compile and run as its own code" in message
    return message


@pytest.mark.parametrize("level", ["entry file", "fan-out folder", "translations", "root"])
def test_a_translation_entry_others_can_write_is_refused(
    location: CacheLocation, translated: TranslationCache, level: str
) -> None:
    entry = translated.path(TRANSLATION_KEY)
    path = {
        "entry file": entry,
        "fan-out folder": entry.parent,
        "translations": location.translations,
        "root": location.root,
    }[level]
    _widen(path, stat.S_IWOTH)
    with pytest.raises(CacheSecurityError) as error:
        translated.get(TRANSLATION_KEY)
    message = _translation_refusal(error, path)
    what = "file" if level == "entry file" else "folder"
    assert message.startswith(
        f"refusing the translation cache entry {entry}: the {what} {path} is writable by others"
    )
    assert f"`chmod go-w {path}`" in message
    path.chmod(0o600 if level == "entry file" else 0o700)
    assert translated.get(TRANSLATION_KEY) == "int main() { return 0; }\n"


def test_a_translation_entry_of_another_user_is_refused(
    translated: TranslationCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trust, "current_uid", lambda: os.geteuid() + 1)
    with pytest.raises(CacheSecurityError, match="is owned by uid"):
        translated.get(TRANSLATION_KEY)


def test_a_linked_translation_entry_is_a_miss(tmp_path: Path, translated: TranslationCache) -> None:
    entry = translated.path(TRANSLATION_KEY)
    elsewhere = tmp_path / "elsewhere.json"
    os.replace(entry, elsewhere)
    entry.symlink_to(elsewhere)
    assert translated.get(TRANSLATION_KEY) is None  # never read through a link
    translated.put(TRANSLATION_KEY, "again")  # replaces the link, not its target
    assert translated.get(TRANSLATION_KEY) == "again" and not entry.is_symlink()


# --- end to end, both families --------------------------------------------------------------

I = sc.Dimension("I")
J = sc.Dimension("J")


@sc.field_operator
def _double(f: sc.Field[[I, J], sc.float64]) -> sc.Field[[I, J], sc.float64]:
    return 2.0 * f + f(I + 1)


@sc.program
def cache_security_double(f: sc.Field[[I, J], sc.float64], out: sc.Field[[I, J], sc.float64]):  # type: ignore[no-untyped-def]
    _double(f, out=out)


@pytest.mark.parametrize("family", ["gtfn", "dace"])
@pytest.mark.parametrize(
    "where", ["build folder", "builds folder", "translation entry", "load index entry"]
)
def test_end_to_end_a_cache_entry_others_can_write_is_refused(
    tmp_path: Path, family: str, where: str
) -> None:
    if family == "dace":
        pytest.importorskip("dace")
    cache_dir = tmp_path / "cache"
    first = family_toolchain(family, cache_dir)
    compiled = first.compile(cache_security_double)
    f = np.arange(20.0).reshape(4, 5)
    out = np.zeros_like(f)
    compiled(f, out)
    assert out[1, 1] == 2.0 * f[1, 1] + f[2, 1]
    key = first.workflow.translation_key(cache_security_double.ir)
    assert key is not None and first.workflow.translation_cache is not None
    indexed = first.workflow.indexed_load
    assert indexed is not None
    path = {
        "build folder": compiled.artifact.build_dir,
        "builds folder": compiled.artifact.build_dir.parent,
        "translation entry": first.workflow.translation_cache.path(key),
        "load index entry": indexed.index.path(indexed.key(cache_security_double.ir)),
    }[where]
    if where == "translation entry":  # a load index hit reads none (ADR 0039): without it
        shutil.rmtree(cache_dir / "index")
    _widen(path, stat.S_IWOTH)
    with pytest.raises(CacheSecurityError) as error:
        family_toolchain(family, cache_dir).compile(cache_security_double)
    assert f" {path} is writable by others" in str(error.value)
    path.chmod(0o600 if path.is_file() else 0o700)
    again = family_toolchain(family, cache_dir).compile(cache_security_double)
    assert again.artifact.build_dir == compiled.artifact.build_dir
    assert not again.artifact.built  # trusted again: loaded, not rebuilt


@pytest.mark.parametrize("cache", [BuildCache, TranslationCache])
def test_a_cache_lies_inside_its_cache_root(tmp_path: Path, cache: type) -> None:
    with pytest.raises(ValueError, match=f"must be inside its cache root {tmp_path / 'other'}"):
        cache(tmp_path / "cache" / "builds", cache_root=tmp_path / "other")
