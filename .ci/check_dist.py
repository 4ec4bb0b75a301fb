"""Checks that an sdist and a wheel hold every file of stencilchain/ that git tracks.

Usage: python .ci/check_dist.py CHECKOUT SDIST WHEEL. A file left out (a C++ header that
package-data does not name, say) is an error naming it: the installed package could not build.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path


def tracked(checkout: Path) -> set[str]:
    """The files of the package, as git tracks them (paths from the checkout)."""
    out = subprocess.run(
        ["git", "-C", str(checkout), "ls-files", "stencilchain"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    return {line for line in out.splitlines() if line}


def in_sdist(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as archive:  # one top folder, stencilchain-<version>/
        return {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}


def in_wheel(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def main(argv: list[str]) -> int:
    checkout, sdist, wheel = (Path(a) for a in argv)
    want = tracked(checkout)
    data = sorted(p for p in want if not p.endswith(".py"))
    failed = False
    for archive, have in ((sdist, in_sdist(sdist)), (wheel, in_wheel(wheel))):
        missing = sorted(want - have)
        if missing:
            failed = True
            print(f"{archive.name} lacks {len(missing)} files of stencilchain/: {missing}")
        else:
            print(f"{archive.name}: all {len(want)} files of stencilchain/, {len(data)} of data")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
