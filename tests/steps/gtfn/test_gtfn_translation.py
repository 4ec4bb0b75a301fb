"""The GTFN translation (program IR -> C++/CUDA source) and, for the GPU, that what it
generates compiles: the program source and the GPU bindings are compiled with nvcc
(skipped where nvcc is absent; nothing runs, this machine needs no GPU).
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.examples import hdiff, tuple_chain, upwind
from stencilchain.program.device import Device
from stencilchain.steps.cpp.literals import literal
from stencilchain.steps.gtfn.bindings import GTFNBindingsStep
from stencilchain.steps.gtfn.tiling import Materialization
from stencilchain.steps.gtfn.translation import GTFNTranslationStep
from stencilchain.steps.settings import DataLayout
from stencilchain.steps.stages import ProgramSource

I = sc.Dimension("I")
J = sc.Dimension("J")
K = sc.Dimension("K")

F64 = sc.Field[[I, J], sc.float64]
F32 = sc.Field[[I, J], sc.float32]
I32 = sc.Field[[I, J], sc.int32]
I64 = sc.Field[[I, J], sc.int64]
B = sc.Field[[I, J], sc.bool_]
F3 = sc.Field[[I, J, K], sc.float64]


@sc.field_operator
def lap(f: F64) -> F64:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


@sc.field_operator
def scaled(f: F64, a: sc.float64) -> F64:
    return f * a


@sc.field_operator
def smooth(f: F64, a: sc.float64) -> F64:
    return f + scaled(lap(f), a)(J + 1) - lap(f(I - 1))


@sc.program
def two_calls(f: F64, tmp: F64, out: F64, a: sc.float64):
    lap(f, out=tmp)
    smooth(tmp, a, out=out)


def translate(program: sc.Program, **settings: Any) -> ProgramSource:
    settings.setdefault("device", Device.CPU)
    return GTFNTranslationStep(**settings)(program.ir)


def body_of(source: ProgramSource) -> str:
    """The generated program function after its signature line."""
    text = source.source_code
    start = text.index(f"int sc_run_{source.program.name}(")
    return text[text.index("\n", start) :]


# --- the step's settings ---------------------------------------------------------------------


def test_device_has_no_default() -> None:
    with pytest.raises(TypeError, match="device"):
        GTFNTranslationStep()  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "settings",
    [
        {"device": "cpu"},
        {"device": Device.CPU, "data_layout": "unit_stride"},
        {"device": Device.CPU, "materialization": "auto"},
    ],
    ids=["device_as_text", "layout_as_text", "materialization_as_text"],
)
def test_settings_of_the_wrong_type_are_type_errors(settings: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        GTFNTranslationStep(**settings)


BAD_SETTINGS = [
    (GTFNTranslationStep, {"device": "cpu"}, TypeError, "GTFNTranslationStep.device must be a Device"),
    (GTFNTranslationStep, {"enable_transforms": 1}, TypeError,
     "GTFNTranslationStep.enable_transforms must be a bool, got int 1"),
    (GTFNTranslationStep, {"data_layout": "strided"}, TypeError,
     "GTFNTranslationStep.data_layout must be a DataLayout (DataLayout.STRIDED, "),
    (GTFNTranslationStep, {"openmp_threshold": True}, TypeError,
     "GTFNTranslationStep.openmp_threshold must be a non-negative int, got bool True"),
    (GTFNTranslationStep, {"openmp_threshold": 1.5}, TypeError,
     "GTFNTranslationStep.openmp_threshold must be a non-negative int, got float 1.5"),
    (GTFNTranslationStep, {"openmp_threshold": -1}, ValueError,
     "GTFNTranslationStep.openmp_threshold must be a non-negative int, got -1"),
    (GTFNBindingsStep, {"device": None}, TypeError, "GTFNBindingsStep.device must be a Device"),
    (GTFNBindingsStep, {"data_layout": 0}, TypeError, "GTFNBindingsStep.data_layout must be a DataLayout"),
    (GTFNBindingsStep, {"flavor": 1}, TypeError,
     "GTFNBindingsStep.flavor must be one of 'capi', 'pybind11', got int 1"),
    (GTFNBindingsStep, {"flavor": "cython"}, ValueError,
     "GTFNBindingsStep.flavor must be one of 'capi', 'pybind11', got 'cython'"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("step", "settings", "error", "message"),
    BAD_SETTINGS,
    ids=[f"{s.__name__}-{next(iter(k))}-{v!r}" for s, k, _, _ in BAD_SETTINGS for v in k.values()],
)
def test_every_setting_is_checked_when_the_step_is_made(
    step: type, settings: dict[str, Any], error: type[Exception], message: str
) -> None:
    """A step built directly or by dataclasses.replace is checked like one from a builder."""
    good = step(device=Device.CPU)
    with pytest.raises(error, match=re.escape(message)):
        step(**{"device": Device.CPU, **settings})
    with pytest.raises(error, match=re.escape(message)):
        dataclasses.replace(good, **settings)


def test_the_stages_record_their_steps_settings() -> None:
    step = GTFNTranslationStep(Device.CPU, enable_transforms=False, openmp_threshold=7)
    source = step(two_calls.ir)
    assert json.loads(source.settings) == {
        "device": "cpu", "enable_transforms": "False", "data_layout": "strided",
        "openmp_threshold": "7", "materialization": "auto",
    }  # fmt: skip
    binding = GTFNBindingsStep(Device.CPU, flavor="pybind11")(source).binding_source
    assert json.loads(binding.settings) == {
        "device": "cpu",
        "data_layout": "strided",
        "flavor": "pybind11",
    }


def test_the_families_do_not_import_each_other() -> None:
    steps = Path(sc.__file__).parent / "steps"
    for family, other in (("gtfn", "dace"), ("dace", "gtfn")):
        for module in sorted((steps / family).glob("*.py")):
            text = module.read_text()
            assert f"stencilchain.steps.{other}" not in text, f"{module} imports {other}"
    code = (
        "import sys, stencilchain.steps.dace.bindings, stencilchain.steps.dace.shim, "
        "stencilchain.steps.dace.translator; "
        "assert not [m for m in sys.modules if m.startswith('stencilchain.steps.gtfn')]"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_fixed_cpp_text_is_package_data() -> None:
    """Every .h/.cpp file that the steps read is listed in pyproject's package-data."""
    root = Path(sc.__file__).parent
    pyproject = (root.parent / "pyproject.toml").read_text()
    (line,) = [ln for ln in pyproject.splitlines() if ln.startswith("stencilchain = [")]
    patterns = [p.strip().strip('"') for p in line.split("[", 1)[1].rstrip("]").split(",")]
    for path in sorted([*root.rglob("*.h"), *root.rglob("*.cpp")]):
        relative = path.relative_to(root)
        assert any(relative.match(p) for p in patterns), f"{relative} is not package data"


