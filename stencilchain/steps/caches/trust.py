"""Whether a cache entry can be trusted: only its user can have written it.

A build folder holds a module that is loaded and run in this process, and a translation
entry holds source code that is compiled and run; a folder that another user can write
to could hand us their code. So the caches create their folders private (mode 0700) and,
before they use an entry, check its folder and every folder up to the cache root
(inclusive; the root's parents, such as /tmp, are not the cache's) with a few `stat`
calls: each must be owned by the current user and writable by nobody else.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from pathlib import Path
from typing import ClassVar, NoReturn

from stencilchain.errors import CacheSecurityError

PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600
_SHARED_WRITE = stat.S_IWGRP | stat.S_IWOTH


def current_uid() -> int:
    """The user a trusted entry must belong to (tests replace it to fake another owner)."""
    return os.geteuid()


@dataclasses.dataclass(frozen=True)
class TrustedFolder:
    """The folder of one cache, `root`, inside `cache_root`: the outermost folder of the
    caches (`root` or a parent of it, e.g. `CacheLocation.root`; None: `root`). An entry is
    trusted only if it and every folder up to `cache_root` belong to this user and no
    other can write to them."""

    root: Path
    cache_root: Path | None = dataclasses.field(default=None, kw_only=True)

    KIND: ClassVar[str] = "cache"  # how errors name the cache
    KEY: ClassVar[re.Pattern[str]] = re.compile(r"[A-Za-z0-9_-]{1,200}")  # valid keys
    KEY_RULE: ClassVar[str] = "1 to 200 characters from [A-Za-z0-9_-]"  # KEY, said

    def __post_init__(self) -> None:
        trust_top(self.root, self.cache_root, self.KIND)

    def checked_key(self, key: str) -> str:
        """`key`, if it is a valid key of this cache (it names files: never a path)."""
        if not isinstance(key, str) or self.KEY.fullmatch(key) is None:
            raise ValueError(f"{self.KIND} key {key!r} is not valid: expected {self.KEY_RULE}")
        return key

    @property
    def top(self) -> Path:
        """The outermost folder the trust check covers (`cache_root`, else `root`)."""
        return self.root if self.cache_root is None else self.cache_root


def trust_top(root: Path, cache_root: Path | None, cache: str) -> Path:
    """The outermost folder the trust check of a cache in `root` covers: `cache_root`
    (which must hold `root`), else `root` itself. `cache` names the cache in an error."""
    if cache_root is None:
        return root
    if not Path(root).is_relative_to(cache_root):
        raise ValueError(f"the {cache} {root} must be inside its cache root {cache_root}")
    return cache_root


def make_private_folder(folder: Path, top: Path) -> None:
    """Create `folder` and its missing parents up to `top` (inclusive) with mode 0700; the
    parents of `top` are not the cache's and get the default mode.

    Existing folders keep their mode: `require_trusted` says whether they can be used.
    """
    if folder.is_dir():
        return
    if not folder.is_relative_to(top):
        raise ValueError(f"{folder} is not inside the cache root {top}")
    top.parent.mkdir(parents=True, exist_ok=True)
    path = top
    for part in ("", *folder.relative_to(top).parts):
        path = path / part if part else path
        try:
            path.mkdir(mode=PRIVATE_FOLDER)  # the umask may restrict it further, never widen it
        except FileExistsError:  # made earlier, or by another process meanwhile
            if not path.is_dir():
                raise


def require_trusted(folder: Path, top: Path, *, entry: str, risk: str) -> None:
    """CacheSecurityError unless `folder` and each folder up to `top` (inclusive) is owned
    by the current user and not writable by group or others.

    `entry` names what is checked (e.g. "the build cache entry <folder>"); `risk` says what
    someone else could do with a folder they can write to.
    """
    _require_folders(os.fspath(folder), os.fspath(top), current_uid(), entry, risk)


def require_trusted_file(
    path: Path, opened: os.stat_result, top: Path, *, entry: str, risk: str
) -> None:
    """`require_trusted` for an entry that is a file: `opened` (the `fstat` of the file as
    it was opened, so that what is checked is what is read), then its folder and each
    folder up to `top`."""
    uid = current_uid()
    if opened.st_uid != uid or opened.st_mode & _SHARED_WRITE or not stat.S_ISREG(opened.st_mode):
        _refuse(entry, path, _problem(opened, uid, directory=False), risk, "file")
    folder = os.path.dirname(os.fspath(path))
    _require_folders(folder, os.fspath(top), uid, entry, risk)


def _require_folders(current: str, last: str, uid: int, entry: str, risk: str) -> None:
    """The check of `require_trusted`, on every cached first call: plain strings and one
    `stat` per folder (pathlib would cost more than the system calls)."""
    if current != last and not current.startswith(last.rstrip(os.sep) + os.sep):
        raise ValueError(f"{current} is not inside the cache root {last}")
    while True:
        info = os.stat(current)
        if info.st_uid != uid or info.st_mode & _SHARED_WRITE or not stat.S_ISDIR(info.st_mode):
            _refuse(entry, Path(current), _problem(info, uid, directory=True), risk, "folder")
        if current == last:
            return
        current = os.path.dirname(current)


def _problem(info: os.stat_result, uid: int, *, directory: bool) -> str:
    """What makes a file or folder untrustworthy ("" if nothing)."""
    problems = []
    if directory and not stat.S_ISDIR(info.st_mode):
        problems.append("is not a folder")
    if not directory and not stat.S_ISREG(info.st_mode):
        problems.append("is not a regular file")
    if info.st_uid != uid:
        problems.append(f"is owned by uid {info.st_uid}, not by this user (uid {uid})")
    writers = [
        who
        for who, bit in (("its group", stat.S_IWGRP), ("others", stat.S_IWOTH))
        if info.st_mode & bit
    ]
    if writers:
        mode = stat.S_IMODE(info.st_mode)
        problems.append(f"is writable by {' and '.join(writers)} (mode {mode:04o})")
    return " and ".join(problems)


def _refuse(entry: str, path: Path, problem: str, risk: str, what: str) -> NoReturn:
    repairs = []
    if "owned by" in problem:
        repairs.append(f"`chown $(id -un) {path}`")
    if "writable by" in problem:
        repairs.append(f"`chmod go-w {path}`")
    repair = " and ".join(repairs) or f"replace {path} by a {what} of your own"
    raise CacheSecurityError(
        f"refusing {entry}: the {what} {path} {problem}. {risk} Fix: {repair} if what it "
        "holds is yours, else remove it; or use a cache folder of your own "
        "(STENCILCHAIN_CACHE_DIR)."
    )
