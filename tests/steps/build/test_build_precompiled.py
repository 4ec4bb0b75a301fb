"""Precompiled preludes (stencilchain.steps.build.precompiled) and the gold linker probe:
a unit's top-level system includes are found, precompiled once per context into a support
folder of the build cache, read by GCC (it says so with -H), and the object is the one
the unit gives without them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from stencilchain.steps.build.linker import GOLD, fast_linker_flags
from stencilchain.steps.build.precompiled import HEADER, prelude_of, prelude_options
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.caches.entries import SUPPORT

CXX = shutil.which("c++")
needs_cxx = pytest.mark.skipif(CXX is None, reason="needs a C++ compiler")

UNIT = """\
// a unit
#define SC_PROGRAM "p"
#define PY_SSIZE_T_CLEAN
#include <cmath>
#include <string>  // for std::string
#ifdef _OPENMP
#include <omp.h>
#endif
  #  include <cstdint>
#include <cmath>
#include "local.h"
namespace { std::string name() { return SC_PROGRAM; } }
double sc_root(double x) { return std::sqrt(x) + static_cast<double>(name().size()); }
std::int64_t sc_twice(std::int64_t x) { return 2 * x; }
"""


def test_the_prelude_is_the_top_level_system_includes_after_the_feature_macros() -> None:
    assert prelude_of(UNIT) == (
        "#define PY_SSIZE_T_CLEAN\n#include <cmath>\n#include <string>\n#include <cstdint>\n"
    )


@pytest.mark.parametrize(
    "before",
    [
        "#define _GNU_SOURCE",
        "#define NDEBUG 1",
        "#undef SC_PROGRAM",
        '#pragma GCC diagnostic ignored "-Wall"',
        "#ifdef X\n#define _FILE_OFFSET_BITS 64\n#endif",
        "#include <cmath>\n#define PY_SSIZE_T_CLEAN",  # too late for the includes after it
        '#include "mine.h"',
    ],
)
def test_no_prelude_where_a_directive_could_change_a_later_system_include(before: str) -> None:
    assert prelude_of(f"{before}\n#include <cstdio>\nint f();\n") == ""


def test_a_header_included_again_after_a_hazard_keeps_the_prelude() -> None:
    # several units in one (steps.cpp.shared_unit): the second include is empty (guarded)
    unit = "#include <cstdio>\n#undef SC_PROGRAM\n#define X 1\n#include <cstdio>\nint f();\n"
    assert prelude_of(unit) == "#include <cstdio>\n"
    assert prelude_of(unit + "#include <cmath>\n") == ""  # a new one after it: none


def test_directives_after_the_last_system_include_leave_the_prelude() -> None:
    unit = '#include <cstdio>\n#define LATER 1\n#pragma once\n#include "mine.h"\n'
    assert prelude_of(unit) == "#include <cstdio>\n"


def test_a_unit_without_system_includes_has_no_prelude(tmp_path: Path) -> None:
    assert prelude_of('#include "mine.h"\nint f() { return 1; }\n') == ""
    cache = BuildCache(tmp_path)
    assert (
        prelude_options(
            cache, ["c++"], "int f();\n", tools_identity="t", family="x", environment=None
        )
        == []
    )
    assert not list(tmp_path.iterdir())


def _flags() -> list[str]:
    assert CXX is not None
    return [CXX, "-std=c++17", "-fPIC", "-O1", "-DNDEBUG"]


@needs_cxx
def test_the_prelude_is_precompiled_once_read_by_gcc_and_changes_no_object(
    tmp_path: Path,
) -> None:
    cache = BuildCache(tmp_path / "cache")
    options = prelude_options(
        cache, _flags(), UNIT, tools_identity="t", family="dace", environment=None
    )
    assert options[:1] == ["-include"] and options[-1] == "-Winvalid-pch"
    header = Path(options[1])
    assert header.name == HEADER and header.with_name(HEADER + ".gch").is_file()
    [entry] = cache.entries()
    assert entry.kind == SUPPORT and entry.family == "dace"
    # a second unit with the same prelude and flags reads the same header, built once
    again = prelude_options(
        cache, _flags(), UNIT + "int more;\n", tools_identity="t", family="dace", environment=None
    )
    assert again == options and len(list(cache.entries())) == 1
    # other flags or another compiler identity: another header
    other = prelude_options(
        cache, [*_flags(), "-O2"], UNIT, tools_identity="t", family="dace", environment=None
    )
    assert other != options
    assert (
        prelude_options(cache, _flags(), UNIT, tools_identity="u", family="dace", environment=None)
        != options
    )

    unit = tmp_path / "unit.cpp"
    unit.write_text(UNIT.replace('#include "local.h"\n', ""))
    plain, precompiled = tmp_path / "plain.o", tmp_path / "precompiled.o"
    subprocess.run([*_flags(), "-c", str(unit), "-o", str(plain)], check=True)
    done = subprocess.run(
        [
            *_flags(),
            "-DSTENCILCHAIN_MODULE_NAME=m",
            *options,
            "-H",
            "-c",
            str(unit),
            "-o",
            str(precompiled),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    assert f"! {header}.gch" in done.stderr  # GCC read the precompiled header
    assert "invalid" not in done.stderr
    assert precompiled.read_bytes() == plain.read_bytes()


@needs_cxx
def test_a_prelude_folder_that_lost_its_header_is_built_again(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path)
    options = prelude_options(
        cache, _flags(), UNIT, tools_identity="t", family="dace", environment=None
    )
    gch = Path(options[1] + ".gch")
    gch.unlink()
    assert (
        prelude_options(cache, _flags(), UNIT, tools_identity="t", family="dace", environment=None)
        == options
    )
    assert gch.is_file()


@needs_cxx
def test_a_prelude_that_cannot_be_precompiled_leaves_the_unit_as_it_is(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path)
    unit = "#include <no_such_header_of_stencilchain.h>\nint f();\n"
    assert (
        prelude_options(cache, _flags(), unit, tools_identity="t", family="dace", environment=None)
        == []
    )
    assert SUPPORT not in [e.kind for e in cache.entries()]  # no complete folder


@needs_cxx
def test_gold_is_used_where_the_compiler_can_link_with_it() -> None:
    assert CXX is not None
    flags = fast_linker_flags(CXX, None)
    probe = subprocess.run([CXX, GOLD, "-Wl,--version"], capture_output=True, text=True)
    assert flags == ((GOLD,) if probe.returncode == 0 and "GNU gold" in probe.stdout else ())
    assert fast_linker_flags("/no/such/compiler", None) == ()
