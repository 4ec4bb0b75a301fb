"""The CMake + Ninja compiler, on hand-written extensions (C++ function + bindings).

Compiling is slow on two cores, so one module-scoped build serves most tests.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stencilchain.errors import CompilationError
from stencilchain.program.device import Device
from stencilchain.program.ir import Program
from stencilchain.steps.build.runner import BuildRunner
from stencilchain.steps.caches.build_cache import MARKER_NAME, BuildCache
from stencilchain.steps.gtfn.compiler import CMakeCompiler
from stencilchain.steps.settings import BuildType
from stencilchain.steps.stages import (
    BindingSource,
    CompiledArtifact,
    ExtensionSource,
    ProgramSource,
)

PROGRAM = Program(name="p", params=(), field_operators=(), calls=())

# The loops' unit: OpenMP, and a check that signed overflow wraps (-fwrapv): at -O3
# without it GCC folds `a + 1 < a` to false.
CPP_PROGRAM = """\
#include <omp.h>
int sc_threads() {
    int n = 0;
    #pragma omp parallel
    {
        #pragma omp single
        n = omp_get_num_threads();
    }
    return n;
}
bool sc_overflows(int a) { return a + 1 < a; }
double sc_axpy(double a, double x, double y) { return a * x + y; }
"""

PYBIND11_BINDINGS = """\
#include <pybind11/pybind11.h>
int sc_threads();
bool sc_overflows(int a);
double sc_axpy(double a, double x, double y);
PYBIND11_MODULE(STENCILCHAIN_MODULE_NAME, m) {
    m.def("axpy", &sc_axpy);
    m.def("threads", &sc_threads);
    m.def("overflows", &sc_overflows);
}
"""

CAPI_BINDINGS = """\
#define ENTRY "%(entry)s"
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define SC_CAT2(a, b) a##b
#define SC_CAT(a, b) SC_CAT2(a, b)
#define SC_STR2(x) #x
#define SC_STR(x) SC_STR2(x)
int sc_value();
static PyObject* run(PyObject*, PyObject*) { return PyLong_FromLong(sc_value()); }
static PyMethodDef methods[] = {{ENTRY, run, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};
static PyModuleDef module = {PyModuleDef_HEAD_INIT, SC_STR(STENCILCHAIN_MODULE_NAME), nullptr, -1, methods};
PyMODINIT_FUNC SC_CAT(PyInit_, STENCILCHAIN_MODULE_NAME)(void) { return PyModule_Create(&module); }
"""


def extension(
    entry: str,
    program_code: str,
    bindings_code: str,
    *,
    language: str = "cpp",
    device: Device = Device.CPU,
    deps: tuple[str, ...] = (),
) -> ExtensionSource:
    return ExtensionSource(
        ProgramSource(PROGRAM, entry, program_code, language, device),
        BindingSource(bindings_code.replace("%(entry)s", entry), language, deps),
    )


AXPY = extension("axpy", CPP_PROGRAM, PYBIND11_BINDINGS, deps=("pybind11",))


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> BuildCache:
    return BuildCache(tmp_path_factory.mktemp("build_cache"))


@pytest.fixture(scope="module")
def compiler(cache: BuildCache) -> CMakeCompiler:
    return CMakeCompiler(device=Device.CPU, build_type=BuildType.RELEASE, cache=cache)


@pytest.fixture(scope="module")
def artifact(compiler: CMakeCompiler) -> CompiledArtifact:
    return compiler(AXPY)


def test_a_hand_written_pybind11_extension_builds_loads_and_runs(
    artifact: CompiledArtifact, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    axpy = artifact.load()
    assert axpy(2.0, 3.0, 1.0) == 7.0
    module = sys.modules[artifact.module_name]
    assert module.overflows(2**31 - 1) is True  # -fwrapv, at -O3
    assert artifact.entry_point == "axpy"
    assert artifact.module_name.startswith("_sc_axpy_")
    assert artifact.module_path.is_file() and artifact.module_path.is_relative_to(
        artifact.build_dir
    )
    assert (artifact.build_dir / MARKER_NAME).is_file()
    assert artifact.metadata["module_name"] == artifact.module_name


def test_the_artifact_pickles_and_loads_in_another_process(artifact: CompiledArtifact) -> None:
    script = textwrap.dedent(
        """
        import pickle, sys
        artifact = pickle.loads(sys.stdin.buffer.read())
        axpy = artifact.load()
        module = sys.modules[artifact.module_name]
        print(axpy(2.0, 5.0, 1.0), module.threads())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=pickle.dumps(artifact),
        capture_output=True,
        env={**os.environ, "OMP_NUM_THREADS": "2"},
        check=True,
    )
    assert done.stdout.decode().split() == ["11.0", "2"]  # OpenMP is linked and honoured


