"""The GTFN CPU translation's materialization of intermediates in tiles (steps/gtfn/tiling.py):
the cost model's choices, the generated code (stages, restrict pointers, vectorized inner
loops by the compiler's own report), and results identical to the embedded executor at
tile edges, for domains that are not a multiple of the tile, tiny and empty domains, in
both layouts."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.containers import build_container, make_gtfn_translation, override_step
from stencilchain.examples import hdiff, laplacian
from stencilchain.program.device import Device
from stencilchain.program.transforms import substitute, transform_program
from stencilchain.steps.gtfn.cmake_project import PROGRAM_UNIT_FLAGS
from stencilchain.steps.gtfn.tiling import (
    Materialization,
    TilePlan,
    buffer_bytes,
    plan_tiles,
    tile_sizes,
)
from stencilchain.steps.gtfn.translation import GTFNTranslationStep

I, J, K = hdiff.I, hdiff.J, hdiff.K
F3 = sc.Field[[I, J, K], sc.float64]
F2 = sc.Field[[I, J], sc.float64]
FI = sc.Field[[I, J], sc.int64]


def plan_of(program: sc.Program, mode: Materialization = Materialization.AUTO) -> TilePlan | None:
    """The plan of the program's only call."""
    transformed = transform_program(program.ir)
    (call,) = transformed.calls
    fop = {f.name: f for f in transformed.field_operators}[call.callee]
    body = substitute(fop.body, dict(zip((p.name for p in fop.params), call.args)))
    return plan_tiles(body, tuple(dd.dim for dd in call.domain.dims), mode)


# --- the cost model ---------------------------------------------------------------------------


def test_hdiff_in_tiles_keeps_the_laplacian_and_both_fluxes() -> None:
    plan = plan_of(hdiff.PROGRAM, Materialization.ALWAYS)
    assert plan is not None
    assert len(plan.stages) == 3
    # by their extents: the Laplacian is read around every flux point, each flux one
    # point back along its own direction
    reach = {(s.low, s.high) for s in plan.stages}
    assert reach == {((-1, -1, 0), (1, 1, 0)), ((-1, 0, 0), (0, 0, 0)), ((0, -1, 0), (0, 0, 0))}
    first = plan.stages[0]
    assert (first.low, first.high) == ((-1, -1, 0), (1, 1, 0))  # the Laplacian, before its readers
    assert first.positions == 2  # twice within each kept flux


def test_a_plain_stencil_is_not_tiled() -> None:
    assert plan_of(laplacian.PROGRAM) is None
    assert plan_of(laplacian.PROGRAM, Materialization.ALWAYS) is None  # nothing to keep


@sc.field_operator
def expensive(f: F3) -> F3:
    e = sc.math.exp(sc.math.sin(f))
    return e(I + 1) + e(I - 1) + e(J + 1) + e(J - 1) - 4.0 * e


@sc.program
def expensive_program(f: F3, out: F3) -> None:
    expensive(f, out=out)


def test_auto_recomputes_arithmetic_and_keeps_math_functions() -> None:
    """The calibration of KEEP_COST: hdiff's vectorized arithmetic is recomputed (faster
    inline, measured), a value of two math functions read at five offsets is kept."""
    assert plan_of(hdiff.PROGRAM) is None
    plan = plan_of(expensive_program)
    assert plan is not None and len(plan.stages) == 1
    (stage,) = plan.stages
    assert stage.positions == 5
    assert (stage.low, stage.high) == ((-1, -1, 0), (1, 1, 0))


def test_recompute_keeps_nothing() -> None:
    assert plan_of(hdiff.PROGRAM, Materialization.RECOMPUTE) is None


@sc.field_operator
def cheap_pair(f: F2) -> F2:
    s = f + f(J + 1)
    return s + s(I + 1)


@sc.program
def cheap_pair_program(f: F2, out: F2) -> None:
    cheap_pair(f, out=out)


def test_a_cheap_value_read_twice_is_recomputed_unless_always() -> None:
    assert plan_of(cheap_pair_program) is None
    plan = plan_of(cheap_pair_program, Materialization.ALWAYS)
    assert plan is not None and len(plan.stages) == 1