# --- the one expression emitter ---------------------------------------------------------------


def test_integer_arithmetic_wraps_in_the_unsigned_type() -> None:
    """No -fwrapv needed: signed overflow never happens in the generated C++."""
    source = translate(gpu_program).source_code
    assert "static_cast<std::int32_t>(static_cast<std::uint32_t>(" in source  # x**3 * k
    assert "static_cast<std::int64_t>(static_cast<std::uint64_t>(" in source  # y * m
    assert not re.search(r"static_cast<std::int(32|64)_t>\([^()]* [-+*] ", source)


def test_cpu_source_is_cpp_for_the_cpu() -> None:
    source = translate(two_calls)
    assert (source.language, source.device, source.entry_point) == ("cpp", Device.CPU, "two_calls")
    assert source.program is two_calls.ir
    assert "__global__" not in source.source_code and "cuda" not in source.source_code


# --- OpenMP --------------------------------------------------------------------------------------


@pytest.mark.parametrize("threshold", [65536, 4096, 0])
def test_cpu_loops_start_a_thread_team_from_the_threshold(threshold: int) -> None:
    source = translate(two_calls, openmp_threshold=threshold).source_code
    # a strided 2-D call has one loop nest per possible innermost dimension, run by each
    # thread of a team from the threshold on, else by the calling thread without a team
    nests = 2 * len(two_calls.ir.calls)
    teams = re.findall(r"if \(sc_points >= (\d+)\) \{\s*#pragma omp parallel\n", source)
    assert teams == [str(threshold)] * nests
    assert "#pragma omp parallel for" not in source
    assert "#pragma omp parallel if" not in source


def test_default_threshold_is_the_steps() -> None:
    assert GTFNTranslationStep(device=Device.CPU).openmp_threshold == 65536
    assert "if (sc_points >= 65536)" in translate(two_calls).source_code


# --- data layouts ---------------------------------------------------------------------------------


