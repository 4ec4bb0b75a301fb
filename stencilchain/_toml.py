"""The TOML reader of this Python: the standard library's `tomllib` (3.11+), else `tomli`
(a dependency on 3.10 only). Imported where a file is read, never by `import stencilchain`."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib as toml
else:  # pragma: no cover - 3.10
    import tomli as toml

TOMLDecodeError = toml.TOMLDecodeError
loads = toml.loads
load = toml.load

__all__ = ["TOMLDecodeError", "load", "loads"]
