"""Errors raised by the toolchain steps."""

from __future__ import annotations

from pathlib import Path


class CompilationError(Exception):
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