def test_tiles_fit_the_budget_and_the_innermost_dimension_is_long() -> None:
    plan = plan_of(hdiff.PROGRAM, Materialization.ALWAYS)
    assert plan is not None
    for inner in range(3):
        sizes = tile_sizes(plan, inner)
        assert sizes[inner] == 256
        assert buffer_bytes(plan, sizes) <= 256 * 1024 or min(sizes) <= 4


# --- the generated code -----------------------------------------------------------------------


def cpu_source(program: sc.Program, mode: Materialization = Materialization.AUTO) -> str:
    return GTFNTranslationStep(Device.CPU, materialization=mode)(program.ir).source_code


def test_the_plan_and_its_stages_show_in_the_source() -> None:
    source = cpu_source(hdiff.PROGRAM, Materialization.ALWAYS)
    assert "kept per tile (cost model: steps/gtfn/tiling.py)" in source
    assert source.count("static void sc_call0_tiles") == 3  # one per innermost dimension
    for stage in ("sc_stage0", "sc_stage1", "sc_stage2"):
        assert f"{{  // {stage}" in source
    assert "double* __restrict__ sc_buf_0" in source
    assert "const double* __restrict__ p_inp" in source
    assert "sc_buf_" not in cpu_source(hdiff.PROGRAM, Materialization.RECOMPUTE)
    assert "sc_buf_" not in cpu_source(hdiff.PROGRAM)  # AUTO: recomputed
    assert "static void sc_call0_tiles" in cpu_source(expensive_program)


def innermost_loops(source: str) -> list[int]:
    """The line numbers (1-based) of the innermost loops of the kernel functions: loops
    whose body does not start with a loop (or with the index of a jammed loop, then its
    loops)."""
    lines = source.splitlines()
    found = []
    inside = False
    for n, line in enumerate(lines):
        if line.startswith("static void sc_call"):
            inside = True
        elif line == "}":
            inside = False
        elif inside and line.lstrip().startswith("for ("):
            following = lines[n + 1].lstrip()
            if not following.startswith(("for (", "std::int64_t i_")):
                found.append(n + 1)
    return found


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ for its vectorization report")
@pytest.mark.parametrize(
    ("program", "mode"),
    [
        (hdiff.PROGRAM, Materialization.AUTO),
        (hdiff.PROGRAM, Materialization.RECOMPUTE),
        (laplacian.PROGRAM, Materialization.AUTO),
    ],
    ids=["hdiff_tiled", "hdiff_inline", "laplacian"],
)
def test_every_innermost_loop_vectorizes(
    program: sc.Program, mode: Materialization, tmp_path: Path
) -> None:
    """GCC's report on the translation output, with the flags of the build's program unit:
    each kernel's innermost loop is vectorized (in its unit-stride instance)."""
    source = cpu_source(program, mode)
    path = tmp_path / "program.cpp"
    path.write_text(source)
    report = subprocess.run(
        ["g++", "-std=c++17", "-O3", "-fwrapv", *PROGRAM_UNIT_FLAGS, "-fopenmp",
         "-fopt-info-vec-optimized", "-c", str(path), "-o", str(tmp_path / "program.o")],
        capture_output=True, text=True, check=True,
    ).stderr  # fmt: skip
    vectorized = {
        int(m) for m in re.findall(r"program\.cpp:(\d+):\d+: optimized: loop vectorized", report)
    }
    loops = innermost_loops(source)
    assert loops
    # GCC names a loop by its header line or by the first statement of its body
    missing = [n for n in loops if n not in vectorized and n + 1 not in vectorized]
    assert not missing, f"not vectorized: lines {missing}\n{report}"


# --- results ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiled(session_cache_dir: Path) -> Any:
    """The GTFN CPU toolchain keeping every candidate in tiles (ALWAYS): even cheap stencils
    run tile by tile, so the tile edges are exercised."""
    container = build_container({}, cache_dir=session_cache_dir)
    container.gtfn.name.override("run_gtfn_cpu_tiled_always")
    override_step(
        container.gtfn.translation,
        functools.partial(make_gtfn_translation, materialization=Materialization.ALWAYS),
    )
    return container.gtfn.toolchain()


