"""Launching the MPI tests: `mpiexec -n N python ...` with a timeout, so that a hung rank
fails its test instead of hanging the suite."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

import stencilchain as sc

TIMEOUT = 300  # seconds for one launch, every rank included


def mpiexec() -> str:
    """The `mpiexec` beside this Python (the mpich wheel's) or on PATH; skips without one."""
    found = shutil.which(
        "mpiexec", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    )
    if found is None:
        pytest.skip("no mpiexec (the mpich wheel of the mpi extra brings one)")
    return found


def launch(n: int, argv: list[str], *, cache: Path, env: Mapping[str, str] = {}) -> str:
    """`python argv` on `n` ranks, each with one OpenMP thread and `cache` as its cache
    directory; their output. Fails on a non-zero exit, and kills every rank after TIMEOUT."""
    environ = dict(os.environ, OMP_NUM_THREADS="1", STENCILCHAIN_CACHE_DIR=str(cache), **env)
    environ["PYTHONPATH"] = os.pathsep.join(
        [str(Path(sc.__file__).parents[1]), environ.get("PYTHONPATH", "")]
    )
    process = subprocess.Popen(
        [mpiexec(), "-n", str(n), sys.executable, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=environ,
        start_new_session=True,  # one process group: every rank is killed on a timeout
    )
    try:
        output, _ = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"{n} ranks of {argv} did not finish in {TIMEOUT} s:\n{output}")
    assert process.returncode == 0, f"{n} ranks of {argv} failed:\n{output}"
    return output
