"""Several generated units as one (stencilchain.steps.cpp.shared_unit): each part in a
namespace of its own after the system includes of all, its macros undefined after it, the
lines that must stay at file scope before it; the unit compiles where the parts define the
same names and macros, and each part's functions compute what the part alone does."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest

from stencilchain.steps.build.precompiled import prelude_of
from stencilchain.steps.cpp.shared_unit import Part, shared_unit

CXX = shutil.which("c++")

PART = """\
// a generated unit
#define SC_SCALE {scale}
#define PY_SSIZE_T_CLEAN
#include <cmath>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__GNUC__)
#define SC_INLINE inline
#else
#define SC_INLINE inline
#endif
#include <cstdint>
int sc_outside(int x);
namespace {{
SC_INLINE double scaled(double x) {{ return SC_SCALE * std::sqrt(x); }}
}}
extern "C" double SC_NAME(double x) {{ return scaled(x) + sc_outside(0); }}
"""


def _parts() -> list[Part]:
    return [
        Part(PART.format(scale=2.0), {"SC_NAME": "part_a"}),
        Part(PART.format(scale=3.0), {"SC_NAME": "part_b"}),
    ]


def _outside(line: str) -> bool:
    return line.startswith("int sc_outside(")


def test_each_part_is_in_its_namespace_after_the_includes_of_all() -> None:
    text = shared_unit(_parts(), file_scope=_outside, numbers=[0, 3])
    lines = text.splitlines()
    first = lines.index("namespace sc_member_0 {")
    assert lines.index("#define PY_SSIZE_T_CLEAN") < lines.index("#include <cmath>") < first
    assert lines.index("#include <cstdint>") < first
    # a conditional include keeps its condition
    omp = lines.index("#include <omp.h>")
    assert lines[omp - 1] == "#ifdef _OPENMP" and lines[omp + 1] == "#endif"
    assert "namespace sc_member_3 {" in lines and "namespace sc_member_1 {" not in lines
    # its given macros before it, every macro it defines undefined after it
    assert lines.index("#define SC_NAME part_a") < first
    closing = lines.index("}  // namespace sc_member_0")
    undefined = lines[closing + 1 : closing + 4]
    assert undefined == ["#undef SC_NAME", "#undef SC_SCALE", "#undef SC_INLINE"]
    assert "#undef PY_SSIZE_T_CLEAN" not in lines
    # the file-scope declaration before the namespace, not in it
    assert lines.index("int sc_outside(int x);") < first
    assert lines.count("int sc_outside(int x);") == 2
    # the includes read again inside the namespaces are no hazard for the prelude
    assert prelude_of(text) == "#define PY_SSIZE_T_CLEAN\n#include <cmath>\n#include <cstdint>\n"


@pytest.mark.skipif(CXX is None, reason="needs a C++ compiler")
def test_the_shared_unit_compiles_and_each_part_computes_its_own(tmp_path: Path) -> None:
    assert CXX is not None
    unit = tmp_path / "shared.cpp"
    text = shared_unit(_parts(), file_scope=_outside)
    unit.write_text(text + "int sc_outside(int x) { return x + 1; }\n")
    library = tmp_path / "libshared.so"
    done = subprocess.run(
        [
            CXX,
            "-std=c++17",
            "-fPIC",
            "-shared",
            "-Wall",
            "-Werror",
            "-O1",
            str(unit),
            "-o",
            str(library),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded = ctypes.CDLL(str(library))
    for name, scale in (("part_a", 2.0), ("part_b", 3.0)):
        function = getattr(loaded, name)
        function.restype, function.argtypes = ctypes.c_double, [ctypes.c_double]
        assert function(16.0) == scale * 4.0 + 1.0