SHAPES = [
    (5, 5, 1),
    (7, 3, 2),
    (4, 4, 3),
    (70, 9, 3),
    (9, 70, 2),
    (37, 41, 5),
    (300, 6, 3),
    (4, 4, 0),
]


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_hdiff_in_tiles_equals_the_embedded_executor(
    gtfn_cpu: Any, tiled: Any, shape: tuple[int, ...], order: str
) -> None:
    rng = np.random.default_rng(sum(shape))
    inputs = {k: np.asarray(v, order=order) for k, v in hdiff.make_inputs(shape, rng).items()}
    expected = {k: v.copy() for k, v in inputs.items()}
    hdiff.PROGRAM(**expected)
    for toolchain in (gtfn_cpu, tiled):
        got = {k: v.copy(order="K") for k, v in inputs.items()}
        hdiff.PROGRAM.with_backend(toolchain)(**got)
        np.testing.assert_array_equal(got["out"], expected["out"])


@sc.field_operator
def lap2(f: F2) -> F2:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


@sc.field_operator
def biharmonic(f: F2, w: F2, alpha: sc.float64) -> F2:
    lap = lap2(f)
    bi = lap2(lap)
    return f - alpha * w * sc.where(bi > 0.0, bi, 0.5 * bi) + sc.math.sqrt(sc.math.abs(lap))


@sc.program
def biharmonic_program(f: F2, w: F2, out: F2, alpha: sc.float64) -> None:
    biharmonic(f, w, alpha, out=out)


@sc.field_operator
def int_stencil(a: FI) -> FI:
    s = a(I + 1) * 3 - a // 2
    return s(J - 1) + s(J + 1) - s


@sc.program
def int_program(a: FI, out: FI) -> None:
    int_stencil(a, out=out)


@sc.field_operator
def planes(f: F3, c: F2) -> F3:
    lap = 4.0 * f - f(I + 1) - f(I - 1) - f(J + 1) - f(J - 1)
    return c * (lap(I + 1) - lap(I - 1)) + lap(J + 1)


@sc.program
def planes_program(f: F3, c: F2, out: F3) -> None:
    planes(f, c, out=out)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [(3, 3), (6, 5), (67, 13), (13, 300), (0, 7)], ids=str)
def test_compound_2d_stencils_in_tiles_equal_the_embedded_executor(
    gtfn_cpu: Any, tiled: Any, shape: tuple[int, int], order: str
) -> None:
    rng = np.random.default_rng(7)
    f = np.asarray(rng.random(shape), order=order)
    w = np.asarray(rng.random(shape), order=order)
    a = np.asarray(rng.integers(-1000, 1000, shape), order=order)
    cases = [
        (
            biharmonic_program,
            lambda: [f.copy(order="K"), w.copy(order="K"), np.zeros_like(f), 0.25],
            2,
        ),
        (int_program, lambda: [a.copy(order="K"), np.zeros_like(a)], 1),
    ]
    for program, make, out in cases:
        expected = make()
        program(*expected)
        for toolchain in (gtfn_cpu, tiled):
            got = make()
            program.with_backend(toolchain)(*got)
            np.testing.assert_array_equal(got[out], expected[out], err_msg=program.ir.name)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [(3, 3, 1), (40, 7, 3), (6, 300, 2)], ids=str)
def test_kept_math_functions_equal_the_embedded_executor(
    gtfn_cpu: Any, shape: tuple[int, int, int], order: str
) -> None:
    """Tiled by the default toolchain (AUTO keeps the math functions). C's exp and sin
    may differ from NumPy's in the last bit, inline as in tiles."""
    f = np.asarray(np.random.default_rng(5).random(shape), order=order)
    expected = np.zeros_like(f)
    expensive_program(f, expected)
    got = np.zeros_like(f)
    expensive_program.with_backend(gtfn_cpu)(f, got)
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_broadcast_coefficient_in_tiles_equals_the_embedded_executor(
    gtfn_cpu: Any, tiled: Any, order: str
) -> None:
    rng = np.random.default_rng(3)
    f = np.asarray(rng.random((23, 19, 4)), order=order)
    c = np.asarray(rng.random((23, 19)), order=order)
    expected = np.zeros_like(f)
    planes_program(f, c, expected)
    assert plan_of(planes_program, Materialization.ALWAYS) is not None
    for toolchain in (gtfn_cpu, tiled):
        got = np.zeros_like(f)
        planes_program.with_backend(toolchain)(f, c, got)
        np.testing.assert_array_equal(got, expected)
