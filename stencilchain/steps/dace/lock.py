"""The DaCe lock: DaCe's Python side (SDFG construction, transformations, serialization,
code generation, reading its configuration) keeps global state and is not thread-safe.

Every DaCe step holds this lock while it calls into DaCe's Python API, and only then:
DaCe's native builds (processes), and GTFN steps, run beside it. Processes are kept
apart by the build cache's lock per folder, not by this lock.
"""

from __future__ import annotations

import threading

# Reentrant: a step may call another helper that takes it too.
DACE_LOCK = threading.RLock()
