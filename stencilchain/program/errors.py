"""Errors a user of the DSL meets: at definition, at call."""

from __future__ import annotations

import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class DefinitionError(Exception):
    """A mistake in a field operator or program, found when its decorator runs.

    The message starts with the file and line of the user's code that caused it.
    """

    def __init__(self, message: str, location: tuple[str, int] | None = None) -> None:
        self.location = location if location is not None else user_location()
        self.reason = message
        prefix = f"{self.location[0]}:{self.location[1]}: " if self.location else ""
        super().__init__(prefix + message)


class ArgumentError(TypeError, ValueError):
    """A bad argument in a call of a program, found before any work is done."""


class WorkspaceError(ArgumentError):
    """A program whose temporaries live in a caller-provided workspace was called without
    one, or with one too small for the call."""


class DomainError(ValueError):
    """A call's domain reads or writes outside the arrays it was given."""


def user_location() -> tuple[str, int] | None:
    """File and line of the innermost stack frame outside the stencilchain package."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_PACKAGE_DIR + os.sep):
            return filename, frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return None
