"""Would a sliding-window schedule make hdiff faster on this machine? GTFN's hdiff as it
generates it (`AUTO`: the Laplacian and fluxes recomputed where they are read, several
points per iteration where the planner jams the loop nest, ADR 0054), one point per
iteration (`RECOMPUTE`, the code before the jam), GTFN's tiled variant (`Materialization.ALWAYS`: every intermediate kept in per-tile
buffers) and a hand-written sliding-window schedule (benchmarks/native/
hdiff_sliding_window.cpp: each intermediate computed once into a ring of planes or rows
that moves with the outer loop, as Halide's storage folding does), side by side in one
process, interleaved over rounds, C and Fortran order.

    OMP_NUM_THREADS=2 python benchmarks/hdiff_schedules.py [--shape 256,256,80]
        [--rounds 5] [--repeat 10] [--tile 64] [--slab 32] [--json PATH]

The hand-written kernels do GTFN's arithmetic operation for operation; every result is
checked bit for bit against GTFN's before anything is timed. They are compiled with the
C++ compiler on PATH (`CXX` if set) and GTFN's flags for program units. Prints the median
milliseconds per call of each contender (the best and the median over rounds), the
ratios to the generated code, the unique bytes moved (inp and coeff read, out written)
as GB/s, the load average and the CPU model. Uses a private temporary cache. Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as `python benchmarks/hdiff_schedules.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from benchmarks._common import median_seconds
from stencilchain.containers import build_container
from stencilchain.containers.builders import make_gtfn_translation
from stencilchain.containers.overrides import override_step
from stencilchain.examples import hdiff
from stencilchain.steps.gtfn.tiling import Materialization

SOURCE = Path(__file__).resolve().parent / "native" / "hdiff_sliding_window.cpp"
FLAGS = [
    "-O3",
    "-std=c++17",
    "-shared",
    "-fPIC",
    "-fopenmp",
    "-fwrapv",
    "-fno-trapping-math",
    "-fno-tree-loop-distribute-patterns",
    "-ffp-contract=off",
    "-march=native",
]
I64 = ctypes.c_int64
PTR = ctypes.c_void_p


def build_sliding_window(folder: Path) -> ctypes.CDLL:
    """The hand-written kernels as a shared library in `folder`."""
    library = folder / "hdiff_sliding_window.so"
    compiler = os.environ.get("CXX") or shutil.which("c++") or "g++"
    subprocess.run([compiler, *FLAGS, str(SOURCE), "-o", str(library)], check=True)
    lib = ctypes.CDLL(str(library))
    lib.sc_hdiff_c.argtypes = [PTR, PTR, PTR, I64, I64, I64, I64, I64, I64, I64]
    lib.sc_hdiff_f.argtypes = [PTR, PTR, PTR, I64, I64, I64, I64, I64]
    lib.sc_hdiff_c.restype = lib.sc_hdiff_f.restype = ctypes.c_int
    return lib


def sliding_window(
    lib: ctypes.CDLL, order: str, tile: int, slab: int
) -> Callable[[np.ndarray, np.ndarray, np.ndarray], None]:
    """A call of the hand-written schedule for arrays in `order`."""

    def run(inp: np.ndarray, coeff: np.ndarray, out: np.ndarray) -> None:
        assert inp.strides == coeff.strides == out.strides
        s = [x // 8 for x in inp.strides]
        pointers = (inp.ctypes.data, coeff.ctypes.data, out.ctypes.data)
        if order == "C":
            assert s[2] == 1
            done = lib.sc_hdiff_c(*pointers, *inp.shape, s[0], s[1], tile, slab)
        else:
            assert s[0] == 1
            done = lib.sc_hdiff_f(*pointers, *inp.shape, s[1], s[2])
        if done != 0:
            raise ValueError(f"hdiff_sliding_window: bad shape {inp.shape}")

    return run


def figures(
    shape: tuple[int, int, int], rounds: int, repeat: int, tile: int, slab: int
) -> dict[str, Any]:
    cache = Path(tempfile.mkdtemp(prefix="stencilchain-bench-"))
    try:
        lib = build_sliding_window(cache)
        programs = {}
        for mode in (Materialization.AUTO, Materialization.RECOMPUTE, Materialization.ALWAYS):
            container = build_container({}, cache_dir=str(cache))
            container.gtfn.name.override(f"run_gtfn_cpu_{mode.value}")  # pools: by name
            override_step(
                container.gtfn.translation,
                functools.partial(make_gtfn_translation, materialization=mode),
            )
            programs[mode.value] = hdiff.PROGRAM.with_backend(container.gtfn.toolchain())
        made = hdiff.make_inputs(shape, np.random.default_rng(0))
        results: dict[str, Any] = {}
        for order in "CF":
            inp, coeff, out = (np.array(made[k], order=order) for k in ("inp", "coeff", "out"))
            reference = out.copy()
            programs["auto"](inp, coeff, reference)
            contenders: dict[str, Callable[[], Any]] = {
                "generated (auto)": functools.partial(programs["auto"], inp, coeff, out),
                "one point per iteration": functools.partial(
                    programs["recompute"], inp, coeff, out
                ),
                "generated tiles": functools.partial(programs["always"], inp, coeff, out),
                "sliding window": functools.partial(
                    sliding_window(lib, order, tile, slab), inp, coeff, out
                ),
            }
            for name, run in contenders.items():
                out[...] = 0.0
                run()
                if not np.array_equal(out, reference):
                    raise AssertionError(f"{name} ({order} order) differs from GTFN's hdiff")
            times: dict[str, list[float]] = {name: [] for name in contenders}
            for _ in range(rounds):
                for name, run in contenders.items():
                    times[name].append(median_seconds(run, repeat))
            gigabytes = 3 * inp.nbytes / 1e9
            base = statistics.median(times["generated (auto)"])
            results[order] = {
                name: {
                    "best_ms": min(t) * 1e3,
                    "median_ms": statistics.median(t) * 1e3,
                    "gb_per_s": gigabytes / statistics.median(t),
                    "speedup_over_generated": base / statistics.median(t),
                }
                for name, t in times.items()
            }
        return results
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="256,256,80")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--tile", type=int, default=64, help="J tile of the C-order schedule")
    parser.add_argument("--slab", type=int, default=32, help="I planes per work item (C order)")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    a, b, c = (int(n) for n in args.shape.split(","))
    load_start = os.getloadavg()
    results = figures((a, b, c), args.rounds, args.repeat, args.tile, args.slab)
    record = {
        "shape": [a, b, c],
        "threads": os.environ.get("OMP_NUM_THREADS", "unset"),
        "cpu": cpu_model(),
        "load_start": load_start,
        "load_end": os.getloadavg(),
        "results": results,
    }
    print(f"hdiff {a}x{b}x{c}, OMP_NUM_THREADS={record['threads']}, {record['cpu']}")
    print(f"load average {load_start[0]:.2f} at start, {record['load_end'][0]:.2f} at end")
    for order, rows in results.items():
        for name, r in rows.items():
            print(
                f"  {order}  {name:24} {r['median_ms']:8.2f} ms (best {r['best_ms']:.2f})"
                f"  {r['gb_per_s']:6.1f} GB/s  x{r['speedup_over_generated']:.2f}"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
