"""External workspaces: with `external_workspace` on, the DaCe toolchain keeps a program's
temporaries in memory the caller provides.

The compiled program reports the bytes a call needs (`workspace_size(*args)`), takes a
buffer (`set_workspace`), and refuses to run without one or with one too small
(WorkspaceError, outputs untouched). Results equal the embedded executor's, and the
temporaries really are in the caller's buffer. Also: the toolchains that allocate
temporaries themselves (GTFN, DaCe without the setting) answer 0 and refuse a buffer,
and GTFN reports a temporary it cannot allocate as a MemoryError.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.containers import build_container
from stencilchain.examples import hdiff_staged, laplacian
from stencilchain.examples.tuple_chain import backward_divergence, forward_gradient

from .test_gtfn_end_to_end import LAYOUTS, TEMPORARIES_CASE, make_arguments, run_both

F = laplacian.Field2D
I, J = laplacian.I, laplacian.J


@sc.program
def lap_lap(f: F, out: F) -> None:
    t = laplacian.laplacian(f)
    laplacian.laplacian(t, out=out)


@sc.program
def no_temporaries(f: F, out: F) -> None:
    laplacian.laplacian(f, out=out)


def _workspace_toolchain(cache_dir: Path, auto_optimize: bool) -> Any:
    pytest.importorskip("dace", reason="external workspaces are a DaCe setting")
    container = build_container(
        {}, cache_dir=cache_dir, auto_optimize=auto_optimize, external_workspace=True
    )
    container.dace.name.override("run_dace_cpu_workspace" + ("" if auto_optimize else "_noopt"))
    return container.dace.toolchain()


@pytest.fixture(scope="module", params=[True, False], ids=["opt", "noopt"])
def workspace_toolchain(request: pytest.FixtureRequest, session_cache_dir: Path) -> Any:
    return _workspace_toolchain(session_cache_dir, request.param)


@pytest.fixture(scope="module")
def noopt_workspace_toolchain(session_cache_dir: Path) -> Any:
    return _workspace_toolchain(session_cache_dir, False)


def interior_lap(a: np.ndarray) -> np.ndarray:
    return -4.0 * a[1:-1, 1:-1] + a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2]


def test_the_temporaries_case_matches_embedded(workspace_toolchain: Any, subtests: Any) -> None:
    """Four dtypes, a tuple, a transposed and a 1-D temporary, explicit domains, empty
    domains: every layout, with a workspace of exactly the size asked for."""
    bound = TEMPORARIES_CASE.program.with_backend(workspace_toolchain)
    seed = 100
    for sizes in TEMPORARIES_CASE.sizes:
        for layout in LAYOUTS:
            seed += 1
            arguments = make_arguments(TEMPORARIES_CASE, sizes, {}, seed)
            needed = bound.workspace_size(*arguments.values())
            # every temporary that some call reads, at most, in whole elements
            assert (
                0
                < needed
                <= sum(
                    int(np.prod([sizes[d] for d in t.type.dims])) * t.type.dtype.numpy.itemsize
                    for t in TEMPORARIES_CASE.program.ir.temporaries
                )
            )
            bound.set_workspace(np.empty(needed, np.uint8))
            with subtests.test(sizes=repr(sizes), layout=layout):
                run_both(TEMPORARIES_CASE.program, bound, arguments, layout, seed)


def test_hdiff_staged_matches_the_reference(workspace_toolchain: Any) -> None:
    inputs = hdiff_staged.make_inputs((20, 17, 3), np.random.default_rng(5))
    expected = hdiff_staged.reference(**{k: v.copy() for k, v in inputs.items()})
    bound = hdiff_staged.PROGRAM.with_backend(workspace_toolchain)
    bound.set_workspace(np.empty(bound.workspace_size(*inputs.values()), np.uint8))
    bound(*inputs.values())
    np.testing.assert_allclose(inputs["out"], expected["out"], rtol=1e-12)


def test_the_temporary_lives_in_the_callers_buffer(noopt_workspace_toolchain: Any) -> None:
    """After a call the buffer holds the temporary: the Laplacian of f on the interior,
    in C order (nothing else would put those values there)."""
    f = np.random.default_rng(0).random((11, 7))
    out = np.zeros_like(f)
    bound = lap_lap.with_backend(noopt_workspace_toolchain)
    needed = bound.workspace_size(f, out)
    assert needed == f.size * 8
    buffer = np.full(needed, 0xFF, np.uint8)
    bound.set_workspace(buffer)
    bound(f, out)
    temporary = buffer.view(np.float64).reshape(f.shape)
    np.testing.assert_allclose(temporary[1:-1, 1:-1], interior_lap(f), rtol=1e-13)
    expected = np.zeros_like(f)
    expected[2:-2, 2:-2] = interior_lap(interior_lap(f))
    np.testing.assert_allclose(out, expected, rtol=1e-13, atol=1e-13)


def test_the_size_follows_the_arguments(noopt_workspace_toolchain: Any) -> None:
    bound = lap_lap.with_backend(noopt_workspace_toolchain)
    for shape in [(4, 4), (30, 5), (1, 1)]:
        assert bound.workspace_size(np.zeros(shape), np.zeros(shape)) == shape[0] * shape[1] * 8
    with pytest.raises(sc.ArgumentError, match=r"argument 'out'.*size 5 along I"):
        bound.workspace_size(np.zeros((4, 4)), np.zeros((5, 4)))
    with pytest.raises(sc.ArgumentError, match="takes 2 arguments"):
        bound.workspace_size(np.zeros((4, 4)))


def test_a_call_without_a_workspace_is_a_clear_error(workspace_toolchain: Any) -> None:
    f = np.random.default_rng(1).random((9, 9))
    out = np.full_like(f, 3.0)
    bound = lap_lap.with_backend(workspace_toolchain)
    needed = bound.workspace_size(f, out)
    for _ in range(2):  # the first call compiles; the second goes straight to the check
        with pytest.raises(sc.WorkspaceError) as info:
            bound(f, out)
        message = str(info.value)
        assert "lap_lap()" in message and workspace_toolchain.name in message
        assert f"set_workspace(numpy.empty({needed}, numpy.uint8))" in message
    assert np.all(out == 3.0)


def test_a_workspace_too_small_is_a_clear_error(workspace_toolchain: Any) -> None:
    f = np.random.default_rng(2).random((9, 9))
    out = np.full_like(f, 3.0)
    bound = lap_lap.with_backend(workspace_toolchain)
    needed = bound.workspace_size(f, out)
    bound.set_workspace(np.empty(needed - 8, np.uint8))
    with pytest.raises(
        sc.WorkspaceError, match=f"has {needed - 8} bytes, but this call needs {needed}"
    ):
        bound(f, out)
    assert np.all(out == 3.0)
    # a larger call through a workspace sized for a smaller one
    bound.set_workspace(np.empty(needed, np.uint8))
    bound(f, out)
    big = np.zeros((12, 9))
    with pytest.raises(sc.WorkspaceError, match="this call needs 864"):
        bound(big, np.zeros_like(big))


@pytest.mark.parametrize(
    ("buffer", "problem"),
    [
        (np.empty(800, np.float64), "dtype float64, not uint8"),
        (np.empty((8, 100), np.uint8), "2 dimensions"),
        (np.empty(1600, np.uint8)[::2], "not contiguous"),
        (np.empty(801, np.uint8)[1:], "8-byte boundary"),
        ([0] * 800, "needs a numpy array"),
    ],
    ids=["dtype", "ndim", "strided", "misaligned", "list"],
)
def test_bad_buffers_are_refused(noopt_workspace_toolchain: Any, buffer: Any, problem: str) -> None:
    bound = lap_lap.with_backend(noopt_workspace_toolchain)
    with pytest.raises(sc.WorkspaceError, match=problem):
        bound.set_workspace(buffer)


def test_a_read_only_buffer_is_refused(noopt_workspace_toolchain: Any) -> None:
    buffer = np.empty(800, np.uint8)
    buffer.flags.writeable = False
    with pytest.raises(sc.WorkspaceError, match="read-only"):
        lap_lap.with_backend(noopt_workspace_toolchain).set_workspace(buffer)


def test_the_compiled_entry_point_checks_the_workspace_itself(
    noopt_workspace_toolchain: Any,
) -> None:
    """The native check, for callers of the compiled program's entry point."""
    compiled = noopt_workspace_toolchain.compile(lap_lap)
    assert compiled.workspace
    f, out = np.zeros((6, 6)), np.zeros((6, 6))
    assert compiled.entry(f, out, None) == 6 * 6 * 8
    for bad in (np.empty(288, np.float64), np.empty(289, np.uint8)[1:], "buffer"):
        with pytest.raises(TypeError, match=r"workspace.*1-D numpy array of uint8"):
            compiled.entry(f, out, bad)
    with pytest.raises(TypeError, match="2 arguments and a workspace"):
        compiled.entry(f, out)
    with pytest.raises(sc.WorkspaceError, match="has 8 bytes"):
        compiled.entry(f, out, np.empty(8, np.uint8))
    compiled.entry(f, out, np.empty(288, np.uint8))


