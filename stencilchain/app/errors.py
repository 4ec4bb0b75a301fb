"""Errors of the command line: what the user asked for cannot be done, said in one line."""

from __future__ import annotations

from stencilchain.errors import CompilationError, ConfigError

USAGE = 2  # a mistake in the command, its arguments or the environment
FAILURE = 1  # the command ran and failed (a build, a differing result, a missing device)


class CLIError(Exception):
    """A problem the user can fix, printed as one line; `status` is the exit status."""

    def __init__(self, message: str, status: int = USAGE) -> None:
        super().__init__(message)
        self.status = status


def exit_status(error: BaseException) -> int:
    """The exit status for `error`: usage mistakes 2, everything else 1."""
    if isinstance(error, CLIError):
        return error.status
    return USAGE if isinstance(error, ConfigError) else FAILURE


def one_line(error: BaseException) -> str:
    """The message of `error` as one line (the first one, with a hint if more was cut)."""
    if isinstance(error, CompilationError):
        first = next((ln.strip() for ln in error.compiler_output.splitlines() if ln.strip()), "")
        text = error.summary + (f": {first}" if first else "")
        return text + (f" (full log: {error.log_path})" if error.log_path else "")
    message = str(error).strip()
    if not isinstance(error, (CLIError, ConfigError)):
        message = f"{type(error).__name__}: {message}" if message else type(error).__name__
    lines = [line for line in message.splitlines() if line.strip()]
    if len(lines) > 1:
        return f"{lines[0]} (more with --debug)"
    return lines[0] if lines else message