def test_flags_follow_the_build_type_and_the_header_is_precompiled(
    artifact: CompiledArtifact,
) -> None:
    build_ninja = (artifact.build_dir / "build" / "build.ninja").read_text()
    program_flags = _compile_flags(build_ninja, "axpy.cpp")
    bindings_flags = _compile_flags(build_ninja, "axpy_bindings.cpp")
    assert {"-O3", "-fwrapv", "-fopenmp"} <= set(program_flags)
    assert {"-fwrapv", "-fopenmp", "-Winvalid-pch"} <= set(bindings_flags)
    assert bindings_flags.index("-O3") < bindings_flags.index("-O1")  # the later flag wins
    log = (artifact.build_dir / "build.log").read_text()
    assert "not used because" not in log  # GCC accepted the precompiled pybind11 header
    assert artifact.metadata["precompiled_header"] == "yes"
    assert "Detecting CXX compiler" not in log  # detection came from the toolchain folder


def _compile_flags(build_ninja: str, source: str) -> list[str]:
    """The FLAGS of the rule compiling `source` in a build.ninja."""
    rule = build_ninja.split(f"build CMakeFiles/sc_module.dir/{source}.o:")[1].split("\n\n")[0]
    line = next(line for line in rule.splitlines() if line.strip().startswith("FLAGS = "))
    return line.split("=", 1)[1].split()


