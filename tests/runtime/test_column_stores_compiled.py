"""Column solves where the scans' axis is the arrays' fastest dimension (C order): GTFN's
chains and DaCe's scans on the CPU store what the scans write level-major into buffers of
the block and write them to the arrays column by column after the block (`sc_store_columns`
in steps/cpp/columns.h, ADR 0055 and 0060). Results equal the embedded executor's bit for
bit on both families: tiles of 8 columns x 8 levels and the columns and levels left over,
blocks narrower than a tile, a team of threads, levels in reverse (stride -1) or strided, a
window of the domain, float32 (the generic copy), ICON's (Cell, K) with 65 levels, and
Fortran order (no staging), against an independent NumPy Thomas solve too."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.examples import tridiagonal
from stencilchain.program.device import Device
from stencilchain.steps.gtfn.translation import GTFNTranslationStep

I, J, K = tridiagonal.I, tridiagonal.J, tridiagonal.K
F3_32 = sc.Field[[I, J, K], sc.float32]
F3 = sc.Field[[I, J, K], sc.float64]
Cell = sc.Dimension("Cell")
CellK = sc.Field[[Cell, K], sc.float64]


@sc.scan_operator(axis=K, forward=True, init=(np.float32(0.0), np.float32(0.0)))
def forward_32(state, a: F3_32, b: F3_32, c: F3_32, d: F3_32):  # type: ignore[no-untyped-def]
    c_below, d_below = state
    denominator = b - a * c_below
    return c / denominator, (d - a * d_below) / denominator


@sc.scan_operator(axis=K, forward=False, init=np.float32(0.0))
def backward_32(x_above, c_prime: F3_32, d_prime: F3_32):  # type: ignore[no-untyped-def]
    return d_prime - c_prime * x_above


@sc.program
def solve_32(a: F3_32, b: F3_32, c: F3_32, d: F3_32, x: F3_32) -> None:
    c_prime, d_prime = forward_32(a, b, c, d)
    backward_32(c_prime, d_prime, out=x)


@sc.program
def solve_window(a: F3, b: F3, c: F3, d: F3, x: F3) -> None:
    c_prime, d_prime = tridiagonal.thomas_forward(a, b, c, d, domain={J: (2, -3), K: (1, -1)})
    tridiagonal.thomas_backward(c_prime, d_prime, out=x, domain={J: (2, -3), K: (1, -1)})


@sc.scan_operator(axis=K, forward=True, init=0.0)
def running_sum(total, f: F3):  # type: ignore[no-untyped-def]
    return total + f


@sc.field_operator
def doubled_sum(f: F3) -> F3:
    return running_sum(f) * 2.0  # type: ignore[no-any-return]


@sc.program
def sum_then_double(f: F3, out: F3) -> None:
    doubled_sum(f, out=out)


@sc.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def cell_forward(state, a: CellK, b: CellK, c: CellK, d: CellK):  # type: ignore[no-untyped-def]
    c_below, d_below = state
    denominator = b - a * c_below
    return c / denominator, (d - a * d_below) / denominator


@sc.scan_operator(axis=K, forward=False, init=0.0)
def cell_backward(x_above, c_prime: CellK, d_prime: CellK):  # type: ignore[no-untyped-def]
    return d_prime - c_prime * x_above


@sc.program
def cell_solve(a: CellK, b: CellK, c: CellK, d: CellK, x: CellK) -> None:
    c_prime, d_prime = cell_forward(a, b, c, d)
    cell_backward(c_prime, d_prime, out=x)


@pytest.fixture(params=["gtfn_cpu", "dace_cpu"])
def toolchain(request: pytest.FixtureRequest) -> Any:
    """Each family's CPU toolchain on the session cache (DaCe's skips without the extra)."""
    return request.getfixturevalue(request.param)


def _inputs(shape: tuple[int, int, int], seed: int) -> dict[str, np.ndarray]:
    made = tridiagonal.make_inputs(shape, np.random.default_rng(seed))
    return {k: np.asarray(v) for k, v in made.items()}


def _run_both(
    program: sc.Program, inputs: dict[str, np.ndarray], toolchain: Any, layout: Any
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    embedded = {k: layout(v) for k, v in inputs.items()}
    compiled = {k: layout(v) for k, v in inputs.items()}
    program(**embedded)
    program.with_backend(toolchain)(**compiled)
    return embedded, compiled


@pytest.mark.parametrize(
    "shape",
    [
        (2, 70, 19),  # a block of 64 columns (8 tiles) and one of 6; 2 tiles of levels and 3
        (1, 16, 24),  # whole tiles only
        (3, 5, 7),  # fewer columns and levels than a tile
        (4, 200, 83),  # 66,400 points: on a team of two threads, per-thread buffers
    ],
)
def test_c_order_equals_the_embedded_executor(shape: tuple[int, int, int], toolchain: Any) -> None:
    inputs = _inputs(shape, sum(shape))
    embedded, compiled = _run_both(tridiagonal.PROGRAM, inputs, toolchain, np.ascontiguousarray)
    assert np.any(compiled["x"] != 0.0)
    np.testing.assert_array_equal(compiled["x"], embedded["x"])
    expected = tridiagonal.reference(**inputs)["x"]
    np.testing.assert_allclose(compiled["x"], expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    "layout",
    [
        pytest.param(lambda v: np.ascontiguousarray(v[..., ::-1])[..., ::-1], id="levels-reversed"),
        pytest.param(lambda v: np.repeat(v, 2, axis=2)[..., ::2], id="levels-strided"),
        pytest.param(np.asfortranarray, id="fortran"),
    ],
)
def test_other_level_strides_equal_the_embedded_executor(layout: Any, toolchain: Any) -> None:
    inputs = _inputs((2, 70, 19), 7)
    embedded, compiled = _run_both(tridiagonal.PROGRAM, inputs, toolchain, layout)
    np.testing.assert_array_equal(compiled["x"], embedded["x"])
    np.testing.assert_allclose(compiled["x"], tridiagonal.reference(**inputs)["x"], rtol=1e-12)


def test_a_window_writes_only_inside(toolchain: Any) -> None:
    inputs = _inputs((2, 70, 19), 11)
    inputs["x"] = np.full((2, 70, 19), -7.0)
    embedded, compiled = _run_both(solve_window, inputs, toolchain, np.ascontiguousarray)
    np.testing.assert_array_equal(compiled["x"], embedded["x"])
    assert np.all(compiled["x"][:, :2] == -7.0) and np.all(compiled["x"][:, -3:] == -7.0)
    assert np.all(compiled["x"][..., 0] == -7.0) and np.all(compiled["x"][..., -1] == -7.0)
    assert np.all(compiled["x"][:, 2:-3, 1:-1] != -7.0)


def test_float32_equals_the_embedded_executor(toolchain: Any) -> None:
    inputs = {k: v.astype(np.float32) for k, v in _inputs((2, 70, 19), 3).items()}
    embedded, compiled = _run_both(solve_32, inputs, toolchain, np.ascontiguousarray)
    assert np.any(compiled["x"] != 0.0)
    np.testing.assert_array_equal(compiled["x"], embedded["x"])


@pytest.mark.parametrize("order", ["C", "F"])
def test_cells_and_65_levels_equal_the_embedded_executor(order: str, toolchain: Any) -> None:
    """ICON's column: 65 levels (8 tiles and one level left over, the columns' lines not
    aligned), 1,000 cells (15 blocks of 64 and one of 40)."""
    made = tridiagonal.make_inputs((1000, 65), np.random.default_rng(13))
    inputs = {k: np.asarray(v) for k, v in made.items()}
    layout = np.ascontiguousarray if order == "C" else np.asfortranarray
    embedded, compiled = _run_both(cell_solve, inputs, toolchain, layout)
    assert np.any(compiled["x"] != 0.0)
    np.testing.assert_array_equal(compiled["x"], embedded["x"])
    expected = tridiagonal.reference(**{k: v[:, None] for k, v in inputs.items()})["x"][:, 0]
    np.testing.assert_allclose(compiled["x"], expected, rtol=1e-12, atol=1e-14)


def test_the_chain_stages_what_it_writes_not_what_it_reads() -> None:
    """The output of the tridiagonal chain is staged (and written by sc_store_columns); the
    temporaries between its scans stay the chain's buffers, stored by no column copy."""
    source = GTFNTranslationStep(device=Device.CPU)(tridiagonal.PROGRAM.ir).source_code
    assert "sc_buf_x[(i_K - sc_start_K) * sc_width + sc_b] = sc_new0;" in source
    assert source.count("sc_store_columns(sc_buf_x, sc_width,") == 2  # one per column order
    assert "sc_store_columns(sc_buf_tmp" not in source


def test_what_a_field_operator_of_the_chain_writes_is_stored_as_before(gtfn_cpu: Any) -> None:
    """The scan and the field operator doubling its result are one chain; the field
    operator's output is stored in place (staging it measured slower, ADR 0055), and the
    result equals the embedded executor's."""
    source = GTFNTranslationStep(device=Device.CPU)(sum_then_double.ir).source_code
    assert "column by column" in source
    assert "sc_store_columns(sc_buf_" not in source
    rng = np.random.default_rng(5)
    inputs = {"f": rng.uniform(0.5, 1.5, (2, 70, 19)), "out": np.zeros((2, 70, 19))}
    embedded, compiled = _run_both(sum_then_double, inputs, gtfn_cpu, np.ascontiguousarray)
    assert np.any(compiled["out"] != 0.0)
    np.testing.assert_array_equal(compiled["out"], embedded["out"])
