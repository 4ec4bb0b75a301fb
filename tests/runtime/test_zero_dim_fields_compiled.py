"""Zero-dimensional fields on every CPU toolchain (GTFN with and without transforms, DaCe
with and without auto-optimize), against the embedded executor and NumPy; their CUDA
sources build with nvcc."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.containers import build_container
from tests.program import test_zero_dim_fields as cases

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


@pytest.mark.parametrize("kind", ["C", "F"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_read_and_written(fixture: str, kind: str, request: pytest.FixtureRequest) -> None:
    run = cases.read_and_write.with_backend(request.getfixturevalue(fixture))
    a, s, t = cases.inputs()
    a = np.asarray(a, order=kind)  # type: ignore[call-overload]
    x, r = np.zeros(cases.SHAPE, order=kind), np.array(0.0)  # type: ignore[call-overload]
    ex, er = np.zeros(cases.SHAPE), np.array(0.0)
    cases.read_and_write(a, s, t, ex, er)
    run(a, s, t, x, r)
    np.testing.assert_array_equal(x, ex)
    np.testing.assert_array_equal(x, a * 1.5 + 1.5)
    assert r[()] == er[()] == 1.0


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_temporary_and_tuple(fixture: str, request: pytest.FixtureRequest) -> None:
    toolchain = request.getfixturevalue(fixture)
    a, s, t = cases.inputs()
    x = np.zeros(cases.SHAPE)
    cases.through_a_temporary.with_backend(toolchain)(a, s, t, x)
    np.testing.assert_array_equal(x, a * 1.0 + 1.0)
    r, y = np.array(0.0), np.zeros(cases.SHAPE)
    cases.tuple_of_zero_and_two.with_backend(toolchain)(a, s, r, y)
    assert r[()] == 4.5
    np.testing.assert_array_equal(y, a - 1.5)


@pytest.mark.parametrize("kind", ["C", "F"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_a_coefficient_of_a_compound_stencil(
    fixture: str, kind: str, request: pytest.FixtureRequest
) -> None:
    """A compound body (tiled where a toolchain tiles) reading a zero-dimensional field."""
    f = np.asarray(np.random.default_rng(3).random((9, 10)), order=kind)  # type: ignore[call-overload]
    embedded, out = np.zeros_like(f), np.zeros_like(f)
    cases.compound(f, np.array(0.1), embedded)
    cases.compound.with_backend(request.getfixturevalue(fixture))(f, np.array(0.1), out)
    np.testing.assert_allclose(out, embedded, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(out, cases.compound_reference(f, 0.1), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_misuse(fixture: str, request: pytest.FixtureRequest) -> None:
    run = cases.read_and_write.with_backend(request.getfixturevalue(fixture))
    a, s, t = cases.inputs()
    with pytest.raises(sc.ArgumentError, match=r"argument 's' .*expected a numpy array"):
        run(a, np.float64(1.5), t, np.zeros(cases.SHAPE), np.array(0.0))
    with pytest.raises(sc.ArgumentError, match=r"argument 's' .*expected 0 dimension\(s\)"):
        run(a, np.ones(1), t, np.zeros(cases.SHAPE), np.array(0.0))
    r = np.array(0.0)
    r.flags.writeable = False
    with pytest.raises(sc.ArgumentError, match=r"argument 'r' .*read-only"):
        run(a, s, t, np.zeros(cases.SHAPE), r)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.slow
def test_gpu_sources_build(session_cache_dir: Path) -> None:
    container = build_container({}, cache_dir=session_cache_dir, device="gpu")
    toolchains = [container.gtfn.toolchain()]
    if importlib.util.find_spec("dace") is not None:
        toolchains.append(container.dace.toolchain())
    for toolchain in toolchains:
        for program in (cases.read_and_write, cases.through_a_temporary):
            assert toolchain.compile(program).artifact.module_path.is_file()
