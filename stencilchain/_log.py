"""The package's logger: every module logs under `stencilchain` (`logging.getLogger(__name__)`).

As a library, stencilchain adds only a NullHandler: an application that configures logging
decides where records go. `STENCILCHAIN_LOG_LEVEL` attaches a stderr handler for users who
do not (see `stencilchain.containers.log_level`). Imported by `stencilchain.steps`, so it
runs before any module that logs; `import stencilchain` alone does not import `logging`.
"""

from __future__ import annotations

import logging

ROOT = "stencilchain"

logging.getLogger(ROOT).addHandler(logging.NullHandler())
