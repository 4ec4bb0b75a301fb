"""`STENCILCHAIN_TRACE`: a timeline of the process, for users who do not start one in code.

Applied when a container is built (`build_container`), never at import: if the variable is
set, a trace (stencilchain.runtime.tracing) starts, and it is written to the file at exit.
Containers built later with the same file keep that trace; unset, nothing changes.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Mapping
from pathlib import Path

from stencilchain.containers.config import TRACE
from stencilchain.runtime import tracing

_started: dict[Path, tracing.Trace] = {}  # the traces this process started from the variable


def trace_path(raw: Path, pid: int | None = None) -> Path:
    """The file of `raw` for this process: `{pid}` replaced by the process id."""
    return Path(str(raw).replace("{pid}", str(os.getpid() if pid is None else pid)))


def apply_trace(environ: Mapping[str, str] | None = None) -> tracing.Trace | None:
    """Apply `STENCILCHAIN_TRACE` of `environ` (default: os.environ, now); returns the trace
    recording into its file (started now, or by an earlier container), or None."""
    if environ is None:
        environ = os.environ
    raw = TRACE.parse(environ.get(TRACE.env, ""))
    if raw is None:
        return None
    path = trace_path(raw)
    recording = _started.get(path)
    if recording is None:
        recording = tracing.Trace(path)
        _started[path] = recording
        atexit.register(recording.save)
    if tracing.active() is not recording:
        tracing.start(recording)
    return recording
