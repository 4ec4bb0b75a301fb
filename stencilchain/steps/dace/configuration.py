"""The one place where stencilchain changes DaCe's configuration, for the duration of a step.

DaCe 2.0 takes no configuration per call: its SDFG builders, code generator and compiler
read `dace.Config.get(...)` where they use a setting (e.g. `compiler.lineinfo` in every
`add_*` of `dace.sdfg.state`, which a `debuginfo` argument cannot turn off), and
`SDFG.compile`, `generate_code` and `configure_and_compile` have no configuration
parameter. So the steps set the values around their work and restore them exactly after.
DaCe keeps its configuration per thread (`dace.config._ConfigData` is a
`threading.local`): the change is seen by the calling thread only, which holds `DACE_LOCK`.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Mapping

__all__ = ["dace_configuration", "sdfg_construction"]


@contextlib.contextmanager
def dace_configuration(settings: Mapping[tuple[str, ...], object]) -> Iterator[None]:
    """DaCe's configuration with each (path -> value) of `settings` set in this thread,
    restored on exit."""
    from dace.config import set_temporary

    with contextlib.ExitStack() as stack:
        for path, value in settings.items():
            stack.enter_context(set_temporary(*path, value=value))
        yield


@contextlib.contextmanager
def sdfg_construction() -> Iterator[None]:
    """The setting under which the translator builds and optimizes an SDFG.

    `compiler.lineinfo` "none": otherwise DaCe records the file and line of every node's
    creator (absolute paths of stencilchain's modules and of DaCe's), which would make the
    text differ between checkouts and machines. DaCe's warning about a map of an empty
    range is silenced: a call whose domain is always empty is a valid program, it does
    nothing. The warning filter is Python's (`warnings.catch_warnings`, process-wide for
    the duration: DaCe offers no other way to mute it).
    """
    with dace_configuration({("compiler", "lineinfo"): "none"}), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*turned into a no-ops", category=UserWarning)
        yield