def test_a_second_compile_loads_without_running_cmake(
    artifact: CompiledArtifact, cache: BuildCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_commands(*args: object, **kwargs: object) -> None:
        raise AssertionError("CMake or Ninja ran for a complete build")

    monkeypatch.setattr(BuildRunner, "start", no_commands)
    again = CMakeCompiler(device=Device.CPU, build_type=BuildType.RELEASE, cache=cache)(AXPY)
    assert artifact.built and not again.built  # a cache hit
    assert dataclasses.replace(again, built=True) == artifact


def test_the_key_covers_source_and_settings(compiler: CMakeCompiler) -> None:
    key = compiler.plan(AXPY).key
    assert key.startswith("axpy_") and compiler.plan(AXPY).key == key
    changed_source = extension("axpy", CPP_PROGRAM + "\n", PYBIND11_BINDINGS, deps=("pybind11",))
    variants = [
        compiler.plan(changed_source).key,
        dataclasses.replace(compiler, build_type=BuildType.DEBUG).plan(AXPY).key,
        dataclasses.replace(compiler, extra_flags=("-march=x86-64",)).plan(AXPY).key,
        dataclasses.replace(compiler, openmp=False).plan(AXPY).key,
        dataclasses.replace(compiler, bindings_optimization=None).plan(AXPY).key,
        dataclasses.replace(compiler, native_cpu=False).plan(AXPY).key,
    ]
    assert len({key, *variants}) == len(variants) + 1
    assert dataclasses.replace(compiler, jobs=1).plan(AXPY).key == key  # speed only


def test_a_compiler_upgrade_never_reuses_old_builds(cache: BuildCache, tmp_path: Path) -> None:
    """The build key holds the compiler's identity (its resolved file's size and time): a
    compiler that now reports another version gets new builds, and the old ones stay."""
    from stencilchain.steps.build.tools import find_tools

    real = shutil.which("g++") or shutil.which("c++")
    assert real is not None
    wrapper = tmp_path / "bin" / "c++"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    compiler = CMakeCompiler(
        device=Device.CPU, build_type=BuildType.RELEASE, cache=cache, cxx=str(wrapper)
    )
    before = compiler.plan(AXPY).key
    # the upgrade: the same name answers another version (in a new process: tools are
    # looked up once per process)
    wrapper.write_text(
        '#!/bin/sh\nif [ "$1" = --version ]; then echo "c++ (upgraded) 99.1"; exit 0; fi\n'
        f'exec {real} "$@"\n'
    )
    os.utime(wrapper, ns=(wrapper.stat().st_mtime_ns + 10**9,) * 2)
    find_tools.cache_clear()
    try:
        after = compiler.plan(AXPY).key
    finally:
        find_tools.cache_clear()
    assert after != before


def test_native_code_is_keyed_by_the_host_cpu(
    compiler: CMakeCompiler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """-march=native code of one CPU is never loaded on a host with another CPU that
    shares the cache: the key holds the CPU's identity (not without native_cpu)."""
    from stencilchain.steps.gtfn import compiler as compiler_module

    portable = dataclasses.replace(compiler, native_cpu=False)
    keys = (compiler.plan(AXPY).key, portable.plan(AXPY).key)
    monkeypatch.setattr(compiler_module, "host_cpu_identity", lambda: "another cpu")
    assert compiler.plan(AXPY).key != keys[0]
    assert portable.plan(AXPY).key == keys[1]


def test_a_compile_error_raises_with_the_compiler_message_and_the_log(
    compiler: CMakeCompiler,
) -> None:
    broken = extension("broken", "int sc_value() { return undeclared_name + 1; }\n", CAPI_BINDINGS)
    with pytest.raises(CompilationError) as caught:
        compiler(broken)
    error = caught.value
    assert "undeclared_name" in error.compiler_output and "error" in error.compiler_output
    assert "undeclared_name" in str(error) and str(error.log_path) in str(error)
    assert error.log_path is not None and error.log_path.is_file()
    assert "undeclared_name" in error.log_path.read_text()
    assert error.log_path.parent == compiler.cache.folder(compiler.plan(broken).key)
    assert compiler.cache.lookup(compiler.plan(broken).key) is None  # never marked complete
    assert pickle.loads(pickle.dumps(error)).log_path == error.log_path


def test_a_capi_extension_builds_without_pybind11(
    compiler: CMakeCompiler, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    artifact = compiler(extension("value", "int sc_value() { return 42; }\n", CAPI_BINDINGS))
    assert artifact.load()() == 42
    assert artifact.metadata["precompiled_header"] == "no"
    assert "pybind11" not in (artifact.build_dir / "src" / "CMakeLists.txt").read_text()


def test_the_system_headers_of_each_unit_are_precompiled(
    compiler: CMakeCompiler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each C++ unit reads its prelude (its system headers) precompiled with its own
    flags, and GCC accepts it; without precompiled headers the same module builds."""
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    program = "#include <cmath>\n#include <cstdint>\nint sc_value() { return static_cast<int>(std::sqrt(1764.0)); }\n"
    # the generated bindings define their macros after the system headers, as here
    bindings = CAPI_BINDINGS.replace('#define ENTRY "%(entry)s"\n', "").replace(
        "#include <Python.h>\n", '#include <Python.h>\n#define ENTRY "%(entry)s"\n'
    )
    source = extension("prelude", program, bindings)
    artifact = compiler(source)
    assert artifact.load()() == 42
    assert artifact.metadata["precompiled_preludes"] == "program,bindings"
    build_ninja = (artifact.build_dir / "build" / "build.ninja").read_text()
    for unit in ("prelude.cpp", "prelude_bindings.cpp"):
        flags = _compile_flags(build_ninja, unit)
        assert "-include" in flags and "-Winvalid-pch" in flags, unit
        assert Path(flags[flags.index("-include") + 1] + ".gch").is_file()
    assert "not used because" not in (artifact.build_dir / "build.log").read_text()
    plain = dataclasses.replace(compiler, precompiled_headers=False)
    assert plain.plan(source).key == compiler.plan(source).key  # the same build, faster
    without = plain(extension("noprelude", program, bindings))
    assert without.load()() == 42
    assert without.metadata["precompiled_preludes"] == ""


def test_a_complete_folder_that_lost_its_module_is_rebuilt(compiler: CMakeCompiler) -> None:
    source = extension("lost", "int sc_value() { return 5; }\n", CAPI_BINDINGS)
    first = compiler(source)
    first.module_path.unlink()
    again = compiler(source)
    assert again.module_path == first.module_path and again.module_path.is_file()


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (extension("x", "", "", device=Device.GPU, language="cuda"), "generated for gpu"),
        (extension("x", "", "", language="cuda"), "builds 'cpp'"),
        (extension("x", "", "", deps=("gridtools",)), "library 'gridtools'"),
        (extension("not-an-identifier", "", ""), "C identifier"),
    ],
)
def test_sources_it_cannot_build_are_rejected(
    compiler: CMakeCompiler, source: ExtensionSource, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        compiler(source)


def test_settings_are_checked(cache: BuildCache) -> None:
    with pytest.raises(TypeError, match="device"):
        CMakeCompiler(device="cpu", build_type=BuildType.RELEASE, cache=cache)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="extra_flags"):
        CMakeCompiler(
            device=Device.CPU,
            build_type=BuildType.RELEASE,
            cache=cache,
            extra_flags=["-O2"],  # type: ignore[arg-type]
        )
    with pytest.raises(ValueError, match="';'"):
        CMakeCompiler(
            device=Device.CPU, build_type=BuildType.RELEASE, cache=cache, extra_flags=("-a;-b",)
        )


CUDA_PROGRAM = """\
#include <cuda_runtime.h>
__global__ void sc_twice(int* x) { x[threadIdx.x] *= 2; }
int sc_value() {
    int* device_x = nullptr;
    int x[4] = {1, 2, 3, 21};
    if (cudaMalloc(&device_x, sizeof x) != cudaSuccess) return -1;  // no GPU here
    cudaMemcpy(device_x, x, sizeof x, cudaMemcpyHostToDevice);
    sc_twice<<<1, 4>>>(device_x);
    cudaMemcpy(x, device_x, sizeof x, cudaMemcpyDeviceToHost);
    cudaFree(device_x);
    return x[3];
}
"""


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (the CUDA toolkit)")
def test_a_trivial_cuda_extension_compiles(cache: BuildCache) -> None:
    compiler = CMakeCompiler(device=Device.GPU, build_type=BuildType.RELEASE, cache=cache)
    artifact = compiler(
        extension("twice", CUDA_PROGRAM, CAPI_BINDINGS, language="cuda", device=Device.GPU)
    )
    assert artifact.module_path.is_file()
    assert (artifact.build_dir / "src" / "twice.cu").is_file()
    assert json.loads(artifact.metadata_json)["device"] == "gpu"
    assert artifact.load()() in (-1, 42)  # 42 where a GPU is present
