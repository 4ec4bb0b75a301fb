"""The GPU toolchains: CUDA modules build here (nvcc, no GPU); they run only where a GPU is."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.containers import build_container
from stencilchain.examples import hdiff, hdiff_staged, tuple_chain, vertical_advection

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")


@pytest.fixture(scope="module")
def gtfn_gpu(session_cache_dir: Path) -> Any:
    return build_container({}, cache_dir=session_cache_dir, device="gpu").gtfn.toolchain()


def _cupy_with_a_gpu() -> Any:
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except Exception as err:  # cupy imports without a GPU and fails on first use
        pytest.skip(f"no usable CUDA device: {err}")
    return cupy


@needs_nvcc
@pytest.mark.slow
def test_gpu_modules_build_and_load_and_refuse_host_arrays(gtfn_gpu: Any) -> None:
    for module in (hdiff, hdiff_staged, tuple_chain):
        compiled = gtfn_gpu.compile(module.PROGRAM)
        assert compiled.artifact.module_path.is_file()
        inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(0))
        first = next(iter(inputs))
        with pytest.raises(sc.ArgumentError, match=f"argument '{first}'.*GPU array"):
            module.PROGRAM.with_backend(gtfn_gpu)(*inputs.values())


@needs_nvcc
@pytest.mark.gpu
@pytest.mark.parametrize(
    "module",
    [hdiff, hdiff_staged, tuple_chain, vertical_advection],
    ids=lambda m: m.__name__.rsplit(".", 1)[-1],
)
def test_gpu_results_equal_the_embedded_executor(gtfn_gpu: Any, module: Any) -> None:
    cupy = _cupy_with_a_gpu()
    inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(1))
    expected = [v.copy() if isinstance(v, np.ndarray) else v for v in inputs.values()]
    module.PROGRAM(*expected)
    on_device = [cupy.asarray(v) if isinstance(v, np.ndarray) else v for v in inputs.values()]
    module.PROGRAM.with_backend(gtfn_gpu)(*on_device)
    cupy.cuda.Device().synchronize()
    for got, want in zip(on_device, expected):
        if isinstance(want, np.ndarray):
            np.testing.assert_allclose(cupy.asnumpy(got), want, rtol=1e-12, atol=1e-12)


@needs_nvcc
@pytest.mark.slow
@pytest.mark.parametrize(
    "module", [hdiff, hdiff_staged], ids=lambda m: m.__name__.rsplit(".", 1)[-1]
)
def test_dace_gpu_sdfg_builds_and_refuses_host_arrays(session_cache_dir: Path, module: Any) -> None:
    """hdiff_staged's temporaries are GPU transients that DaCe allocates."""
    pytest.importorskip("dace")
    toolchain = build_container({}, cache_dir=session_cache_dir, device="gpu").dace.toolchain()
    compiled = toolchain.compile(module.PROGRAM)
    assert compiled.artifact.module_path.is_file()
    assert not compiled.workspace
    inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(0))
    with pytest.raises(sc.ArgumentError, match="GPU array"):
        module.PROGRAM.with_backend(toolchain)(*inputs.values())


@needs_nvcc
@pytest.mark.slow
def test_dace_gpu_sdfg_with_an_external_workspace_builds(session_cache_dir: Path) -> None:
    """The temporaries of hdiff_staged become external transients in GPU memory; the
    module builds, asks for a GPU workspace, and refuses a host buffer."""
    pytest.importorskip("dace")
    toolchain = build_container(
        {}, cache_dir=session_cache_dir, device="gpu", external_workspace=True
    ).dace.toolchain()
    compiled = toolchain.compile(hdiff_staged.PROGRAM)
    assert compiled.workspace
    assert compiled.artifact.metadata["workspace"] == "GPU_Global"
    bound = hdiff_staged.PROGRAM.with_backend(toolchain)
    with pytest.raises(sc.WorkspaceError, match="GPU array"):
        bound.set_workspace(np.empty(1024, np.uint8))


@needs_nvcc
@pytest.mark.gpu
def test_dace_gpu_external_workspace_results(session_cache_dir: Path) -> None:
    cupy = _cupy_with_a_gpu()
    pytest.importorskip("dace")
    toolchain = build_container(
        {}, cache_dir=session_cache_dir, device="gpu", external_workspace=True
    ).dace.toolchain()
    inputs = hdiff_staged.make_inputs(hdiff_staged.DEFAULT_SHAPE, np.random.default_rng(2))
    expected = hdiff_staged.reference(**{k: v.copy() for k, v in inputs.items()})
    on_device = [cupy.asarray(v) for v in inputs.values()]
    bound = hdiff_staged.PROGRAM.with_backend(toolchain)
    needed = bound.workspace_size(*on_device)
    assert needed > 0
    with pytest.raises(sc.WorkspaceError, match="set_workspace"):
        bound(*on_device)
    bound.set_workspace(cupy.empty(needed, cupy.uint8))
    bound(*on_device)
    cupy.cuda.Device().synchronize()
    np.testing.assert_allclose(cupy.asnumpy(on_device[-1]), expected["out"], rtol=1e-12)


# mypy reads the names of these dimensions as forward references to types
F3 = sc.Field[[sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")], sc.float64]  # type: ignore[name-defined]
_K = sc.Dimension("K")


@sc.field_operator
def _last_level(f: F3) -> F3:
    return sc.concat_where(_K >= sc.size(_K) - 1, f(_K - 1), f)  # noqa: SIM300


@sc.program
def _last_level_program(f: F3, out: F3) -> None:
    # no size along K in the domain: only the condition needs it
    _last_level(f, out=out, domain={_K: (1, 5)})


@needs_nvcc
@pytest.mark.slow
def test_concat_where_builds_for_the_gpu_on_both_families(
    gtfn_gpu: Any, session_cache_dir: Path
) -> None:
    """Branches as if/else blocks in the CUDA kernels (GTFN), clamped memlets and the
    condition in the tasklet (DaCe), with a condition counted from the end on a domain
    that names no size."""
    pytest.importorskip("dace")
    dace_gpu = build_container({}, cache_dir=session_cache_dir, device="gpu").dace.toolchain()
    for toolchain in (gtfn_gpu, dace_gpu):
        for program in (vertical_advection.PROGRAM, _last_level_program):
            assert toolchain.compile(program).artifact.module_path.is_file()


@needs_nvcc
@pytest.mark.gpu
def test_dace_gpu_concat_where_results(session_cache_dir: Path) -> None:
    cupy = _cupy_with_a_gpu()
    pytest.importorskip("dace")
    toolchain = build_container({}, cache_dir=session_cache_dir, device="gpu").dace.toolchain()
    module = vertical_advection
    inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(3))
    copies = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inputs.items()}
    expected = module.reference(**copies)
    on_device = [cupy.asarray(v) if isinstance(v, np.ndarray) else v for v in inputs.values()]
    module.PROGRAM.with_backend(toolchain)(*on_device)
    cupy.cuda.Device().synchronize()
    np.testing.assert_allclose(cupy.asnumpy(on_device[-1]), expected["tendency"], rtol=1e-12)
