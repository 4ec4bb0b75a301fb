"""The linker of a build's small shared libraries: GNU gold where the compiler has it.

A DaCe build links two small shared libraries (DaCe's program, the extension module);
gold links each in about a quarter of the CPU time of the default BFD linker (0.02 s
against 0.08 s on the reference machine), and the libraries behave the same. The choice
is not part of the build key (like the linker CMake picks for GTFN): it changes the
layout of the file, never what it does.
"""

from __future__ import annotations

import functools
import subprocess

from stencilchain.steps.build.tools import BuildEnvironment, build_environment

GOLD = "-fuse-ld=gold"


@functools.cache
def fast_linker_flags(cxx: str, environment: BuildEnvironment | None) -> tuple[str, ...]:
    """The flags that make `cxx` (run in `environment`, None: this process's) link with
    gold, or () if it cannot; asked once per process, compiler and environment (one short
    process: `cxx -fuse-ld=gold -Wl,--version`)."""
    try:
        done = subprocess.run(
            [cxx, GOLD, "-Wl,--version"],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=build_environment(environment),
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ()
    return (GOLD,) if done.returncode == 0 and "GNU gold" in done.stdout else ()
