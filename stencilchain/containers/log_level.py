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
from typing import TYPE_CHECKING, TextIO

from stencilchain._log import ROOT
from stencilchain.containers.config import LOG_LEVEL

FORMAT = "%(asctime)s %(levelname)s [%(process)d] %(name)s: %(message)s"

if TYPE_CHECKING:  # StreamHandler is generic only in typeshed before Python 3.11
    _StreamHandler = logging.StreamHandler[TextIO]
else:
    _StreamHandler = logging.StreamHandler


class StderrHandler(_StreamHandler):
    """Writes to the `sys.stderr` of the moment (as logging's last resort does), so that a
    progress display that redirects stderr prints records above itself."""

    def __init__(self, level: int = logging.NOTSET) -> None:
        logging.Handler.__init__(self, level)

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
    ours = [h for h in logger.handlers if isinstance(h, StderrHandler)]
    if ours:  # attached before (e.g. by the command line, for warnings): now at this level
        ours[0].setLevel(logging.NOTSET)
        return None
    if _handled(logger):
        return None
    handler = StderrHandler()
    handler.setFormatter(logging.Formatter(FORMAT))
    logger.addHandler(handler)
    return handler


def show_warnings() -> logging.Handler | None:
    """For an application (the command line): warnings of the `stencilchain` logger (a
    damaged cache entry rebuilt, ...) go to stderr, unless something already handles its
    records. `STENCILCHAIN_LOG_LEVEL`, applied later, lowers the level of this handler too."""
    logger = logging.getLogger(ROOT)
    if _handled(logger):
        return None
    handler = StderrHandler(logging.WARNING)
    handler.setFormatter(logging.Formatter(FORMAT))
    logger.addHandler(handler)
    return handler


def _handled(logger: logging.Logger) -> bool:
    """Whether records of `logger` already reach a handler that is not a NullHandler."""
    own = [h for h in logger.handlers if not isinstance(h, logging.NullHandler)]
    return bool(own) or bool(logging.getLogger().handlers)