def test_unit_stride_emits_literal_unit_strides() -> None:
    source = translate(
        hdiff.PROGRAM, data_layout=DataLayout.UNIT_STRIDE, materialization=Materialization.RECOMPUTE
    )
    code, body = source.source_code, body_of(source)
    for name in ("inp", "coeff", "out"):
        assert f"* s2_{name}" not in code, name  # the innermost stride is 1, not a variable
        assert f"* s0_{name}" in code and f"* s1_{name}" in code
    assert "i_K]" in code  # the innermost index, unscaled
    assert "sc_inner" not in body  # no run-time choice of the innermost loop
    assert "const bool sc_unit = true;" in body
    assert body.count("#pragma omp parallel") == 1


def test_strided_layout_reads_every_stride_and_picks_the_inner_loop() -> None:
    source = translate(
        hdiff.PROGRAM, data_layout=DataLayout.STRIDED, materialization=Materialization.RECOMPUTE
    )
    for name in ("inp", "coeff", "out"):
        # the unit-stride instance of the kernel with K innermost reads with stride 1
        assert f"i_K * (sc_unit ? 1 : s2_{name})" in source.source_code, name
        assert f"i_I * s0_{name}" in source.source_code, name
    body = body_of(source)
    assert "sc_inner" in body
    assert body.count("#pragma omp parallel") == 3  # one loop nest per innermost dimension
    assert "const bool sc_unit = s2_inp == 1 && s2_coeff == 1 && s2_out == 1;" in body


# --- transforms -----------------------------------------------------------------------------------


def test_without_transforms_each_field_operator_is_a_function_template() -> None:
    source = translate(two_calls, enable_transforms=False).source_code
    for fop in ("lap", "scaled", "smooth"):
        match = re.search(rf"template <([^>]*)>\s*SC_HD inline double sc_fop_{fop}\(", source)
        assert match is not None, fop
        assert "class A_f" in match.group(1)
    assert "sc_fop_smooth(" in translate(two_calls, enable_transforms=False).source_code


def test_with_transforms_calls_are_inlined() -> None:
    source = translate(two_calls, enable_transforms=True).source_code
    assert "sc_fop_" not in source and "template <class A_" not in source


# --- literals ----------------------------------------------------------------------------------------

LITERALS_F64 = [0.1, 1e-300, 5e-324, 1.7976931348623157e308, -0.0, 1.0 / 3.0, -2.5e-17]


@sc.field_operator
def literal_values(f: F64, f32: F32, x: I32, y: I64, b: B):
    return (
        sc.where(b, f, 0.1),
        sc.where(b, f, 1e-300),
        sc.where(b, f, 5e-324),
        sc.where(b, f, 1.7976931348623157e308),
        sc.where(b, f, -0.0),
        sc.where(b, f, 1.0 / 3.0),
        sc.where(b, f, -2.5e-17),
        sc.where(b, f32, 0.1),
        sc.where(b, x, 2147483647),
        sc.where(b, y, 9007199254740993),
        sc.where(b, y, -9223372036854775807 - 1),
    )


@sc.program
def literals_program(
    f: F64, f32: F32, x: I32, y: I64, b: B,
    o0: F64, o1: F64, o2: F64, o3: F64, o4: F64, o5: F64, o6: F64, o7: F32, o8: I32, o9: I64,
    o10: I64,
):  # fmt: skip
    literal_values(f, f32, x, y, b, out=(o0, o1, o2, o3, o4, o5, o6, o7, o8, o9, o10))


@pytest.mark.parametrize("enable_transforms", [True, False])
def test_literals_are_exact_in_the_source(enable_transforms: bool) -> None:
    source = translate(literals_program, enable_transforms=enable_transforms).source_code
    for value in LITERALS_F64:
        assert value.hex() in source, value
    assert f"static_cast<float>({(0.1).hex()})" in source
    assert "static_cast<std::int32_t>(2147483647LL)" in source
    assert "9007199254740993LL" in source
    assert "(-9223372036854775807LL - 1)" in source


def test_literal_spellings() -> None:
    assert literal(0.1, sc.float64) == "0x1.999999999999ap-4"
    assert literal(float("inf"), sc.float64) == "__builtin_huge_val()"
    assert literal(float("-inf"), sc.float32) == ("static_cast<float>(-__builtin_huge_val())")
    assert literal(float("nan"), sc.float64) == '__builtin_nan("")'
    assert literal(True, sc.bool_) == "true" and literal(False, sc.bool_) == "false"
    assert literal(-(2**63), sc.int64) == "static_cast<std::int64_t>((-9223372036854775807LL - 1))"


