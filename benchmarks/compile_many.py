"""50 new programs: a serial loop of `Toolchain.compile` against `Toolchain.compile_many`.

    PYTHONPATH=. .venv/bin/python benchmarks/compile_many.py [--family gtfn|dace] [-n 50] [--jobs 2]
        [--unbatched] [--processes] [--rounds R] [--kind scale|icon]

Each side compiles `n` small programs never seen before (`(k + 0.5) * f(I + 1)`, another
`k` per side, so no cache and no pool can answer either; with `--kind icon`, ICON-like mesh
programs instead: `benchmarks/icon_calls.py`'s 5-call diffusion step over a C2E2CO table
with scalar bounds, its Smagorinsky coefficient another for each `k`) in a fresh cache folder of its
own, through a toolchain of a fresh container. The one-time set-up (tool detection, the
GTFN toolchain folder, DaCe's imports, the first translation's imports) is done before
each timed side by compiling one other program there. `compile_many` batches the builds
(docs/adr/0036-compile-many-batches.md, 0058-dace-batch-units.md, 0063-shared-glue-units.md); with `--unbatched` a third side times
`compile_many(batch=False)`, each program its own build. Prints JSON; nothing is asserted.
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
from benchmarks.icon_calls import diffusion_program, make_arguments
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


def icon_program(k: int) -> sc.Program:
    """The ICON-like program `icon_program_<k>`: icon_calls' `diffusion` with the Smagorinsky
    coefficient `(k + 0.5) / 100`."""
    return diffusion_program((k + 0.5) / 100, f"icon_program_{k}")


PROGRAMS = {"scale": scale_program, "icon": icon_program}


def _spot_check(kind: str, program: sc.Program, compiled: Any, k: int) -> None:
    """That a timed program runs: against NumPy (scale) or the embedded executor (icon)."""
    if kind == "scale":
        f = np.arange(8.0)
        out = np.zeros(8)
        compiled(f, out)
        assert np.allclose(out[:-1], (k + 0.5) * f[1:])
        return
    args = make_arguments(5, 6, 3, np.random.default_rng(k))
    expected = {name: np.array(v) if isinstance(v, np.ndarray) else v for name, v in args.items()}
    program(**expected)
    compiled(*args.values())  # make_arguments names them in the order of the parameters
    for name in ("z2", "z4", "kh", "theta_out", "theta_half"):
        np.testing.assert_array_equal(args[name], expected[name], err_msg=f"{name} of {k}")


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
    family: str,
    root: Path,
    first: int,
    n: int,
    jobs: int | None,
    *,
    batch: bool = True,
    kind: str = "scale",
) -> tuple[float, float, int]:
    """Seconds (wall, CPU) to compile `n` new programs in a fresh cache: serially (jobs
    None) or with compile_many (batched or not), and how many of them a batch built; the
    one-time set-up done first, untimed."""
    side = "serial" if jobs is None else f"many{jobs}" if batch else f"unbatched{jobs}"
    toolchain = _toolchain(family, root / side)
    make = PROGRAMS[kind]
    toolchain.compile(make(first + 10_000))  # the one-time set-up
    programs = [make(k) for k in range(first, first + n)]
    cpu = _cpu_seconds()
    start = time.perf_counter()
    if jobs is None:
        compiled = [toolchain.compile(p) for p in programs]
    else:
        compiled = toolchain.compile_many(programs, jobs=jobs, batch=batch)
    seconds = time.perf_counter() - start
    cpu = _cpu_seconds() - cpu
    for k in (0, n - 1):  # a spot check that what was timed runs
        _spot_check(kind, programs[k], compiled[k], first + k)
    return seconds, cpu, sum("batch" in c.artifact.metadata for c in compiled)


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
    family: str = "gtfn",
    n: int = 50,
    jobs: int = 2,
    *,
    unbatched: bool = False,
    processes: bool = False,
    rounds: int = 1,
    kind: str = "scale",
) -> dict[str, Any]:
    """The serial and `compile_many` times of `n` new programs of `family` ("gtfn" or
    "dace"), with the load average before and after each round; with `unbatched`, also
    the time of `compile_many(batch=False)`; with `processes`, also the time of a pool of
    forked processes instead of compile_many's threads. With `rounds` > 1 the sides
    alternate in rounds of n / rounds programs, each round starting with the next side
    (a shared machine's load then weighs on each alike); times are the sums. `kind` is
    which programs: "scale" (one-line) or "icon" (ICON-like mesh programs, not with
    `processes`)."""
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    load_before = os.getloadavg()
    root = Path(tempfile.mkdtemp(prefix="stencilchain-compile-many-"))
    sides = ["serial", "many", *(["unbatched"] if unbatched else [])]
    sides += ["processes"] if processes else []
    wall = dict.fromkeys(sides, 0.0)
    cpu = dict.fromkeys(sides, 0.0)
    in_batches = dict.fromkeys(sides, 0)
    per_round: list[dict[str, Any]] = []
    batch = max(1, n // rounds)
    n = batch * rounds
    try:
        for r in range(rounds):
            folder = root / f"round{r}"
            load = os.getloadavg()
            order = sides[r % len(sides) :] + sides[: r % len(sides)]
            times: dict[str, float] = {}
            for side in order:
                first = (len(sides) * r + sides.index(side)) * batch
                if side == "processes":
                    seconds, used = _process_side(family, folder, first, batch, jobs), 0.0
                else:
                    seconds, used, batched = _timed_side(
                        family,
                        folder,
                        first,
                        batch,
                        None if side == "serial" else jobs,
                        batch=side != "unbatched",
                        kind=kind,
                    )
                    in_batches[side] += batched
                times[side] = round(seconds, 3)
                wall[side] += seconds
                cpu[side] += used
            per_round.append(
                {
                    "order": order,
                    "seconds": times,
                    "loadavg_before": [round(x, 2) for x in load],
                    "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                }
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    serial, many = wall["serial"], wall["many"]
    return {
        "figure": f"{n} new programs, compile_many vs serial ({family})",
        "family": family,
        "kind": kind,
        "programs": n,
        "jobs": jobs,
        "rounds": rounds,
        "cpus": os.cpu_count(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "serial_seconds": round(serial, 3),
        "compile_many_seconds": round(many, 3),
        "speedup": round(serial / many, 2),
        "serial_per_program_seconds": round(serial / n, 3),
        # CPU time per program (this process and the compilers), and the cores a serial
        # loop keeps busy: compile_many cannot beat serial by more than CPUs / that
        "serial_cpu_per_program_seconds": round(cpu["serial"] / n, 3),
        "compile_many_cpu_per_program_seconds": round(cpu["many"] / n, 3),
        "serial_busy_cores": round(cpu["serial"] / serial, 2),
        # how many of each side's programs a batch build built (GTFN's compile_many)
        "built_in_batches": {side: in_batches[side] for side in sides if side != "processes"},
        **(
            {
                "unbatched_seconds": round(wall["unbatched"], 3),
                "unbatched_speedup": round(serial / wall["unbatched"], 2),
                # batched compile_many against compile_many(batch=False)
                "batch_speedup": round(wall["unbatched"] / many, 2),
                "unbatched_cpu_per_program_seconds": round(cpu["unbatched"] / n, 3),
            }
            if unbatched
            else {}
        ),
        **(
            {
                "process_pool_seconds": round(wall["processes"], 3),
                "process_speedup": round(serial / wall["processes"], 2),
            }
            if processes
            else {}
        ),
        "rounds_detail": per_round,
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", choices=("gtfn", "dace"), default="gtfn")
    parser.add_argument("-n", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--unbatched", action="store_true", help="also time compile_many(batch=False)"
    )
    parser.add_argument(
        "--processes", action="store_true", help="also time a pool of processes instead"
    )
    parser.add_argument("--rounds", type=int, default=1, help="alternate the sides in rounds")
    parser.add_argument(
        "--kind", choices=tuple(PROGRAMS), default="scale", help="one-line or ICON-like programs"
    )
    args = parser.parse_args()
    if args.processes and args.kind != "scale":
        parser.error("--processes times the one-line programs only")
    figures = compile_many_figures(
        args.family,
        args.n,
        args.jobs,
        unbatched=args.unbatched,
        processes=args.processes,
        rounds=args.rounds,
        kind=args.kind,
    )
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
