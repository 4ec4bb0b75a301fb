"""`STENCILCHAIN_LOG_LEVEL`: logging for users who do not configure it themselves.

Applied when a container is built (`build_container`), never at import: if the variable is
set, the `stencilchain` logger gets that level, and, unless the application already handles
records (a handler on the `stencilchain` logger other than the library's NullHandler, or on
the root logger), a handler that writes them to stderr. Unset, nothing changes.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import TextIO

from stencilchain._log import ROOT
from stencilchain.containers.config import LOG_LEVEL

FORMAT = "%(asctime)s %(levelname)s [%(process)d] %(name)s: %(message)s"


class StderrHandler(logging.StreamHandler[TextIO]):
    """Writes to the `sys.stderr` of the moment (as logging's last resort does), so that a
    progress display that redirects stderr prints records above itself."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        raise AttributeError("StderrHandler writes to the current sys.stderr")


def apply_log_level(environ: Mapping[str, str] | None = None) -> logging.Handler | None:
    """Apply `STENCILCHAIN_LOG_LEVEL` of `environ` (default: os.environ, now); returns the
    stderr handler it attached, if it attached one (at most once per process)."""
    if environ is None:
        environ = os.environ
    level = LOG_LEVEL.parse(environ.get(LOG_LEVEL.env, ""))
    if level is None:
        return None
    logger = logging.getLogger(ROOT)
    logger.setLevel(level)
    if _handled(logger):
        return None
    handler = StderrHandler()
    handler.setFormatter(logging.Formatter(FORMAT))
    logger.addHandler(handler)
    return handler


def _handled(logger: logging.Logger) -> bool:
    """Whether records of `logger` already reach a handler that is not a NullHandler."""
    own = [h for h in logger.handlers if not isinstance(h, logging.NullHandler)]
    return bool(own) or bool(logging.getLogger().handlers)
