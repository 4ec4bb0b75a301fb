"""50 new programs: a serial loop of `Toolchain.compile` against `Toolchain.compile_many`.

    PYTHONPATH=. .venv/bin/python benchmarks/compile_many.py [--family gtfn|dace] [-n 50] [--jobs 2]
        [--processes] [--rounds R]

Each side compiles `n` small programs never seen before (`(k + 0.5) * f(I + 1)`, another
`k` per side, so no cache and no pool can answer either) in a fresh cache folder of its
own, through a toolchain of a fresh container. The one-time set-up (tool detection, the
GTFN toolchain folder, DaCe's imports, the first translation's imports) is done before
each timed side by compiling one other program there. Prints JSON; nothing is asserted.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import stencilchain as sc
from stencilchain.containers import build_container
from stencilchain.runtime.toolchain import Toolchain
from stencilchain.steps.stages import CompiledArtifact

I = sc.Dimension("I")


def scale_program(k: int) -> sc.Program:
    """The program `out = (k + 0.5) * f(I + 1)`, named `scale_program_<k>`."""
    factor = k + 0.5

    def scale(f: sc.Field[[I], sc.float64]) -> sc.Field[[I], sc.float64]:
        return factor * f(I + 1)

    scale.__name__ = scale.__qualname__ = f"scale_{k}"
    operator = sc.field_operator(scale)

    def run(f: sc.Field[[I], sc.float64], out: sc.Field[[I], sc.float64]) -> None:
        operator(f, out=out)

    run.__name__ = run.__qualname__ = f"scale_program_{k}"
    return sc.program(run)


def scale_programs(first: int, n: int) -> list[sc.Program]:
    """`n` distinct programs: `scale_program(k)` for k = first, ..., first + n - 1."""
    return [scale_program(k) for k in range(first, first + n)]


def _toolchain(family: str, cache_dir: Path) -> Toolchain:
    container = build_container({}, cache_dir=cache_dir, cache_lifetime="persistent")
    return container.gtfn.toolchain() if family == "gtfn" else container.dace.toolchain()


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the compilers), user + system."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _timed_side(
    family: str, root: Path, first: int, n: int, jobs: int | None
) -> tuple[float, float]:
    """Seconds (wall, CPU) to compile `n` new programs in a fresh cache: serially (jobs
    None) or with compile_many; the one-time set-up done first, untimed."""
    toolchain = _toolchain(family, root / ("serial" if jobs is None else f"many{jobs}"))
    toolchain.compile(scale_program(first + 10_000))  # the one-time set-up
    programs = scale_programs(first, n)
    cpu = _cpu_seconds()
    start = time.perf_counter()
    if jobs is None:
        compiled = [toolchain.compile(p) for p in programs]
    else:
        compiled = toolchain.compile_many(programs, jobs=jobs)
    seconds = time.perf_counter() - start
    cpu = _cpu_seconds() - cpu
    f = np.arange(8.0)
    out = np.zeros(8)
    for k in (0, n - 1):  # a spot check that what was timed runs
        compiled[k](f, out)
        assert np.allclose(out[:-1], (first + k + 0.5) * f[1:])
    return seconds, cpu


_FORKED: tuple[Toolchain, list[sc.Program], int] | None = None  # what forked workers build


def _build_forked(index: int) -> CompiledArtifact:
    """In a forked worker: build program `index` of `_FORKED` (the artifact pickles back)."""
    assert _FORKED is not None
    toolchain, programs, build_jobs = _FORKED
    return toolchain.workflow.with_build_jobs(build_jobs)(programs[index].ir)


def _process_side(family: str, root: Path, first: int, n: int, jobs: int) -> float:
    """Seconds to build `n` new programs with a pool of `jobs` forked processes (the
    alternative to compile_many's threads): each worker runs the workflow, the parent
    loads the artifacts."""
    global _FORKED
    toolchain = _toolchain(family, root / f"processes{jobs}")
    toolchain.compile(scale_program(first + 10_000))  # the one-time set-up
    programs = scale_programs(first, n)
    _FORKED = (toolchain, programs, max(1, (os.cpu_count() or 1) // jobs))
    start = time.perf_counter()
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as executor:
        artifacts = list(executor.map(_build_forked, range(n)))
    entries = [artifact.load() for artifact in artifacts]
    seconds = time.perf_counter() - start
    _FORKED = None
    assert len(entries) == n
    return seconds


def compile_many_figures(
    family: str = "gtfn", n: int = 50, jobs: int = 2, *, processes: bool = False, rounds: int = 1
) -> dict[str, Any]:
    """The serial and `compile_many` times of `n` new programs of `family` ("gtfn" or
    "dace"), with the load average before and after; with `processes`, also the time of
    a pool of forked processes instead of compile_many's threads. With `rounds` > 1 the
    sides alternate in rounds of n / rounds programs (a shared machine's load then
    weighs on each alike); times are the sums."""
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    load_before = os.getloadavg()
    root = Path(tempfile.mkdtemp(prefix="stencilchain-compile-many-"))
    serial = serial_cpu = many = many_cpu = 0.0
    forked: float | None = 0.0 if processes else None
    batch = max(1, n // rounds)
    n = batch * rounds
    try:
        for r in range(rounds):
            first, folder = 3 * r * batch, root / f"round{r}"
            wall, cpu = _timed_side(family, folder, first, batch, None)
            serial, serial_cpu = serial + wall, serial_cpu + cpu
            wall, cpu = _timed_side(family, folder, first + batch, batch, jobs)
            many, many_cpu = many + wall, many_cpu + cpu
            if forked is not None:
                forked += _process_side(family, folder, first + 2 * batch, batch, jobs)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {
        "figure": f"{n} new programs, compile_many vs serial ({family})",
        "family": family,
        "programs": n,
        "jobs": jobs,
        "rounds": rounds,
        "cpus": os.cpu_count(),
        "serial_seconds": round(serial, 3),
        "compile_many_seconds": round(many, 3),
        "speedup": round(serial / many, 2),
        "serial_per_program_seconds": round(serial / n, 3),
        # CPU time per program (this process and the compilers), and the cores a serial
        # loop keeps busy: compile_many cannot beat serial by more than CPUs / that
        "serial_cpu_per_program_seconds": round(serial_cpu / n, 3),
        "compile_many_cpu_per_program_seconds": round(many_cpu / n, 3),
        "serial_busy_cores": round(serial_cpu / serial, 2),
        **(
            {}
            if forked is None
            else {
                "process_pool_seconds": round(forked, 3),
                "process_speedup": round(serial / forked, 2),
            }
        ),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", choices=("gtfn", "dace"), default="gtfn")
    parser.add_argument("-n", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--processes", action="store_true", help="also time a pool of processes instead"
    )
    parser.add_argument("--rounds", type=int, default=1, help="alternate the sides in rounds")
    args = parser.parse_args()
    figures = compile_many_figures(
        args.family, args.n, args.jobs, processes=args.processes, rounds=args.rounds
    )
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