def test_argument_errors_keep_their_messages(noopt_workspace_toolchain: Any) -> None:
    bound = lap_lap.with_backend(noopt_workspace_toolchain)
    bound.set_workspace(np.empty(10_000, np.uint8))
    bad = (np.zeros((6, 6), np.float32), np.zeros((6, 6)))
    with pytest.raises(sc.ArgumentError) as embedded:
        lap_lap(*bad)
    with pytest.raises(sc.ArgumentError) as compiled:
        bound(*bad)
    assert str(compiled.value) == str(embedded.value)


def test_a_program_without_temporaries_needs_no_workspace(
    noopt_workspace_toolchain: Any,
) -> None:
    f = np.random.default_rng(3).random((8, 8))
    out = np.zeros_like(f)
    bound = no_temporaries.with_backend(noopt_workspace_toolchain)
    assert bound.workspace_size(f, out) == 0
    bound(f, out)  # no set_workspace needed
    np.testing.assert_allclose(out[1:-1, 1:-1], interior_lap(f), rtol=1e-13)
    bound.set_workspace(np.empty(0, np.uint8))  # accepted: generic code may always set one
    bound(f, out)


@pytest.mark.parametrize("fixture", ["noopt_workspace_toolchain", "gtfn_cpu"])
def test_concurrent_calls_get_their_own_temporaries(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    """Threads calling one compiled program all get their own results: each bound program
    with its own workspace (the compiled code runs one such call at a time), or GTFN's
    temporaries, taken from its pool of blocks by one call at a time."""
    toolchain = request.getfixturevalue(fixture)
    shape = (300, 260)
    failures: list[str] = []

    def worker(seed: int) -> None:
        bound = lap_lap.with_backend(toolchain)
        f = np.random.default_rng(seed).random(shape)
        out = np.zeros(shape)
        needed = bound.workspace_size(f, out)
        if needed:
            bound.set_workspace(np.empty(needed, np.uint8))
        expected = np.zeros(shape)
        expected[2:-2, 2:-2] = interior_lap(interior_lap(f))
        for _ in range(20):
            bound(f, out)
            if not np.allclose(out, expected, rtol=1e-13, atol=1e-13):
                failures.append(f"thread {seed}")
                return

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


# --- toolchains that allocate temporaries themselves ---------------------------------------------


@pytest.mark.parametrize("fixture", ["gtfn_cpu", "dace_cpu"])
def test_other_toolchains_need_no_workspace(fixture: str, request: pytest.FixtureRequest) -> None:
    toolchain = request.getfixturevalue(fixture)
    bound = lap_lap.with_backend(toolchain)
    f = np.zeros((6, 6))
    assert bound.workspace_size(f, np.zeros_like(f)) == 0
    with pytest.raises(sc.ArgumentError, match="takes 2 arguments"):
        bound.workspace_size(f)
    with pytest.raises(sc.WorkspaceError, match="allocates the program's temporaries itself"):
        bound.set_workspace(np.empty(1000, np.uint8))


def test_gtfn_refuses_a_huge_output_of_one_element(gtfn_cpu: Any) -> None:
    """2**21 x 2**21 float64 views with zero strides: the input is fine, the output, all of
    whose points are one element, is refused before the temporary (32 TiB) is allocated.
    A temporary that cannot be allocated, with an output of its own, is a MemoryError on
    every toolchain: tests/runtime/test_bad_input_corpus.py."""
    n = 2**21
    f = np.lib.stride_tricks.as_strided(np.zeros(1), shape=(n, n), strides=(0, 0))
    out = np.lib.stride_tricks.as_strided(np.zeros(1), shape=(n, n), strides=(0, 0))
    with pytest.raises(sc.ArgumentError, match=r"argument 'out' of lap_lap.*stride 0 along I"):
        lap_lap.with_backend(gtfn_cpu)(f, out)


@sc.program
def grad_div(f: F, out: F) -> None:
    gx, gy = forward_gradient(f)
    backward_divergence(gx, gy, out=out)


def test_one_buffer_serves_programs_called_one_after_another(
    noopt_workspace_toolchain: Any,
) -> None:
    f = np.random.default_rng(4).random((16, 12))
    a, b = np.zeros_like(f), np.zeros_like(f)
    first = lap_lap.with_backend(noopt_workspace_toolchain)
    second = grad_div.with_backend(noopt_workspace_toolchain)
    sizes = (first.workspace_size(f, a), second.workspace_size(f, b))
    assert sizes == (f.size * 8, 2 * f.size * 8)
    shared = np.empty(max(sizes), np.uint8)
    first.set_workspace(shared)
    second.set_workspace(shared)
    for _ in range(2):
        first(f, a)
        second(f, b)
    expected_a, expected_b = np.zeros_like(f), np.zeros_like(f)
    lap_lap(f, expected_a)
    grad_div(f, expected_b)
    np.testing.assert_allclose(a, expected_a, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(b, expected_b, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("example", ["tridiagonal", "sedimentation"])
def test_programs_with_scans_keep_their_temporaries_in_the_workspace(
    workspace_toolchain: Any, example: str
) -> None:
    """The temporaries that scans make and read (the Thomas solve's c' and d', and those of
    a scan called inside a field operator) live in the caller's buffer, with the embedded
    executor's results."""
    import importlib

    module = importlib.import_module(f"stencilchain.examples.{example}")
    inputs = module.make_inputs((6, 5, 9), np.random.default_rng(17))
    expected = {k: np.copy(v) if isinstance(v, np.ndarray) else v for k, v in inputs.items()}
    module.PROGRAM(**expected)
    bound = module.PROGRAM.with_backend(workspace_toolchain)
    needed = bound.workspace_size(**inputs)
    assert needed > 0
    buffer = np.zeros(needed, np.uint8)
    bound.set_workspace(buffer)
    bound(**inputs)
    assert buffer.any()  # the temporaries were written there
    for name, value in expected.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_allclose(inputs[name], value, rtol=1e-13, atol=1e-14, err_msg=name)
