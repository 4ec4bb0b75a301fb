"""Fixed C++ text that stencilchain emits, read from the package's .h/.cpp data files.

The files sit beside the Python module that emits them and are package data (pyproject's
`[tool.setuptools.package-data]`), so an installed package has them; each is read once
per process. Their content is part of the package version that enters every cache key.

They are read as files of the package's folder, not through `importlib.resources`, whose
import costs a cached first call more than the reading (a package imported from a zip
file could not load its compiled extensions anyway).
"""

from __future__ import annotations

import functools
from pathlib import Path

_SITE = Path(__file__).resolve().parents[3]  # the folder holding the `stencilchain` package


@functools.cache
def package_text(package: str, name: str) -> str:
    """The text of the data file `name` of the package `package` (e.g. "stencilchain.steps.cpp")."""
    folder = _SITE.joinpath(*package.split("."))
    try:
        return folder.joinpath(name).read_text(encoding="utf-8")
    except FileNotFoundError as err:
        raise FileNotFoundError(
            f"the C++ file {name} of {package} is missing: the package is installed without "
            "its data files; reinstall stencilchain (its .h/.cpp files are package data)"
        ) from err