def test_literals_are_exact_when_compiled(gtfn_cpu: Any) -> None:
    shape = (3, 4)
    inputs = [np.ones(shape), np.ones(shape, np.float32), np.ones(shape, np.int32),
              np.ones(shape, np.int64), np.zeros(shape, bool)]  # fmt: skip
    dtypes = [np.float64] * 7 + [np.float32, np.int32, np.int64, np.int64]
    outs = [np.full(shape, 7, dtype) for dtype in dtypes]
    literals_program.with_backend(gtfn_cpu)(*inputs, *outs)
    expected = [*LITERALS_F64, np.float32(0.1), 2147483647, 9007199254740993, -(2**63)]
    for out, value in zip(outs, expected):
        want = np.full(shape, value, out.dtype)
        assert out.tobytes() == want.tobytes(), (value, out[0, 0])  # bit for bit, -0.0 too


# --- the GPU ------------------------------------------------------------------------------------------


@sc.field_operator
def gpu_mix(
    f: F64, g: F32, x: I32, y: I64, b: B, a: sc.float64, s: sc.float32, k: sc.int32,
    m: sc.int64, flag: sc.bool_,
) -> F64:  # fmt: skip
    t = sc.astype(g * s + sc.math.sqrt(sc.math.abs(g)), sc.float64)
    u = sc.astype(x**3 * k + sc.math.minimum(x, 4), sc.float64)
    v = sc.astype(y * m - sc.math.maximum(sc.math.abs(y), 2), sc.float64)
    w = sc.where(b & flag | ~(f > a), sc.math.exp(f) + sc.math.log(sc.math.abs(f) + 1.0), -f)
    return (
        smooth(f, a)(I + 1)
        + t
        + u
        - v
        + w
        + sc.math.sin(f) * sc.math.cos(f) ** 2
        + sc.math.floor(f)
        - sc.math.ceil(f) / 3.0
    )


@sc.field_operator
def gpu_3d(f: F3) -> F3:
    return f(K + 1) - 2.0 * f + f(K - 1, I + 1)


@sc.program
def gpu_program(
    f: F64, g: F32, x: I32, y: I64, b: B, out: F64, f3: F3, out3: F3,
    a: sc.float64, s: sc.float32, k: sc.int32, m: sc.int64, flag: sc.bool_,
):  # fmt: skip
    gpu_mix(f, g, x, y, b, a, s, k, m, flag, out=out, domain={I: (2, -3), J: (1, -2)})
    gpu_3d(f3, out=out3)


def test_gpu_source_launches_kernels() -> None:
    source = translate(gpu_program, device=Device.GPU)
    assert (source.language, source.device) == ("cuda", Device.GPU)
    code = source.source_code
    assert "#include <cuda_runtime.h>" in code
    for index in range(len(gpu_program.ir.calls)):
        assert f"__global__ void sc_kernel_{index}(" in code
        assert f"sc_kernel_{index}<<<" in code
    assert "cudaGetLastError" in code and "#pragma omp" not in code


def test_gpu_bindings_take_cuda_arrays() -> None:
    source = translate(gpu_program, device=Device.GPU)
    bindings = GTFNBindingsStep(device=Device.GPU)(source).binding_source
    assert bindings.language == "cuda"
    assert "__cuda_array_interface__" in bindings.source_code
    with pytest.raises(ValueError, match="cannot wrap code generated for"):
        GTFNBindingsStep(device=Device.CPU)(source)


NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")


