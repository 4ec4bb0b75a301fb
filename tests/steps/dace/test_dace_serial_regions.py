"""A DaCe CPU library runs its OpenMP regions of one thread as plain calls
(steps/dace/serial_regions.cpp): the library defines the wrapper its regions are linked
to, and a program of several parallel maps computes what the embedded executor does both
below the bindings' OpenMP threshold (one thread: the plain calls) and above it (a team
of OMP_NUM_THREADS = 2, tests/conftest.py), on C- and Fortran-order arrays. The threshold
counts the points of the calls' domains, not of the arrays, on both families: a call over
a few rows of large arrays starts no thread team."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dace")

import stencilchain as sc

I = sc.Dimension("I")
J = sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]


@sc.field_operator
def _lap(f: F) -> F:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


@sc.field_operator
def _update(f: F, lap: F, alpha: sc.float64) -> F:
    return f + alpha * lap(I + 1) - lap(J - 1)


@sc.program
def two_maps(f: F, lap: F, out: F, alpha: sc.float64) -> None:
    _lap(f, out=lap)
    _update(f, lap, alpha, out=out)


def test_the_library_defines_the_wrapper_of_its_regions(dace_cpu: Any) -> None:
    artifact = dace_cpu.compile(two_maps).artifact
    library = artifact.build_dir / artifact.metadata["dace_library"]
    loaded = ctypes.CDLL(str(library), mode=os.RTLD_LOCAL | os.RTLD_NOW)
    assert hasattr(loaded, "__wrap_GOMP_parallel")


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [(6, 7), (310, 260)])  # below and above 65536 points
def test_small_and_large_calls_compute_what_the_embedded_executor_does(
    dace_cpu: Any, shape: tuple[int, int], order: str
) -> None:
    rng = np.random.default_rng(sum(shape))
    f = np.asarray(rng.random(shape), order=order)
    expected = [np.full(shape, np.nan, order=order) for _ in range(2)]
    got = [np.full(shape, np.nan, order=order) for _ in range(2)]
    two_maps(f, *expected, 0.3)
    run = two_maps.with_backend(dace_cpu)
    for _ in range(3):  # the same arrays again: the cached entry and the same regions
        run(f, *got, 0.3)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e)


WINDOW = """
import stencilchain as sc
I, J = sc.Dimension("I"), sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]

@sc.field_operator
def lap(f: F) -> F:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)

@sc.program
def rows(f: F, out: F, i0: sc.int32, i1: sc.int32):
    lap(f, out=out, domain={I: (i0, i1), J: (1, -1)})
"""

# In a fresh process (no OpenMP team started yet): the threads of the process after a call
# of rows 1-2 of 400 x 400 arrays (398 points, below the threshold of 65536; the arrays
# hold 160,000) and after a call of rows 1-398 (158,404 points), each result against the
# embedded executor's.
THREADS = """
import json, os
import numpy as np
import window_programs as w
from stencilchain.containers import build_container
container = build_container({}, cache_dir=CACHE, auto_optimize=True)
run = w.rows.with_backend(getattr(container, FAMILY).toolchain())
f = np.random.default_rng(7).random((400, 400))
threads, agree = [len(os.listdir("/proc/self/task"))], []
for i0, i1 in ((1, 2), (1, 399)):
    got, expected = np.zeros_like(f), np.zeros_like(f)
    run(f, got, i0, i1)
    w.rows(f, expected, i0, i1)
    threads.append(len(os.listdir("/proc/self/task")))
    agree.append(bool(np.array_equal(got, expected)))
print(json.dumps([threads, agree]))
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_a_call_over_few_points_of_large_arrays_starts_no_thread_team(
    family: str, tmp_path: Path, session_cache_dir: Path, request: pytest.FixtureRequest
) -> None:
    toolchain = request.getfixturevalue("gtfn_cpu" if family == "gtfn" else "dace_cpu")
    (tmp_path / "window_programs.py").write_text(WINDOW)
    sys.path.insert(0, str(tmp_path))
    try:
        import window_programs  # type: ignore[import-not-found]

        toolchain.compile(window_programs.rows)  # the fresh process finds it in the cache
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("window_programs", None)
    root = Path(__file__).resolve().parents[3]
    path = os.pathsep.join([str(tmp_path), str(root), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "STENCILCHAIN_CACHE_DIR": str(session_cache_dir),
           "OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "1"}  # fmt: skip
    code = textwrap.dedent(THREADS).replace("FAMILY", repr(family))
    code = code.replace("CACHE", repr(str(session_cache_dir)))
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (before, small, large), agree = json.loads(done.stdout.strip().splitlines()[-1])
    assert agree == [True, True]
    assert small == before  # the few rows ran on the calling thread
    assert large > small  # the many rows started a team of OMP_NUM_THREADS
