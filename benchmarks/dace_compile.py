"""New-program compile time of the DaCe toolchain, by stage, side by side for source trees.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/dace_compile.py [--repeat N] [--rounds R]
        [--trees /path/to/old/checkout,/path/to/new/checkout]

Each tree runs in its own process (PYTHONPATH=<tree>), the trees alternating for `rounds`
rounds: a process builds a container on a private temporary cache, compiles one program
(the one-time set-up), then `repeat` programs never seen before, each checked against the
embedded executor. Printed per tree: median wall seconds of `toolchain.compile`, the
workflow's stages, the build's own timings (DaCe's code generation, DaCe's compile), and
the CPU seconds of this process and of the compiler processes, with the load average.
Nothing is asserted. Without --trees, the tree this file belongs to.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, os, resource, sys, tempfile, time
from pathlib import Path
import numpy as np
import stencilchain as sc
from stencilchain.containers import build_container

SOURCE = '''
import stencilchain as sc
I, J = sc.Dimension("I"), sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]
@sc.field_operator
def fresh_{name}(f: F) -> F:
    return {k}.5 * f(I + 1) + f(J - 1)
@sc.program
def new_{name}(f: F, out: F):
    fresh_{name}(f, out=out)
'''

def program(name, k):
    ns = {}
    exec(compile(SOURCE.format(name=name, k=k), f"<{name}>", "exec"), ns)
    return ns[f"new_{name}"]

def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime

repeat, tag = int(sys.argv[1]), sys.argv[2]
cache = Path(tempfile.mkdtemp(prefix="stencilchain-bench-"))
toolchain = build_container({}, cache_dir=cache).dace.toolchain()
start = time.perf_counter()
toolchain.compile(program(f"setup_{tag}", 1))
rows = [{"setup": time.perf_counter() - start, "tree": str(Path(sc.__file__).parent.resolve())}]
for k in range(repeat):
    p = program(f"p{k}_{tag}", k + 2)
    stages = {}
    before, start = cpu(), time.perf_counter()
    compiled = toolchain.compile(p, hook=lambda r: stages.__setitem__(r.stage, r.seconds))
    wall, after = time.perf_counter() - start, cpu()
    f = np.random.default_rng(k).random((8, 9))
    out, expected = np.zeros_like(f), np.zeros_like(f)
    p.with_backend(toolchain)(f, out)
    p(f, expected)
    assert np.array_equal(out, expected)
    meta = compiled.artifact.metadata
    rows.append({
        "wall": wall, **stages,
        "codegen": float(meta["codegen_seconds"]),
        "dace_compile": float(meta["dace_compile_seconds"]),
        "python_cpu": after[0] - before[0], "compiler_cpu": after[1] - before[1],
    })
print(json.dumps(rows))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="new programs per process")
    parser.add_argument("--rounds", type=int, default=2, help="processes per tree")
    parser.add_argument("--trees", default=str(Path(__file__).resolve().parents[1]))
    args = parser.parse_args()
    trees = args.trees.split(",")
    results: dict[str, list[dict[str, float]]] = {tree: [] for tree in trees}
    setups: dict[str, list[float]] = {tree: [] for tree in trees}  # the one-time set-ups
    loads = []
    for round_ in range(args.rounds):
        for index, tree in enumerate(trees):
            env = dict(os.environ, PYTHONPATH=tree)
            env.setdefault("OMP_NUM_THREADS", "2")
            tag = f"t{index}_r{round_}_{os.getpid()}"
            # cwd: `python -c` puts the working folder first on sys.path
            done = subprocess.run(
                [sys.executable, "-c", CHILD, str(args.repeat), tag],
                env=env,
                cwd=tree,
                check=True,
                capture_output=True,
                text=True,
            )
            rows = json.loads(done.stdout.strip().splitlines()[-1])
            assert rows[0]["tree"] == str(Path(tree, "stencilchain").resolve()), rows[0]
            setups[tree].append(rows[0]["setup"])
            results[tree] += rows[1:]
            loads.append(os.getloadavg()[0])
    print(f"DaCe new-program compile, {args.repeat} programs x {args.rounds} processes per tree")
    print(f"load average (1 min) during the runs: {min(loads):.2f} .. {max(loads):.2f}")
    for tree in trees:
        rows = results[tree]
        medians = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
        print(f"  {tree}")
        print(f"    one-time set-up (first compile): {statistics.median(setups[tree]):.2f} s")
        print("    median " + ", ".join(f"{key} {value:.3f}" for key, value in medians.items()))
        print("    walls  " + " ".join(f"{r['wall']:.2f}" for r in rows))


if __name__ == "__main__":
    main()