def nvcc_compile(code: str, path: Path, *flags: str) -> Path:
    """Compile `code` (a .cu file at `path`) to an object file; fail with nvcc's output."""
    assert NVCC is not None
    path.write_text(code)
    obj = path.with_suffix(".o")
    done = subprocess.run(
        [NVCC, "-std=c++17", "-c", "-Xcompiler=-fPIC", "-Xcompiler=-fwrapv",
         "--Werror", "cross-execution-space-call", *flags, str(path), "-o", str(obj)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"nvcc failed on {path.name}:\n{done.stdout}{done.stderr}"
    return obj


def symbols(obj: Path, defined: bool) -> set[str]:
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm is not on PATH")
    kind = "--defined-only" if defined else "--undefined-only"
    out = subprocess.run([nm, kind, str(obj)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


GPU_PROGRAMS = {
    "hdiff": (hdiff.PROGRAM, DataLayout.STRIDED),
    "gpu_program": (gpu_program, DataLayout.STRIDED),
    "upwind_unit_stride": (upwind.PROGRAM, DataLayout.UNIT_STRIDE),
}


@needs_nvcc
@pytest.mark.parametrize("name", GPU_PROGRAMS)
def test_gpu_program_and_bindings_compile_with_nvcc(name: str, tmp_path: Path) -> None:
    program, layout = GPU_PROGRAMS[name]
    source = translate(program, device=Device.GPU, data_layout=layout)
    extension = GTFNBindingsStep(device=Device.GPU, data_layout=layout)(source)
    program_obj = nvcc_compile(source.source_code, tmp_path / f"{name}.cu")
    bindings_obj = nvcc_compile(
        extension.binding_source.source_code,
        tmp_path / f"{name}_bindings.cu",
        f"-I{sysconfig.get_paths()['include']}",
        f"-DSTENCILCHAIN_MODULE_NAME=_sc_{name}",
    )
    # the bindings call the program function that the program unit defines
    entry = [s for s in symbols(bindings_obj, defined=False) if f"sc_run_{program.name}" in s]
    assert len(entry) == 1, entry
    assert entry[0] in symbols(program_obj, defined=True)
    assert f"PyInit__sc_{name}" in symbols(bindings_obj, defined=True)


@needs_nvcc
@pytest.mark.parametrize("name", ["hdiff", "gpu_program"])
def test_gpu_program_without_transforms_compiles_with_nvcc(name: str, tmp_path: Path) -> None:
    program, layout = GPU_PROGRAMS[name]
    source = translate(program, device=Device.GPU, data_layout=layout, enable_transforms=False)
    assert "sc_fop_" in source.source_code
    nvcc_compile(source.source_code, tmp_path / f"{name}.cu")


@needs_nvcc
@pytest.mark.parametrize("enable_transforms", [True, False])
def test_gpu_tuple_returns_compile_with_nvcc(enable_transforms: bool, tmp_path: Path) -> None:
    source = translate(tuple_chain.PROGRAM, device=Device.GPU, enable_transforms=enable_transforms)
    nvcc_compile(source.source_code, tmp_path / "tuple_chain.cu")


def test_chained_scans_run_column_by_column_on_the_cpu_only() -> None:
    """The Thomas solve's sweeps are one chain on the CPU: their temporaries are per-thread
    buffers of a block of columns, not arrays; the GPU keeps one kernel per call."""
    from stencilchain.examples import tridiagonal
    from stencilchain.steps.cpp.scan_chains import scan_chains

    program = tridiagonal.PROGRAM.ir
    assert scan_chains(program) == [(0, 1)]
    cpu = GTFNTranslationStep(device=Device.CPU)(program).source_code
    assert "calls 0-1, column by column" in cpu
    assert "sc_dense_like(" not in cpu.split("int sc_run_")[1]  # no temporary arrays
    gpu = GTFNTranslationStep(device=Device.GPU)(program).source_code
    assert "sc_kernel_1" in gpu and "column by column" not in gpu


F3 = sc.Field[[I, J, K], sc.float64]


@sc.scan_operator(axis=K, init=0.0)
def running_sum_up(total, f: F3):  # type: ignore[no-untyped-def]
    return total + f


@sc.scan_operator(axis=K, forward=False, init=0.0)
def running_sum_down(total, f: F3):  # type: ignore[no-untyped-def]
    return total + f


@sc.field_operator
def twice(f: F3) -> F3:
    return 2.0 * f


@sc.program
def chained_sums(f: F3, out: F3) -> None:
    running_sum_down(running_sum_up(f), out=out)


@sc.program
def sum_read_twice(f: F3, out: F3, other: F3) -> None:
    total = running_sum_up(f)
    running_sum_down(total, out=out)
    twice(total, out=other)


@sc.program
def sums_over_two_domains(f: F3, out: F3) -> None:
    total = running_sum_up(f)
    running_sum_down(total, out=out, domain={K: (1, -1)})


def test_a_temporary_another_call_reads_breaks_the_chain() -> None:
    from stencilchain.steps.cpp.scan_chains import scan_chains

    assert scan_chains(chained_sums.ir) == [(0, 1)]
    assert scan_chains(sum_read_twice.ir) == []
    assert scan_chains(sums_over_two_domains.ir) == []
