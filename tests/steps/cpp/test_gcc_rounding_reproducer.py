"""A GCC 12.2 miscompilation the fuzzer found (docs/adr/0041): at -O3, predictive commoning
unrolls a loop that reads `nu[k]` rounded through float32 and `nu[k - 1]` unrounded, and
the SLP vectorizer then takes the unrounded value for both. Both families compile their
program code with -fno-predictive-commoning.

Two tests: the reduced DSL program on every CPU toolchain against NumPy, and the reduced
C++ loop compiled with the GTFN program unit's flags (and with DaCe's), which must round."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.steps.dace.compiler import DEFAULT_CPU_ARGS
from stencilchain.steps.gtfn.cmake_project import PROGRAM_UNIT_FLAGS

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F = sc.Field[[I, J, K], sc.float64]
FK = sc.Field[[K], sc.float64]


@sc.field_operator
def rounded_and_shifted(a: F, nu: FK, alpha: sc.float64) -> tuple[F, F]:
    return (
        -a(K - 2) * sc.astype(sc.astype(nu, sc.float32), sc.float64),
        sc.broadcast(nu(K - 1) * alpha**2, (I, J, K)),
    )


@sc.program
def rounded_and_shifted_program(a: F, nu: FK, alpha: sc.float64, out: F, out2: F) -> None:
    rounded_and_shifted(a, nu, alpha, out=(out, out2), domain={I: (1, -3), K: (3, -1)})


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("name", ["embedded", "gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu"])
def test_a_float32_round_trip_next_to_a_shifted_read_is_rounded(
    name: str, order: str, request: pytest.FixtureRequest
) -> None:
    shape = (7, 4, 7)  # three levels in the domain: GCC's unrolled pair and one more
    rng = np.random.default_rng(1)
    a = np.asarray(rng.normal(size=shape), order=order)
    nu = rng.normal(size=shape[2])
    alpha = 0.3
    out, out2 = np.zeros(shape, order=order), np.zeros(shape, order=order)
    program: Any = rounded_and_shifted_program
    if name != "embedded":
        program = program.with_backend(request.getfixturevalue(name))
    program(a, nu, alpha, out, out2)

    expected, expected2 = np.zeros(shape), np.zeros(shape)
    rounded = nu.astype(np.float32).astype(np.float64)
    expected[1:4, :, 3:6] = -a[1:4, :, 1:4] * rounded[3:6]
    expected2[1:4, :, 3:6] = nu[2:5] * alpha**2
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(out2, expected2)


REPRODUCER = r"""
#include <cmath>
#include <cstdint>
#include <cstdio>
__attribute__((noinline)) void f(const double* __restrict__ a, const double* __restrict__ nu,
        double* __restrict__ out, double* __restrict__ out2, std::int64_t k0, std::int64_t k1,
        double alpha) {
    for (std::int64_t k = k0; k < k1; ++k) {
        const double t0 = -a[k - 2];
        const float t1 = static_cast<float>(nu[k]);
        const double t2 = static_cast<double>(t1);
        out[k] = t0 * t2;
        out2[k] = nu[k - 1] * alpha;
    }
}
int main() {
    double a[16], nu[16], out[16], out2[16];
    for (int i = 0; i < 16; ++i) { a[i] = std::sin(i + 1.0); nu[i] = std::cos(i * 0.7 + 0.1); }
    int wrong = 0;
    for (int stop = 4; stop < 14; ++stop) {
        for (int k = 0; k < 16; ++k) out[k] = 0.0;
        f(a, nu, out, out2, 3, stop, 0.09);
        for (int k = 3; k < stop; ++k)
            if (out[k] != -a[k - 2] * static_cast<double>(static_cast<float>(nu[k]))) ++wrong;
    }
    std::printf("%d\n", wrong);
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.parametrize(
    "flags",
    [
        pytest.param(("-fwrapv", *PROGRAM_UNIT_FLAGS), id="gtfn"),
        pytest.param(DEFAULT_CPU_ARGS, id="dace"),
    ],
)
def test_the_reduced_loop_rounds_with_the_families_flags(
    flags: tuple[str, ...], tmp_path: Path
) -> None:
    source = tmp_path / "reproducer.cpp"
    source.write_text(REPRODUCER, encoding="utf-8")
    binary = tmp_path / "reproducer"
    subprocess.run(
        ["g++", "-std=c++17", "-O3", "-march=native", *flags, str(source), "-o", str(binary)],
        check=True,
        capture_output=True,
    )
    wrong = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout
    assert wrong.strip() == "0", f"{wrong.strip()} values not rounded through float32"
