"""Every error of stencilchain, under one root: `StencilchainError`.

    try:
        smooth.with_backend(sc.backends.run_gtfn_cpu)(f, out)
    except sc.StencilchainError as error:
        ...

Each error also derives from the built-in exception a caller would expect (an
`ArgumentError` is a `TypeError` and a `ValueError`, a `MissingExtraError` an
`ImportError`), so existing `except` clauses keep working.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class StencilchainError(Exception):
    """The root of every error stencilchain raises on purpose."""


class DefinitionError(StencilchainError):
    """A mistake in a field operator or program, found when its decorator runs.

    The message starts with the file and line of the user's code that caused it.
    """

    def __init__(self, message: str, location: tuple[str, int] | None = None) -> None:
        self.location = location if location is not None else user_location()
        self.reason = message
        prefix = f"{self.location[0]}:{self.location[1]}: " if self.location else ""
        super().__init__(prefix + message)


class ArgumentError(StencilchainError, TypeError, ValueError):
    """A bad argument in a call of a program, found before any work is done."""


class WorkspaceError(ArgumentError):
    """A program whose temporaries live in a caller-provided workspace was called without
    one, or with one too small for the call."""


class DomainError(StencilchainError, ValueError):
    """A call's domain reads or writes outside the arrays it was given."""


class DistributedError(StencilchainError):
    """The ranks of a job disagree (another program list, a build one rank cannot send)."""


class DecompositionError(DistributedError, ValueError):
    """A grid cannot be split over the ranks as asked, or a distributed field does not fit
    its decomposition (a halo wider than a rank's block, an array of another shape)."""


class EmptyDomainWarning(UserWarning):
    """A call's domain is empty although its arrays are not: they are too small for what
    the call reads, so the call writes nothing (every backend warns the same way)."""


class ConfigError(StencilchainError, ValueError):
    """A configuration value or variable is not valid; the message says which and what is accepted."""


class MissingExtraError(StencilchainError, ImportError):
    """A toolchain family needs an optional extra that is not installed."""


class UnsupportedError(StencilchainError, NotImplementedError):
    """A toolchain cannot run a construct that the program uses; the message names the
    construct and a toolchain that runs it."""


class CacheSecurityError(StencilchainError, PermissionError):
    """A cache folder or entry could be changed by another user: loading it would run or
    trust what someone else may have written."""


class CacheDirectoryError(StencilchainError, OSError):
    """A cache folder cannot be created or written (a read-only or full file system, a
    folder of another user, a path through a file); the message names the folder and the
    setting that chooses it."""


class CompilationError(StencilchainError):
    """A native build failed.

    `compiler_output` is the compiler's own message (the tail of the build log), so the
    error is readable where it is raised; `log_path` is the full log, kept on disk.
    """

    def __init__(self, summary: str, compiler_output: str, log_path: Path | None) -> None:
        self.summary = summary
        self.compiler_output = compiler_output
        self.log_path = log_path
        where = f" (full log: {log_path})" if log_path is not None else ""
        details = f":\n{compiler_output}" if compiler_output else ""
        super().__init__(f"{summary}{where}{details}")

    def __reduce__(self) -> tuple[type[CompilationError], tuple[str, str, Path | None]]:
        return (type(self), (self.summary, self.compiler_output, self.log_path))


class BuildsFailedError(StencilchainError):
    """Some programs of a `Toolchain.compile_many` failed; every other one was compiled.

    `failures` maps each failed program's name to its error; `compiled` each compiled
    program's name to its `CompiledProgram` (also in the toolchain's pool). The message
    lists the failed programs with the first line of each error.
    """

    def __init__(self, failures: dict[str, BaseException], compiled: dict[str, Any]) -> None:
        self.failures = failures
        self.compiled = compiled
        lines = [
            f"{len(failures)} of {len(failures) + len(compiled)} programs failed to compile "
            f"({len(compiled)} compiled):",
            *(f"  {name}: {_first_line(error)}" for name, error in failures.items()),
        ]
        super().__init__("\n".join(lines))

    def __reduce__(
        self,
    ) -> tuple[type[BuildsFailedError], tuple[dict[str, BaseException], dict[str, Any]]]:
        return (type(self), (self.failures, {}))


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


def user_location() -> tuple[str, int] | None:
    """File and line of the innermost stack frame outside the stencilchain package."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_PACKAGE_DIR + os.sep):
            return filename, frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return None


__all__ = [
    "ArgumentError",
    "BuildsFailedError",
    "CacheSecurityError",
    "CompilationError",
    "ConfigError",
    "DefinitionError",
    "DomainError",
    "EmptyDomainWarning",
    "MissingExtraError",
    "StencilchainError",
    "UnsupportedError",
    "WorkspaceError",
    "user_location",
]
