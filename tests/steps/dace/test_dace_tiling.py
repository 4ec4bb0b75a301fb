"""Tiled compound stencils on the DaCe CPU toolchain (stencilchain.steps.dace.tiling):
which intermediates are materialized (hdiff's are recomputed, math read at several points
is kept), that the auto-optimized SDFG has the tiled structure (and the plain one has not),
and that the results stay those of the embedded executor at tile edges: domains that are
not a multiple of the tile, tiny and empty domains, C and Fortran order.

Compiles: hdiff, hdiff_staged and a Laplacian of square roots once per toolchain
(auto-optimized; plain), and small 2-D programs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

dace = pytest.importorskip("dace")

import stencilchain as sc  # noqa: E402
from stencilchain.examples import hdiff, hdiff_staged  # noqa: E402
from stencilchain.program.device import Device  # noqa: E402
from stencilchain.program.transforms import inline_calls  # noqa: E402
from stencilchain.steps.dace.tiled_maps import STACK_BYTES, TILE_INNER, TILE_OUTER  # noqa: E402
from stencilchain.steps.dace.tiling import plan_tiles  # noqa: E402
from stencilchain.steps.dace.translator import DaCeTranslator  # noqa: E402

I, J, K = hdiff.I, hdiff.J, hdiff.K
F2 = sc.Field[[I, J], sc.float64]
F3 = hdiff.Field3D


@sc.field_operator
def _roots(f: F3) -> F3:
    return sc.math.sqrt(f) * sc.math.sqrt(f + 1.0)  # two math functions: worth a buffer


@sc.field_operator
def _lap_of_roots(f: F3) -> F3:
    r = _roots(f)
    return -4.0 * r + r(I - 1) + r(I + 1) + r(J - 1) + r(J + 1)


@sc.program
def lap_of_roots(f: F3, out: F3) -> None:
    _lap_of_roots(f, out=out)


class _LapOfRoots:
    """`lap_of_roots` in the shape of an example module, for the tile-edge test."""

    PROGRAM = lap_of_roots

    @staticmethod
    def make_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {"f": rng.random(shape), "out": np.zeros(shape)}

    @staticmethod
    def reference(**args: np.ndarray) -> dict[str, np.ndarray]:
        lap_of_roots(**args)  # embedded
        return args


@sc.field_operator
def _smooth(f: F2) -> F2:
    return 0.5 * sc.math.sqrt(f) + 0.125 * (f(I - 1) + f(I + 1) + f(J - 1) + f(J + 1))


@sc.field_operator
def _smooth_twice(f: F2, g: F2) -> tuple[F2, F2]:
    s = _smooth(f)
    t = _smooth(s)
    return t + g, sc.where(s > 0.5, t, -s)


@sc.program
def smooth_twice(f: F2, g: F2, out: F2, out2: F2) -> None:
    _smooth_twice(f, g, out=(out, out2))


def _body(program: Any) -> Any:
    ir_program = program.ir
    fops = {f.name: f for f in ir_program.field_operators}
    return inline_calls(fops[ir_program.calls[0].callee].body, fops)


def _sdfg(program: Any, auto_optimize: bool) -> Any:
    return DaCeTranslator(device=Device.CPU, auto_optimize=auto_optimize).build_sdfg(program.ir)


def test_hdiff_recomputes_its_laplacian_and_fluxes() -> None:
    """Arithmetic this cheap costs less recomputed (ADR 0053); kept only with keep_all."""
    assert plan_tiles(_body(hdiff.hdiff_program), (I, J, K), "p_") is None
    plan = plan_tiles(_body(hdiff.hdiff_program), (I, J, K), "p_", keep_all=True)
    assert plan is not None
    boxes = [(s.low, s.high) for s in plan.stages]
    # the Laplacian first (read by both fluxes), on the tile plus one point each side in
    # I and J; the x flux one point below in I, the y flux one below in J
    assert boxes == [((-1, -1, 0), (1, 1, 0)), ((-1, 0, 0), (0, 0, 0)), ((0, -1, 0), (0, 0, 0))]
    assert [s.name for s in plan.stages] == ["p_buf0", "p_buf1", "p_buf2"]


def test_a_pointwise_or_single_offset_body_is_not_tiled() -> None:
    from stencilchain.examples import laplacian

    assert plan_tiles(_body(laplacian.PROGRAM), (I, J), "p_", keep_all=True) is None
    assert plan_tiles(_body(hdiff_staged.PROGRAM), (I, J, K), "p_", keep_all=True) is None


def test_math_read_at_five_points_is_materialized() -> None:
    plan = plan_tiles(_body(lap_of_roots), (I, J, K), "p_")
    assert plan is not None
    assert [(s.low, s.high) for s in plan.stages] == [((-1, -1, 0), (1, 1, 0))]


def _maps_and_buffers(sdfg: Any) -> tuple[list[Any], list[Any]]:
    from dace.sdfg import nodes

    maps, buffers = [], []
    for node, parent in sdfg.all_nodes_recursive():
        if isinstance(node, nodes.MapEntry):
            maps.append(node.map)
        elif isinstance(node, nodes.AccessNode) and node.desc(parent).transient:
            buffers.append(node.desc(parent))
    return maps, buffers


def test_auto_optimized_hdiff_is_one_pointwise_map_per_loop_order() -> None:
    maps, buffers = _maps_and_buffers(_sdfg(hdiff.hdiff_program, auto_optimize=True))
    assert buffers == []
    assert len(maps) == 3
    assert all(m.schedule == dace.ScheduleType.CPU_Multicore for m in maps)


def test_auto_optimized_compound_stencil_is_tiled_with_buffers_on_the_stack() -> None:
    maps, buffers = _maps_and_buffers(_sdfg(lap_of_roots, auto_optimize=True))
    tile_maps = [m for m in maps if m.schedule == dace.ScheduleType.CPU_Multicore]
    # one parallel map over tiles per loop order (I, J or K innermost)
    assert len(tile_maps) == 3
    for m in tile_maps:
        steps = [int(step) for (_, _, step) in m.range.ranges]
        # the innermost tile is halved (K innermost) to fit the buffers on the stack
        assert steps[:2] == [TILE_OUTER, TILE_OUTER]
        assert steps[2] in (TILE_INNER, TILE_INNER // 2)
    stage_maps = [m for m in maps if m.schedule == dace.ScheduleType.Sequential]
    assert len(stage_maps) == 3 * 2  # the buffer and the output, per loop order
    assert len(buffers) == 3
    for desc in buffers:
        assert desc.storage == dace.StorageType.Register
        assert all(isinstance(s, int) or s.is_Integer for s in desc.shape)
        assert int(desc.total_size) * desc.dtype.bytes <= STACK_BYTES
        # the innermost dimension of its loop order is contiguous
        assert 1 in [int(s) for s in desc.strides]


def test_plain_hdiff_is_one_pointwise_map_per_loop_order() -> None:
    maps, buffers = _maps_and_buffers(_sdfg(hdiff.hdiff_program, auto_optimize=False))
    assert buffers == []
    assert len(maps) == 3
    assert all(len(m.params) == 3 and "tile" not in " ".join(m.params) for m in maps)


SHAPES = [
    (5, 5, 1),  # one point of output
    (7, 3, 2),  # an empty domain along J
    (4, 9, 3),  # an empty domain along I
    (0, 0, 0),
    (13, 11, TILE_INNER + 5),  # a partial tile along each dimension
    (TILE_INNER + 7, 2 * TILE_OUTER + 7, 3),
    (2 * TILE_OUTER + 4, TILE_INNER + 4, TILE_OUTER + 1),
]


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("toolchain", ["dace_cpu", "dace_cpu_noopt"])
@pytest.mark.parametrize(
    "module", [hdiff, hdiff_staged, _LapOfRoots], ids=["hdiff", "hdiff_staged", "lap_of_roots"]
)
def test_compound_stencils_at_tile_edges(
    module: Any,
    toolchain: str,
    shape: tuple[int, int, int],
    order: str,
    request: pytest.FixtureRequest,
) -> None:
    backend = request.getfixturevalue(toolchain)
    rng = np.random.default_rng(sum(shape))
    args = {k: np.asarray(v, order=order) for k, v in module.make_inputs(shape, rng).items()}
    args["out"][...] = -1.0  # untouched outside the domain
    expected = module.reference(**{k: v.copy() for k, v in args.items()})["out"]
    module.PROGRAM.with_backend(backend)(**args)
    np.testing.assert_array_equal(args["out"], expected)


def test_staged_hdiff_fuses_its_temporaries_under_auto_optimize_only() -> None:
    """The three temporaries are fused into the last call, which recomputes them as hdiff
    does (no whole-array transient, no map for the calls that made them); the plain SDFG
    keeps them, and so does an auto-optimized one whose temporaries live in the caller's
    workspace."""
    maps, buffers = _maps_and_buffers(_sdfg(hdiff_staged.PROGRAM, auto_optimize=True))
    assert buffers == []
    assert len(maps) == 3 and all(m.label.startswith("call3_hdiff_apply") for m in maps)
    plain = DaCeTranslator(device=Device.CPU, auto_optimize=False).build_sdfg(
        hdiff_staged.PROGRAM.ir
    )
    workspace = DaCeTranslator(device=Device.CPU, external_workspace=True).build_sdfg(
        hdiff_staged.PROGRAM.ir
    )
    for sdfg in (plain, workspace):
        temporaries = {t.name for t in hdiff_staged.PROGRAM.ir.temporaries}
        assert temporaries <= {k for k, d in sdfg.arrays.items() if d.transient}


@sc.field_operator
def _lap2(f: F2) -> F2:
    return -4.0 * f + f(I - 1) + f(I + 1) + f(J - 1) + f(J + 1)


@sc.field_operator
def _copy2(f: F2) -> F2:
    return f


@sc.program
def overwrites_an_input(f: F2, g: F2, out: F2) -> None:
    t = _lap2(f)
    _copy2(g, out=f)  # the fused reads of f in the next call would see g
    _lap2(t, out=out)


def test_temporaries_are_not_fused_when_a_call_writes_what_a_call_reads() -> None:
    from stencilchain.steps.dace.tiling import fuse_temporaries

    program = overwrites_an_input.ir
    assert fuse_temporaries(program, {}) is None
    sdfg = _sdfg(overwrites_an_input, auto_optimize=True)
    assert program.temporaries[0].name in sdfg.arrays


def test_an_overwritten_input_keeps_its_old_values_for_the_temporary(dace_cpu: Any) -> None:
    rng = np.random.default_rng(3)
    f, g = rng.random((12, 10)), rng.random((12, 10))
    out = np.zeros_like(f)
    want_f, want_out = f.copy(), out.copy()
    overwrites_an_input(want_f, g, want_out)  # embedded
    overwrites_an_input.with_backend(dace_cpu)(f, g, out)
    np.testing.assert_array_equal(f, want_f)
    np.testing.assert_allclose(out, want_out, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [(3, 3), (5, 4), (TILE_INNER + 9, TILE_OUTER + 3), (1, 1)])
def test_tuple_outputs_and_nested_stages_at_tile_edges(
    shape: tuple[int, int], order: str, dace_cpu: Any
) -> None:
    plan = plan_tiles(_body(smooth_twice), (I, J), "p_")
    assert plan is not None and len(plan.stages) >= 1
    rng = np.random.default_rng(1)
    f, g = (np.asarray(rng.random(shape), order=order) for _ in range(2))
    outs = [np.full(shape, -1.0, order=order) for _ in range(2)]
    expected = [o.copy() for o in outs]
    smooth_twice(f, g, *expected)  # embedded
    smooth_twice.with_backend(dace_cpu)(f, g, *outs)
    for got, want in zip(outs, expected):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)
