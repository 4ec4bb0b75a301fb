"""hdiff 256x256x80 on the DaCe CPU toolchains against a compiled copy of the same arrays.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/hdiff_bandwidth.py [--shape 256,256,80]

For C and Fortran order, the median wall-clock time (and CPU time of all threads) of one
call of: `copy` (a field operator returning its argument, through `run_dace_cpu`), the
one-call `hdiff` and the staged `hdiff_staged` on `run_dace_cpu` and on
`run_dace_cpu_noopt`. The fraction is hdiff's bandwidth over the copy's, counting unique
bytes (hdiff: inp and coeff read, out written, 3 arrays; copy: 2 arrays). Every result is
checked against `hdiff.reference` first. Uses a private temporary cache, never the user's.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import stencilchain as sc
from stencilchain.containers import build_container
from stencilchain.examples import hdiff, hdiff_staged


@sc.field_operator
def ident(f: hdiff.Field3D) -> hdiff.Field3D:
    return f


@sc.program
def copy3(f: hdiff.Field3D, out: hdiff.Field3D) -> None:
    ident(f, out=out)


def median_seconds(fn: Callable[..., None], *args: Any, repeat: int = 15) -> tuple[float, float]:
    """Medians of the wall-clock and of the CPU time (all threads) of one call."""
    fn(*args)
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn(*args)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return float(np.median(wall)), float(np.median(cpu))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shape", default="256,256,80")
    shape = tuple(int(n) for n in parser.parse_args().shape.split(","))
    cache = tempfile.mkdtemp(prefix="stencilchain-bench-")
    plain = build_container({}, cache_dir=cache, auto_optimize=False)
    plain.dace.name.override("run_dace_cpu_noopt")  # pools are keyed by the name
    toolchains = {
        "run_dace_cpu": build_container({}, cache_dir=cache).dace.toolchain(),
        "run_dace_cpu_noopt": plain.dace.toolchain(),
    }
    print(f"shape {shape}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    print(f"load average before: {os.getloadavg()}")
    rng = np.random.default_rng(0)
    for order in "CF":
        inputs = {k: np.asarray(v, order=order) for k, v in hdiff.make_inputs(shape, rng).items()}
        expected = hdiff.reference(**{k: v.copy() for k, v in inputs.items()})["out"]
        copy = copy3.with_backend(toolchains["run_dace_cpu"])
        t_copy, c_copy = median_seconds(copy, inputs["inp"], inputs["out"])
        nbytes = inputs["inp"].nbytes
        copy_gbs = 2 * nbytes / t_copy / 1e9
        print(
            f"{order}: copy {t_copy * 1e3:7.2f} ms ({copy_gbs:5.1f} GB/s, cpu {c_copy * 1e3:.1f} ms)"
        )
        for name, toolchain in toolchains.items():
            for module in (hdiff, hdiff_staged):
                bound = module.PROGRAM.with_backend(toolchain)
                out = np.zeros(shape, order=order)
                bound(inputs["inp"], inputs["coeff"], out)
                np.testing.assert_array_equal(out, expected)
                t, c = median_seconds(bound, inputs["inp"], inputs["coeff"], out)
                gbs = 3 * nbytes / t / 1e9
                label = module.__name__.rsplit(".", 1)[-1]
                print(
                    f"{order}: {label:13s} {name:19s} {t * 1e3:7.2f} ms ({gbs:5.1f} GB/s, "
                    f"{gbs / copy_gbs:4.0%} of copy, cpu {c * 1e3:.1f} ms)"
                )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
