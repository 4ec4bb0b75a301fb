"""50 new programs: a serial loop of `Toolchain.compile` against `Toolchain.compile_many`.

    PYTHONPATH=. .venv/bin/python benchmarks/compile_many.py [--family gtfn|dace] [-n 50] [--jobs 2]

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


def _timed_side(family: str, root: Path, first: int, n: int, jobs: int | None) -> float:
    """Seconds to compile `n` new programs in a fresh cache: serially (jobs None) or with
    compile_many; the one-time set-up done first, untimed."""
    toolchain = _toolchain(family, root / ("serial" if jobs is None else f"many{jobs}"))
    toolchain.compile(scale_program(first + 10_000))  # the one-time set-up
    programs = scale_programs(first, n)
    start = time.perf_counter()
    if jobs is None:
        compiled = [toolchain.compile(p) for p in programs]
    else:
        compiled = toolchain.compile_many(programs, jobs=jobs)
    seconds = time.perf_counter() - start
    f = np.arange(8.0)
    out = np.zeros(8)
    for k in (0, n - 1):  # a spot check that what was timed runs
        compiled[k](f, out)
        assert np.allclose(out[:-1], (first + k + 0.5) * f[1:])
    return seconds


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
    family: str = "gtfn", n: int = 50, jobs: int = 2, *, processes: bool = False
) -> dict[str, Any]:
    """The serial and `compile_many` times of `n` new programs of `family` ("gtfn" or
    "dace"), with the load average before and after; with `processes`, also the time of
    a pool of forked processes instead of compile_many's threads."""
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    load_before = os.getloadavg()
    root = Path(tempfile.mkdtemp(prefix="stencilchain-compile-many-"))
    try:
        serial = _timed_side(family, root, 0, n, None)
        many = _timed_side(family, root, n, n, jobs)
        forked = _process_side(family, root, 2 * n, n, jobs) if processes else None
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {
        "figure": f"{n} new programs, compile_many vs serial ({family})",
        "family": family,
        "programs": n,
        "jobs": jobs,
        "cpus": os.cpu_count(),
        "serial_seconds": round(serial, 3),
        "compile_many_seconds": round(many, 3),
        "speedup": round(serial / many, 2),
        "serial_per_program_seconds": round(serial / n, 3),
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
    args = parser.parse_args()
    figures = compile_many_figures(args.family, args.n, args.jobs, processes=args.processes)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
