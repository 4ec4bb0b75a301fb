"""Unroll-and-jam of the GTFN CPU loop nests (`plan_jam` in steps/gtfn/tiling.py, the loops in
steps/gtfn/loops.py): which calls the planner jams, along which loop and by how much, how it
shows in the source, and results identical to the embedded executor where the jammed loop
has points left over (0, 1 or 2 of a factor 3), in both layouts, in 2-D and 3-D."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.containers import build_container, make_gtfn_translation, override_step
from stencilchain.examples import hdiff, laplacian
from stencilchain.program.call_bodies import call_body
from stencilchain.program.device import Device
from stencilchain.program.offsets import evaluation_offsets
from stencilchain.program.transforms import transform_program
from stencilchain.steps.gtfn.tiling import (
    JAM_STREAMS,
    Jam,
    Materialization,
    plan_jam,
    streams,
)
from stencilchain.steps.gtfn.translation import GTFNTranslationStep

I, J, K = hdiff.I, hdiff.J, hdiff.K
F2 = sc.Field[[I, J], sc.float64]


def body_of(program: sc.Program) -> tuple[Any, tuple[sc.Dimension, ...]]:
    """The inlined body of the program's only call and its domain's dimensions."""
    transformed = transform_program(program.ir)
    (call,) = transformed.calls
    fop = {f.name: f for f in transformed.field_operators}[call.callee]
    return call_body(fop, call.args), tuple(dd.dim for dd in call.domain.dims)


def jam_of(
    program: sc.Program, inner: int, mode: Materialization = Materialization.AUTO
) -> Jam | None:
    body, dims = body_of(program)
    return plan_jam(body, dims, inner, mode, 1)


@sc.field_operator
def hdiff_2d(inp: F2, coeff: F2) -> F2:
    """hdiff on one level: fields over [I, J] only."""
    lap = 4.0 * inp - (inp(I - 1) + inp(I + 1) + inp(J - 1) + inp(J + 1))
    flx = lap(I + 1) - lap
    flx = sc.where(flx * (inp(I + 1) - inp) > 0.0, 0.0, flx)
    fly = lap(J + 1) - lap
    fly = sc.where(fly * (inp(J + 1) - inp) > 0.0, 0.0, fly)
    return inp - coeff * (flx - flx(I - 1) + fly - fly(J - 1))


@sc.program
def hdiff_2d_program(inp: F2, coeff: F2, out: F2) -> None:
    hdiff_2d(inp, coeff, out=out)


# --- the planner ------------------------------------------------------------------------------


def test_hdiff_in_fortran_order_is_jammed_by_three_along_j() -> None:
    """I innermost: the loops run K, J, I; jamming K shares nothing, so J, by the factor
    of least work within the streams (J - 2 .. J + 4 of inp, 3 of coeff and out: 13)."""
    jam = jam_of(hdiff.PROGRAM, inner=0)
    assert jam is not None
    assert (jam.dim, jam.factor) == (J, 3)
    assert jam.cost < jam.alone
    body, dims = body_of(hdiff.PROGRAM)
    at = evaluation_offsets(body, dims)
    assert streams(at, dims, 0, 1, 3) + 3 == 13
    assert streams(at, dims, 0, 1, 4) + 4 > JAM_STREAMS


def test_hdiff_in_c_order_is_not_jammed() -> None:
    """K innermost: every read of inp at its own (I, J) offset is a stream of its own, 13
    of them with coeff and out 15 already, beyond `JAM_STREAMS` for any factor."""
    body, dims = body_of(hdiff.PROGRAM)
    at = evaluation_offsets(body, dims)
    assert streams(at, dims, 2, 0, 1) + 1 > JAM_STREAMS
    assert jam_of(hdiff.PROGRAM, inner=2) is None


def test_a_plain_laplacian_and_recompute_are_not_jammed() -> None:
    """A Laplacian shares only reads (too little of its work); RECOMPUTE jams nothing."""
    assert jam_of(laplacian.PROGRAM, inner=0) is None
    assert jam_of(laplacian.PROGRAM, inner=1) is None
    assert jam_of(hdiff.PROGRAM, inner=0, mode=Materialization.RECOMPUTE) is None


def test_2d_hdiff_is_jammed_along_its_outermost_loop() -> None:
    for inner, outer in ((1, I), (0, J)):
        jam = jam_of(hdiff_2d_program, inner=inner)
        assert jam is not None
        assert jam.dim == outer


# --- the generated code -----------------------------------------------------------------------


def cpu_source(program: sc.Program, mode: Materialization = Materialization.AUTO) -> str:
    return GTFNTranslationStep(Device.CPU, materialization=mode)(program.ir).source_code


def test_the_jam_shows_in_the_source() -> None:
    source = cpu_source(hdiff.PROGRAM)
    assert "// call 0 (hdiff), I innermost, 3 points along J per iteration" in source
    assert "// call 0 (hdiff), K innermost\n" in source
    assert "for (; i_J + 2 < sc_stop_J; i_J += 3) {" in source
    # one store per point of an iteration, and one in the loop of the points left over
    assert source.count("p_out[i_I * (sc_unit ? 1 : s0_out) + i_J * s1_out") == 2
    assert source.count("p_out[i_I * (sc_unit ? 1 : s0_out) + (i_J + (2)) * s1_out") == 1
    inline = cpu_source(hdiff.PROGRAM, Materialization.RECOMPUTE)
    assert "per iteration" not in inline
    assert "i_J += " not in inline


# --- results ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recomputed(session_cache_dir: Path) -> Any:
    """The GTFN CPU toolchain under RECOMPUTE: one point per iteration."""
    container = build_container({}, cache_dir=session_cache_dir)
    container.gtfn.name.override("run_gtfn_cpu_recompute_for_jam")
    override_step(
        container.gtfn.translation,
        functools.partial(make_gtfn_translation, materialization=Materialization.RECOMPUTE),
    )
    return container.gtfn.toolchain()


# the extents along the jammed loop (the shape less 4): 1, 2, 3 and 4 points, and 31
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize(
    "shape", [(6, 5, 2), (5, 5, 1), (7, 6, 3), (6, 7, 2), (9, 8, 2), (35, 35, 3)], ids=str
)
def test_jammed_hdiff_equals_the_embedded_executor(
    gtfn_cpu: Any, recomputed: Any, shape: tuple[int, int, int], order: str
) -> None:
    rng = np.random.default_rng(sum(shape))
    inputs = {k: np.asarray(v, order=order) for k, v in hdiff.make_inputs(shape, rng).items()}
    expected = {k: v.copy() for k, v in inputs.items()}
    hdiff.PROGRAM(**expected)
    for toolchain in (gtfn_cpu, recomputed):
        got = {k: v.copy(order="K") for k, v in inputs.items()}
        hdiff.PROGRAM.with_backend(toolchain)(**got)
        np.testing.assert_array_equal(got["out"], expected["out"])


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [(5, 9), (5, 5), (6, 7), (7, 6), (8, 8), (301, 300)], ids=str)
def test_jammed_2d_hdiff_equals_the_embedded_executor(
    gtfn_cpu: Any, shape: tuple[int, int], order: str
) -> None:
    """In 2-D the jammed loop is the outermost, each thread's share of it (over 65536
    points the work is split between threads)."""
    rng = np.random.default_rng(11)
    inp = np.asarray(rng.random(shape), order=order)
    coeff = np.asarray(0.025 * rng.random(shape), order=order)
    expected = np.zeros_like(inp)
    hdiff_2d_program(inp, coeff, expected)
    got = np.zeros_like(inp)
    hdiff_2d_program.with_backend(gtfn_cpu)(inp, coeff, got)
    np.testing.assert_array_equal(got, expected)


def test_jammed_hdiff_on_strided_views_equals_the_embedded_executor(gtfn_cpu: Any) -> None:
    """Every other point along I of Fortran-order arrays: the jammed kernel's instance for
    any strides (not unit stride along the innermost dimension)."""
    rng = np.random.default_rng(5)
    made = hdiff.make_inputs((26, 14, 3), rng)  # J: 10 points, 3 jammed iterations and 1
    inputs = {k: np.asfortranarray(v)[::2] for k, v in made.items()}
    assert inputs["inp"].strides[0] == 16
    expected = {k: v.copy() for k, v in inputs.items()}
    hdiff.PROGRAM(**expected)
    hdiff.PROGRAM.with_backend(gtfn_cpu)(**inputs)
    np.testing.assert_array_equal(inputs["out"], expected["out"])
