"""Cold-compile time of a new small extension: CMakeCompiler against a plain CMake build.

    .venv/bin/python benchmarks/compile_time.py [--repeat N] [--keep DIR]

Each measured build compiles a source never seen before (a fresh constant in it), so no
cache can answer it. The one-time set-up of CMakeCompiler (compiler detection, OpenMP
search, the precompiled pybind11 header) is timed separately, then the builds alternate
between CMakeCompiler and the baseline, a plain "configure + build" of the same sources
with CMake's own pybind11 and OpenMP support (pybind11_add_module, find_package(OpenMP),
Release), without any of the tricks. Medians are printed; nothing is asserted.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import cmake
import ninja
import pybind11

from stencilchain.program.device import Device
from stencilchain.program.ir import Program
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.gtfn.compiler import CMakeCompiler
from stencilchain.steps.settings import BuildType
from stencilchain.steps.stages import BindingSource, ExtensionSource, ProgramSource

PROGRAM = """\
#include <cstdint>
void sc_scale(double* out, const double* in, std::int64_t n, double alpha) {
    #pragma omp parallel for if (n > 65536)
    for (std::int64_t i = 0; i < n; ++i) out[i] = alpha * in[i] + %(constant)s;
}
"""

PYBIND11_BINDINGS = """\
#include <pybind11/pybind11.h>
#include <cstdint>
namespace py = pybind11;
void sc_scale(double* out, const double* in, std::int64_t n, double alpha);
PYBIND11_MODULE(STENCILCHAIN_MODULE_NAME, m) {
    m.def("scale", [](py::handle out, py::handle in, double alpha) {
        Py_buffer o, i;
        if (PyObject_GetBuffer(out.ptr(), &o, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) throw py::error_already_set();
        if (PyObject_GetBuffer(in.ptr(), &i, PyBUF_C_CONTIGUOUS) != 0) { PyBuffer_Release(&o); throw py::error_already_set(); }
        sc_scale(static_cast<double*>(o.buf), static_cast<const double*>(i.buf), o.len / 8, alpha);
        PyBuffer_Release(&i); PyBuffer_Release(&o);
    });
}
"""

CAPI_BINDINGS = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <cstdint>
#define SC_CAT2(a, b) a##b
#define SC_CAT(a, b) SC_CAT2(a, b)
#define SC_STR2(x) #x
#define SC_STR(x) SC_STR2(x)
void sc_scale(double* out, const double* in, std::int64_t n, double alpha);
static PyObject* scale(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 3) { PyErr_SetString(PyExc_TypeError, "scale takes 3 arguments"); return nullptr; }
    Py_buffer o, i;
    if (PyObject_GetBuffer(args[0], &o, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) return nullptr;
    if (PyObject_GetBuffer(args[1], &i, PyBUF_C_CONTIGUOUS) != 0) { PyBuffer_Release(&o); return nullptr; }
    const double alpha = PyFloat_AsDouble(args[2]);
    sc_scale(static_cast<double*>(o.buf), static_cast<const double*>(i.buf), o.len / 8, alpha);
    PyBuffer_Release(&i); PyBuffer_Release(&o);
    Py_RETURN_NONE;
}
static PyMethodDef methods[] = {{"scale", (PyCFunction)(void (*)(void))scale, METH_FASTCALL, nullptr}, {nullptr, nullptr, 0, nullptr}};
static PyModuleDef module = {PyModuleDef_HEAD_INIT, SC_STR(STENCILCHAIN_MODULE_NAME), nullptr, -1, methods};
PyMODINIT_FUNC SC_CAT(PyInit_, STENCILCHAIN_MODULE_NAME)(void) { return PyModule_Create(&module); }
"""

BASELINE_CMAKE = """\
cmake_minimum_required(VERSION 3.20)
project(baseline LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(Python REQUIRED COMPONENTS Interpreter Development.Module)
find_package(pybind11 CONFIG REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
pybind11_add_module({name} program.cpp bindings.cpp)
target_compile_definitions({name} PRIVATE STENCILCHAIN_MODULE_NAME={name})
target_compile_options({name} PRIVATE -fwrapv)
target_link_libraries({name} PRIVATE OpenMP::OpenMP_CXX)
"""


def extension(bindings: str, constant: int, flavor: str) -> ExtensionSource:
    program = Program(name="p", params=(), field_operators=(), calls=())
    code = PROGRAM % {"constant": f"{constant}.0"}
    deps = ("pybind11",) if flavor == "pybind11" else ()
    return ExtensionSource(
        ProgramSource(program, "scale", code, "cpp", Device.CPU),
        BindingSource(bindings, "cpp", deps),
    )


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def baseline_build(folder: Path, source: ExtensionSource, name: str) -> None:
    """Plain CMake: configure a fresh folder with pybind11's CMake support, then build."""
    folder.mkdir(parents=True)
    (folder / "program.cpp").write_text(source.program_source.source_code)
    (folder / "bindings.cpp").write_text(source.binding_source.source_code)
    (folder / "CMakeLists.txt").write_text(BASELINE_CMAKE.format(name=name))
    cmake_exe = str(Path(cmake.CMAKE_BIN_DIR) / "cmake")
    build = folder / "build"
    subprocess.run(
        [
            cmake_exe, "-S", str(folder), "-B", str(build), "-G", "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={Path(ninja.BIN_DIR) / 'ninja'}",
            "-DCMAKE_BUILD_TYPE=Release",
            f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
            f"-DPython_EXECUTABLE={sys.executable}",
        ],
        check=True, capture_output=True,
    )  # fmt: skip
    subprocess.run([cmake_exe, "--build", str(build)], check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="builds per variant (median)")
    parser.add_argument("--keep", type=Path, help="build here and keep the folders")
    args = parser.parse_args()

    work = Path(args.keep or tempfile.mkdtemp(prefix="stencilchain-bench-"))
    compiler = CMakeCompiler(
        device=Device.CPU, build_type=BuildType.RELEASE, cache=BuildCache(work / "cache")
    )
    constant = iter(range(1, 10**6))
    print(f"cold compile of a new small extension, {args.repeat} builds each (folder {work})")
    setup = timed(lambda: compiler(extension(PYBIND11_BINDINGS, next(constant), "pybind11")))
    print(
        f"  one-time set-up (toolchain, precompiled pybind11 header, first build): {setup:6.2f} s"
    )

    times: dict[str, list[float]] = {}
    for repeat in range(args.repeat):
        for flavor, bindings in (("C-API", CAPI_BINDINGS), ("pybind11", PYBIND11_BINDINGS)):
            source = extension(bindings, next(constant), flavor.lower())
            ours = timed(functools.partial(lambda s: compiler(s).load(), source))
            times.setdefault(f"CMakeCompiler, {flavor} bindings", []).append(ours)
            name = f"baseline_{flavor.lower().replace('-', '')}_{repeat}"
            folder = work / "baseline" / name
            base = timed(functools.partial(baseline_build, folder, source, name))
            times.setdefault(f"baseline plain CMake, {flavor} bindings", []).append(base)

    for label, values in times.items():
        runs = ", ".join(f"{v:.2f}" for v in values)
        print(f"  {label:42s} median {statistics.median(values):6.2f} s   ({runs})")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
