"""Where the caches live: a per-process temporary folder or a persistent one.

Nothing here reads the environment; the configuration decides `lifetime` and
`cache_dir` (see stencilchain.containers). A root that stencilchain creates is private
to the user (mode 0700), as every folder the caches create below it.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import os
import shutil
import tempfile
from pathlib import Path

from stencilchain.steps.caches.build_cache import BuildCache, unwritable_cache
from stencilchain.steps.caches.load_index import LoadIndex
from stencilchain.steps.caches.translation_cache import TranslationCache
from stencilchain.steps.caches.trust import make_private_folder
from stencilchain.steps.family import Family
from stencilchain.steps.settings import CacheLifetime


@dataclasses.dataclass(frozen=True)
class CacheLocation:
    """The folders of one configuration's caches: translated sources, build folders and
    the load index, the salt mixed into every key made for them (empty: none), and the
    families whose entries a listing tells apart."""

    root: Path
    salt: str = ""
    families: tuple[Family, ...] = dataclasses.field(default=(), repr=False, compare=False)

    @property
    def translations(self) -> Path:
        return self.root / "translations"

    @property
    def builds(self) -> Path:
        return self.root / "builds"

    @property
    def index(self) -> Path:
        return self.root / "index"

    def translation_cache(self) -> TranslationCache:
        """The translation cache here, trusted only if no other user can write to it or to
        a folder up to `root`."""
        return TranslationCache(
            self.translations, cache_root=self.root, salt=self.salt, families=self.families
        )

    def build_cache(self) -> BuildCache:
        """The build cache here, trusted only if no other user can write to it or to a
        folder up to `root`."""
        return BuildCache(self.builds, cache_root=self.root, salt=self.salt, families=self.families)

    def load_index(self) -> LoadIndex:
        """The load index here (docs/adr/0039-load-index.md), trusted only if no other user
        can write to it or to a folder up to `root`. Its keys hold the salt through the
        translation keys and the build caches' settings they are made of."""
        return LoadIndex(self.index, cache_root=self.root)


def cache_location(
    lifetime: CacheLifetime,
    cache_dir: Path | None,
    salt: str = "",
    families: tuple[Family, ...] = (),
) -> CacheLocation:
    """Where the caches of a configuration live (the root is created if missing), the salt
    of their keys, and the families whose entries they tell apart."""
    return CacheLocation(cache_root(lifetime, cache_dir), salt, families)


def cache_root(lifetime: CacheLifetime, cache_dir: Path | None) -> Path:
    """The root folder of the caches, created if missing.

    `persistent`: `cache_dir`, or `platformdirs.user_cache_dir("stencilchain")`.
    `session`: one temporary folder per process (inside `cache_dir` when given),
    created on first use and removed when the process exits.
    """
    if not isinstance(lifetime, CacheLifetime):
        raise TypeError(f"cache lifetime must be a CacheLifetime, got {lifetime!r}")
    parent = None if cache_dir is None else Path(cache_dir).expanduser().absolute()
    if lifetime is CacheLifetime.SESSION:
        return _session_root(parent)
    if parent is None:
        import platformdirs  # imported here: only the persistent default needs it

        parent = Path(platformdirs.user_cache_dir("stencilchain"))
    try:
        make_private_folder(parent, parent)
    except OSError as error:
        raise unwritable_cache(parent, error) from error
    return parent


@functools.cache
def _session_root(parent: Path | None) -> Path:
    """The session folder of this process under `parent` (the system temp dir if None),
    private to the user (`mkdtemp`'s mode 0700)."""
    try:
        if parent is not None:
            make_private_folder(parent, parent)
        root = Path(tempfile.mkdtemp(prefix="stencilchain-session-", dir=parent))
    except OSError as error:
        raise unwritable_cache(parent or Path(tempfile.gettempdir()), error) from error
    atexit.register(_remove_session_root, root, os.getpid())
    return root


def _remove_session_root(root: Path, owner_pid: int) -> None:
    """Remove `root` at exit, but only in the process that created it (not in forks)."""
    if os.getpid() == owner_pid:
        shutil.rmtree(root, ignore_errors=True)
