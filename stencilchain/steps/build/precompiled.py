"""Precompiled preludes: the system headers of a C++ unit, compiled once per build context
and read by every later build whose unit has the same prelude and flags.

A unit's prelude is its top-level system includes (`#include <...>` outside any `#if`),
in their order, after the feature macros (PY_SSIZE_T_CLEAN) the unit defines before its
first include. The prelude goes to the front of the unit (`-include`): those headers are
guarded, and a unit in which anything that could change them comes before one of them
(another macro, an `#undef`, a `#pragma`, a header of its own) has no prelude, so the unit means what it did. Parsing them is most of the compile time of a glue unit (the
bindings' <Python.h> and standard headers: about 0.3 of 0.45 s).

GCC reads the `.gch` only where it is exact (it checks the flags and macros itself;
-Winvalid-pch notes in the build log when it declines) and otherwise the plain header
beside it: the object is the same either way. The `.gch` lives in a support folder of the
build cache (`pch-*`), keyed by the compiler's identity, the flags and the prelude.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from stencilchain._version import package_version
from stencilchain.errors import CompilationError
from stencilchain.program.hashing import sha256_of
from stencilchain.steps.build.runner import BuildRunner
from stencilchain.steps.build.tools import BuildEnvironment, build_environment
from stencilchain.steps.caches.build_cache import BuildCache, BuildResult

HEADER = "sc_prelude.h"
# Macros that select what a header declares and that a unit defines before including it.
_FEATURE_MACROS = frozenset({"PY_SSIZE_T_CLEAN"})
# Prefixes of the macros of stencilchain's own code, which no system header reads.
_OWN_MACROS = ("SC_", "STENCILCHAIN_")
_DIRECTIVE = re.compile(r"#\s*(\w+)\s*(.*?)\s*(?://.*)?")
_SYSTEM_INCLUDE = re.compile(r"<([^<>\s]+)>")
_MACRO_NAME = re.compile(r"\w+")


def prelude_of(source: str) -> str:
    """The prelude of the C++ unit `source` (header text): empty if it has no system
    includes at top level, or if something before one of them could change what it
    declares (a macro other than the feature macros and our own `SC_`/`STENCILCHAIN_`
    ones, an `#undef`, a `#pragma`, an `#include "..."`): moving that include to the front
    would not be exact. A header included again later changes nothing (its guard), so
    what comes before it is no hazard: several units in one (`steps.cpp.shared_unit`)."""
    macros: list[str] = []
    includes: list[str] = []
    depth = 0
    hazard = False  # a directive seen that could change what a later header declares
    for line in source.splitlines():
        match = _DIRECTIVE.fullmatch(line.strip())
        if match is None:
            continue
        directive, rest = match[1], match[2]
        if directive in ("if", "ifdef", "ifndef"):
            depth += 1
        elif directive == "endif":
            depth -= 1
        elif directive in ("else", "elif"):
            continue
        elif directive == "include":
            header = _SYSTEM_INCLUDE.fullmatch(rest)
            if header is None:  # a header of the unit's own may define anything
                hazard = True
                continue
            if depth != 0:  # system headers are written to be included in any order
                continue
            if f"#include <{header[1]}>" in includes:  # included already: empty (guarded)
                continue
            if hazard:
                return ""
            includes.append(f"#include <{header[1]}>")
        elif directive == "define":
            found = _MACRO_NAME.match(rest)
            name = found[0] if found is not None else ""
            if depth == 0 and not includes and rest == name and name in _FEATURE_MACROS:
                macros.append(f"#define {name}")
            elif not name.startswith(_OWN_MACROS):
                hazard = True
        else:
            hazard = True
    return "\n".join([*macros, *includes, ""]) if includes else ""


def prelude_options(
    cache: BuildCache,
    compile_flags: Sequence[str],
    source: str,
    *,
    tools_identity: str,
    family: str,
    environment: BuildEnvironment | None,
) -> list[str]:
    """The options that make a unit compiled with `compile_flags` (the compiler and its
    options, without the unit, its output and the unit's own macros) read the prelude of
    `source` precompiled; the prelude is precompiled first if this context has none yet.

    [] if `source` has no prelude, or if it cannot be precompiled (the unit then compiles
    as it is, and says what is wrong with its headers itself). `environment`: what the
    compiler runs with (None: this process's)."""
    prelude = prelude_of(source)
    if not prelude:
        return []
    digest = sha256_of(
        "stencilchain-prelude/1",
        package_version(),
        tools_identity,
        *compile_flags,
        prelude,
        *((f"salt={cache.salt}",) if cache.salt else ()),
    )

    def build(folder: Path) -> dict[str, str]:
        include = folder / "include"
        include.mkdir()
        header = include / HEADER
        header.write_text(prelude)
        with BuildRunner(folder, build_environment(environment)) as runner:
            command = [*compile_flags, "-x", "c++-header", str(header), "-o", f"{header}.gch"]
            runner.run(command, "precompiling the system headers of a unit")
        return {"family": family, "include_dir": "include", "header": HEADER}

    key = f"pch-{digest[:32]}"
    try:
        header = _header(cache.get_or_build(key, build))
        if header is None:  # the folder lost its files (removed by hand): build it again
            cache.discard(key)
            header = _header(cache.get_or_build(key, build))
    except CompilationError:
        return []
    return [] if header is None else ["-include", str(header), "-Winvalid-pch"]


def _header(result: BuildResult) -> Path | None:
    """The prelude header of a complete support folder, if it and its `.gch` are there."""
    header = (
        result.folder / result.metadata.get("include_dir", "") / result.metadata.get("header", "")
    )
    gch = header.with_name(header.name + ".gch")
    return header if header.is_file() and gch.is_file() else None
