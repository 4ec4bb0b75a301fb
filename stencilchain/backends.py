"""The pre-built toolchains, each named by its attribute name.

smooth.with_backend(stencilchain.backends.run_embedded)(f, out, 0.1)
"""

from __future__ import annotations

from stencilchain.program.embedded import EmbeddedBackend, run_embedded

__all__ = ["EmbeddedBackend", "run_embedded"]
