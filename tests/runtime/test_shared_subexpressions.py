"""Shared sub-expressions (docs/adr/0056): a scan and a field operator whose value is
updated from itself forty times, each update reading the previous value more than once,
so that their IR is a few hundred nodes as a DAG and more than 2**40 written out as a
tree. They are traced, fingerprinted, run by the embedded executor and by every CPU
toolchain in both layouts, against NumPy references written here."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.containers import build_container
from stencilchain.program import ir_walk

I, K = sc.Dimension("I"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]
STEPS = 40
TOOLCHAINS = ["embedded", "gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu"]


def make_scan_program() -> sc.Program:
    """A scan whose state goes through forty joined `if`s, each branch reading it twice
    (a new program object each time: the same program)."""

    @sc.scan_operator(axis=K, forward=True, init=0.0)
    def settle(state, f: F, limit: sc.float64):  # type: ignore[no-untyped-def]
        y = state * 0.5 + f
        for j in range(STEPS):
            if y > limit * (j + 1):  # noqa: SIM108 (the statement form is what this tests)
                y = y - y * 0.125
            else:
                y = y + y * f * 0.0625
        return y

    @sc.program
    def run_scan(f: F, limit: sc.float64, out: F) -> None:
        settle(f, limit, out=out)

    return run_scan


def scan_reference(f: np.ndarray, limit: float) -> np.ndarray:
    out = np.empty_like(f)
    for i in range(f.shape[0]):
        state = 0.0
        for k in range(f.shape[1]):
            y = state * 0.5 + f[i, k]
            for j in range(STEPS):
                if y > limit * (j + 1):  # noqa: SIM108 (as the scan writes it)
                    y = y - y * 0.125
                else:
                    y = y + y * f[i, k] * 0.0625
            out[i, k] = state = y
    return out


def make_field_program() -> sc.Program:
    """A field operator whose value goes through forty `sc.where`s, each reading it three
    times, with a shifted read in every condition."""

    @sc.field_operator
    def smooth(f: F, g: F) -> F:
        y = f
        for j in range(STEPS):
            y = sc.where(y > f(I + 1) * (0.05 * j), y * 0.75 + g, y * y * 0.5 - g)
        return y

    @sc.program
    def run_field(f: F, g: F, out: F) -> None:
        smooth(f, g, out=out, domain={I: (0, -1)})

    return run_field


def field_reference(f: np.ndarray, g: np.ndarray) -> np.ndarray:
    here, right, gg = f[:-1], f[1:], g[:-1]
    y = here
    for j in range(STEPS):
        y = np.where(y > right * (0.05 * j), y * 0.75 + gg, y * y * 0.5 - gg)
    return y


def test_the_ir_is_small_as_a_dag_and_its_fingerprint_is_the_same_for_equal_programs() -> None:
    for make in (make_scan_program, make_field_program, make_branch_program):
        first, second = make(), make()
        bodies = [
            *(fop.body for fop in first.ir.field_operators),
            *(e for scan in first.ir.scan_operators for e in scan.body),
        ]
        distinct = sum(1 for body in bodies for _ in ir_walk.nodes(body))
        as_tree = sum(ir_walk.node_count(body) for body in bodies)
        assert distinct < 2_000
        assert as_tree > 2**STEPS
        assert first.ir == second.ir
        assert hash(first.ir) == hash(second.ir)
        assert first.ir.canonical == second.ir.canonical
        assert first.fingerprint() == second.fingerprint()
        assert len(first.ir.canonical) < 200_000


def _arrays(layout: str, *arrays: np.ndarray) -> list[np.ndarray]:
    return [np.asfortranarray(a) if layout == "F" else np.ascontiguousarray(a) for a in arrays]


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("toolchain_name", TOOLCHAINS)
def test_a_scan_updating_its_state_from_itself_forty_times(
    toolchain_name: str, layout: str, request: pytest.FixtureRequest
) -> None:
    program: Any = make_scan_program()
    if toolchain_name != "embedded":
        program = program.with_backend(request.getfixturevalue(toolchain_name))
    rng = np.random.default_rng(21)
    for limit in (0.05, 0.4, 3.0):
        f, out = _arrays(layout, rng.uniform(0.0, 2.0, (6, 9)), np.zeros((6, 9)))
        program(f, limit, out)
        np.testing.assert_array_equal(out, scan_reference(f, limit))


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("toolchain_name", TOOLCHAINS)
def test_a_field_operator_updating_a_value_from_itself_forty_times(
    toolchain_name: str, layout: str, request: pytest.FixtureRequest
) -> None:
    program: Any = make_field_program()
    if toolchain_name != "embedded":
        program = program.with_backend(request.getfixturevalue(toolchain_name))
    rng = np.random.default_rng(22)
    f, g = rng.uniform(-1.0, 1.0, (7, 5)), rng.uniform(-0.5, 0.5, (7, 5))
    f, g, out = _arrays(layout, f, g, np.zeros((7, 5)))
    program(f, g, out)
    want = field_reference(f, g)
    np.testing.assert_array_equal(out[:-1], want)
    np.testing.assert_array_equal(out[-1], 0.0)
    assert len(np.unique(np.round(want, 6))) > 10


def make_branch_program() -> sc.Program:
    """A field operator whose value goes through forty joined `if`s on a scalar parameter
    (run-time branches in the generated code), both sides reading it."""

    @sc.field_operator
    def branchy(f: F, alpha: sc.float64) -> F:
        y = f
        for j in range(STEPS):
            if alpha > 0.1 * j:  # noqa: SIM108 (the statement form is what this tests)
                y = y * 0.5 + y
            else:
                y = y - y * 0.25
        return y

    @sc.program
    def run_branches(f: F, alpha: sc.float64, out: F) -> None:
        branchy(f, alpha, out=out)

    return run_branches


@pytest.mark.parametrize("toolchain_name", TOOLCHAINS)
def test_forty_ifs_on_a_scalar_parameter_each_side_reading_the_value(
    toolchain_name: str, request: pytest.FixtureRequest
) -> None:
    program: Any = make_branch_program()
    if toolchain_name != "embedded":
        program = program.with_backend(request.getfixturevalue(toolchain_name))
    f = np.random.default_rng(23).uniform(0.0, 1.0, (4, 3))
    for alpha in (-1.0, 0.55, 2.05):
        out = np.zeros_like(f)
        program(f, alpha, out)
        want = f.copy()
        for j in range(STEPS):
            want = want * 0.5 + want if alpha > 0.1 * j else want - want * 0.25
        np.testing.assert_array_equal(out, want)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.slow
@pytest.mark.parametrize("family", ["gtfn", "dace"])
@pytest.mark.parametrize("make", [make_scan_program, make_field_program, make_branch_program])
def test_cuda_sources_of_shared_sub_expressions_build(
    family: str, make: Any, session_cache_dir: Path
) -> None:
    if family == "dace":
        pytest.importorskip("dace")
    toolchain = getattr(build_container({}, cache_dir=session_cache_dir, device="gpu"), family)
    compiled = toolchain.toolchain().compile(make())
    assert compiled.artifact.module_path.is_file()
