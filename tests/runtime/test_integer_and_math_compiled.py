"""Integer `//`, `%`, bitwise operators and shifts, and every math function, compiled by
every CPU toolchain, against NumPy on edge values: zero divisors, negative operands, the
smallest integer, shift counts outside [0, bits), NaN, infinities, signed zeros, poles.

Integer operations, the predicates and the functions NumPy and C++ compute exactly
(floor, ceil, trunc, fmod, sqrt, abs, minimum, maximum) are compared bit for bit; the
transcendental functions within the tolerance docs/dsl.md gives (`MAX_ULP`), with NaN and
infinities where NumPy has them. Three programs in all (integers, float64, float32), each
with many outputs: compilation is the slow part.
"""

from __future__ import annotations

import math
import shutil
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import semantics
from tests._support import family_toolchain

I = sc.Dimension("I")

TOOLCHAINS = ["embedded", "gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]

# The largest difference from NumPy, in units in the last place of the larger magnitude,
# of the functions that C++'s library and NumPy may compute differently (docs/dsl.md).
MAX_ULP = 4
GAMMA_MAX_ULP = 16
# CUDA's math library documents up to 2 ulp (float64) and 4-9 ulp (float32, tgamma more).
CUDA_MAX_ULP = 16
TRANSCENDENTAL = (
    "exp", "log", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh",
    "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "cbrt", "gamma", "power",
)  # fmt: skip


@pytest.fixture(params=TOOLCHAINS)
def run(request: pytest.FixtureRequest) -> Any:
    """A function running a program on the toolchain."""
    if request.param == "embedded":
        return lambda prog: prog
    toolchain = request.getfixturevalue(request.param)
    return lambda prog: prog.with_backend(toolchain)


# --- integers ----------------------------------------------------------------------------------

N = 24


def integer_operands(dtype: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, c): dividends, divisors (0, -1, negatives) and shift counts (negative, >= bits)."""
    info = np.iinfo(dtype)
    bits = info.bits
    a = np.array(
        [7, -7, 7, -7, info.min, info.min, 5, 0, -1, info.max, info.min, 123456, -123456, 1,
         -8, 3, info.max, info.min + 1, 9, -9, 100, -100, 0, 1],
        dtype=dtype,
    )  # fmt: skip
    b = np.array(
        [2, 2, -2, -2, -1, 0, 0, 0, -1, -1, 1, 7, 7, -7, 3, -3, 2, -2, 9, 9, -3, 3, -5, info.min],
        dtype=dtype,
    )
    c = np.array(
        [0, 1, 3, -1, bits - 1, bits, bits + 1, 2 * bits, -bits, info.max, info.min, 5,
         5, bits - 1, 40 % bits, 1, 2, 3, -2, 7, bits // 2, bits - 2, 63, 64],
        dtype=dtype,
    )  # fmt: skip
    assert len(a) == len(b) == len(c) == N
    return a, b, c


I32 = sc.Field[[I], sc.int32]
I64 = sc.Field[[I], sc.int64]
B = sc.Field[[I], sc.bool_]


def integer_results(a: Any, b: Any, c: Any, s: Any) -> tuple[Any, ...]:
    """The operations under test, on traced values or (the reference) on NumPy arrays."""
    return (
        a // b, a % b, a // s, a % s, a // 3, a % -3, 7 // b, -7 % b,
        a << c, a >> c, a << 3, a >> 1, 1 << c, -8 >> c,
        a & b, a | b, a ^ b, ~a, a & 0xFF, a ^ -1,
    )  # fmt: skip


N_INTEGER = 20


@sc.field_operator
def integer_ops(
    a32: I32,
    b32: I32,
    c32: I32,
    s32: sc.int32,
    a64: I64,
    b64: I64,
    c64: I64,
    s64: sc.int64,
    p: B,
    q: B,
):  # type: ignore[no-untyped-def]
    return (
        *integer_results(a32, b32, c32, s32),
        *integer_results(a64, b64, c64, s64),
        sc.math.fmod(a32, b32), sc.math.fmod(a64, b64),
        divmod(a64, b64)[0], divmod(a64, b64)[1],
        p ^ q, p & q, p | q, ~p, p ^ True,
        sc.math.isnan(a32), sc.math.isinf(a64), sc.math.isfinite(a32),
        sc.math.power(a64, 3), sc.math.abs(a32),
    )  # fmt: skip


INTEGER_OUTPUTS = (
    [np.int32] * N_INTEGER + [np.int64] * N_INTEGER + [np.int32, np.int64, np.int64, np.int64]
    + [np.bool_] * 8 + [np.int64, np.int32]
)  # fmt: skip


def _program_with_outputs(fop: Any, inputs: str, dtypes: list[Any], name: str) -> sc.Program:
    """A program calling `fop` on `inputs` (parameter text) with one output per dtype."""
    names = {np.int32: "I32", np.int64: "I64", np.bool_: "B", np.float64: "F64", np.float32: "F32"}
    outs = [f"o{k}" for k in range(len(dtypes))]
    params = ", ".join(f"{o}: {names[d]}" for o, d in zip(outs, dtypes))
    args = ", ".join(p.split(":")[0].strip() for p in inputs.split(","))
    source = f"def {name}({inputs}, {params}):\n    fop({args}, out=({', '.join(outs)},))\n"
    namespace: dict[str, Any] = {"fop": fop, **GLOBALS}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return sc.program(namespace[name])


F64 = sc.Field[[I], sc.float64]
F32 = sc.Field[[I], sc.float32]
GLOBALS = {"sc": sc, "I32": I32, "I64": I64, "B": B, "F64": F64, "F32": F32}

integer_program = _program_with_outputs(
    integer_ops,
    "a32: I32, b32: I32, c32: I32, s32: sc.int32, a64: I64, b64: I64, c64: I64, s64: sc.int64, "
    "p: B, q: B",
    INTEGER_OUTPUTS,
    "integer_program",
)


def integer_reference(a32, b32, c32, s32, a64, b64, c64, s64, p, q):  # type: ignore[no-untyped-def]
    with np.errstate(all="ignore"):
        return (
            *integer_results(a32, b32, c32, s32),
            *integer_results(a64, b64, c64, s64),
            np.fmod(a32, b32), np.fmod(a64, b64),
            a64 // b64, a64 % b64,
            p ^ q, p & q, p | q, ~p, p ^ True,
            np.isnan(a32), np.isinf(a64), np.isfinite(a32),
            a64 ** 3, np.abs(a32),
        )  # fmt: skip


def integer_inputs() -> tuple[Any, ...]:
    a32, b32, c32 = integer_operands(np.int32)
    a64, b64, c64 = integer_operands(np.int64)
    p, q = a32 > 0, b32 > 0
    return a32, b32, c32, np.int32(0), a64, b64, c64, np.int64(-1), p, q


def test_integer_operations(run: Any) -> None:
    inputs = integer_inputs()
    expected = integer_reference(*inputs)
    outs = [np.zeros(N, dtype=d) for d in INTEGER_OUTPUTS]
    run(integer_program)(*inputs, *outs)
    for k, (out, want) in enumerate(zip(outs, expected)):
        np.testing.assert_array_equal(out, want, strict=True, err_msg=f"output {k}")


def test_the_integer_edge_values_are_numpys() -> None:
    """What docs/dsl.md promises, spelled out: these are NumPy's values."""
    a, b, _ = integer_operands(np.int32)
    with np.errstate(all="ignore"):
        assert (a[b == 0] // b[b == 0] == 0).all() and (a[b == 0] % b[b == 0] == 0).all()
        assert a[4] // b[4] == np.iinfo(np.int32).min and a[4] % b[4] == 0
    assert np.left_shift(np.int32(5), np.int32(32)) == 0
    assert np.left_shift(np.int32(5), np.int32(-1)) == 0
    assert np.right_shift(np.int32(-5), np.int32(40)) == -1
    assert np.right_shift(np.int32(5), np.int32(-1)) == 0
    assert np.right_shift(np.int32(-8), np.int32(1)) == -4


# --- floats ---------------------------------------------------------------------------------------

UNARY_FLOAT = (
    "sqrt", "exp", "log", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
    "tanh", "arcsinh", "arccosh", "arctanh", "cbrt", "gamma", "abs", "floor", "ceil", "trunc",
    "isnan", "isinf", "isfinite",
)  # fmt: skip
BINARY_FLOAT = ("arctan2", "fmod", "power", "minimum", "maximum")
FLOAT_NAMES = UNARY_FLOAT + BINARY_FLOAT

X_VALUES = [
    0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 0.999, -0.999, 1.5, 3.0, -3.0, 10.0, -10.0,
    30.0, 171.5, -171.5, 1e-300, 700.0, math.nan, math.inf, -math.inf, 0.1, -7.25, 100.0,
]  # fmt: skip
Y_VALUES = [
    1.0, -1.0, 2.0, 0.0, -0.0, 3.0, -2.0, 0.5, math.nan, math.inf, -math.inf, 0.25, 2.0,
    -3.0, 0.5, 1.5, 2.0, -0.75, 2.0, 1.0, 1.0, -1.0, 2.0, -0.1, 3.0, 0.5,
]  # fmt: skip
assert len(X_VALUES) == len(Y_VALUES)


def float_results(x: Any, y: Any, math_module: Any) -> tuple[Any, ...]:
    unary = tuple(getattr(math_module, fn)(x) for fn in UNARY_FLOAT)
    binary = tuple(getattr(math_module, fn)(x, y) for fn in BINARY_FLOAT)
    return unary + binary


class NumPyMath:
    """sc.math's functions on arrays: NumPy's, and the embedded executor's gamma."""

    def __getattr__(self, name: str) -> Any:
        if name == "gamma":
            return semantics.gamma
        return getattr(np, name)


@sc.field_operator
def float64_ops(x: F64, y: F64):  # type: ignore[no-untyped-def]
    return float_results(x, y, sc.math)


@sc.field_operator
def float32_ops(x: F32, y: F32):  # type: ignore[no-untyped-def]
    return float_results(x, y, sc.math)


def _float_dtypes(dtype: Any) -> list[Any]:
    return [np.bool_ if fn in ("isnan", "isinf", "isfinite") else dtype for fn in FLOAT_NAMES]


float64_program = _program_with_outputs(
    float64_ops, "x: F64, y: F64", _float_dtypes(np.float64), "float64_program"
)
float32_program = _program_with_outputs(
    float32_ops, "x: F32, y: F32", _float_dtypes(np.float32), "float32_program"
)


def assert_within_ulp(actual: np.ndarray, expected: np.ndarray, max_ulp: int, what: str) -> None:
    """Equal NaN and infinities where NumPy has them; finite values within `max_ulp` units
    in the last place of the larger magnitude."""
    assert actual.dtype == expected.dtype, what
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg=what)
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(actual[~finite], expected[~finite], err_msg=what)
    a, e = actual[finite], expected[finite]
    ulp = np.spacing(np.maximum(np.abs(a), np.abs(e)))
    worst = np.abs(a.astype(np.float64) - e.astype(np.float64)) / ulp.astype(np.float64)
    assert (worst <= max_ulp).all(), f"{what}: {worst.max()} ulp at {np.argmax(worst)}"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_math_functions(run: Any, dtype: Any) -> None:
    prog = float64_program if dtype == np.float64 else float32_program
    x = np.array(X_VALUES, dtype=dtype)
    y = np.array(Y_VALUES, dtype=dtype)
    with np.errstate(all="ignore"):
        expected = float_results(x, y, NumPyMath())
    outs = [np.zeros(len(x), dtype=d) for d in _float_dtypes(dtype)]
    run(prog)(x, y, *outs)
    for fn, out, want in zip(FLOAT_NAMES, outs, expected):
        what = f"{fn} of {np.dtype(dtype)}"
        if fn in TRANSCENDENTAL:
            assert_within_ulp(out, want, GAMMA_MAX_ULP if fn == "gamma" else MAX_ULP, what)
        else:
            np.testing.assert_array_equal(out, want, strict=True, err_msg=what)
            if out.dtype == np.bool_:
                continue
            signs = np.signbit(out[out == 0]) == np.signbit(want[want == 0])
            assert signs.all(), f"{what}: the sign of a zero"


# --- GPU: the sources build with nvcc here; the results are checked where a GPU is ------------------

PROGRAMS = {"integer": integer_program, "float64": float64_program, "float32": float32_program}


def _gpu_toolchain(family: str, cache_dir: Any) -> Any:
    if family == "dace":
        pytest.importorskip("dace")
    return family_toolchain(family, cache_dir, device="gpu")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.slow
@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_gpu_sources_build(session_cache_dir: Any, family: str) -> None:
    toolchain = _gpu_toolchain(family, session_cache_dir)
    for prog in PROGRAMS.values():
        assert toolchain.compile(prog).artifact.module_path.is_file()


def _inputs_and_outputs(name: str) -> tuple[tuple[Any, ...], list[np.ndarray], tuple[Any, ...]]:
    if name == "integer":
        inputs = integer_inputs()
        return inputs, [np.zeros(N, d) for d in INTEGER_OUTPUTS], integer_reference(*inputs)
    dtype = np.float64 if name == "float64" else np.float32
    x, y = np.array(X_VALUES, dtype=dtype), np.array(Y_VALUES, dtype=dtype)
    with np.errstate(all="ignore"):
        expected = float_results(x, y, NumPyMath())
    return (x, y), [np.zeros(len(x), d) for d in _float_dtypes(dtype)], expected


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.gpu
@pytest.mark.parametrize("family", ["gtfn", "dace"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gpu_results(session_cache_dir: Any, family: str, name: str) -> None:
    """On the GPU the transcendental functions are CUDA's: within CUDA_MAX_ULP of NumPy."""
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except Exception as err:  # cupy imports without a GPU and fails on first use
        pytest.skip(f"no usable CUDA device: {err}")
    toolchain = _gpu_toolchain(family, session_cache_dir)
    inputs, outs, expected = _inputs_and_outputs(name)
    on_device = [cupy.asarray(v) if isinstance(v, np.ndarray) else v for v in inputs]
    outs_on_device = [cupy.asarray(o) for o in outs]
    PROGRAMS[name].with_backend(toolchain)(*on_device, *outs_on_device)
    cupy.cuda.Device().synchronize()
    names = [f"output {k}" for k in range(len(outs))] if name == "integer" else FLOAT_NAMES
    for what, got, want in zip(names, outs_on_device, expected):
        out = cupy.asnumpy(got)
        if what in TRANSCENDENTAL:
            assert_within_ulp(out, want, CUDA_MAX_ULP, f"{what} of {name}")
        else:
            np.testing.assert_array_equal(out, want, strict=True, err_msg=f"{what} of {name}")
