"""New-program compile time of every bundled example (the mesh examples among them), DaCe
side by side with GTFN.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/examples_compile.py [--families dace,gtfn]
        [--only hdiff,nabla] [--tree /path/to/another/checkout]

One fresh process per example and family, so that nothing another example translated is
cached in it (sympy's caches, DaCe's): it builds a container on a private temporary cache,
does the one-time set-up (compiles a small program of another shape), then compiles the
example's program and checks one run against the embedded executor. Printed per example:
the wall seconds of `toolchain.compile`, of its translation stage, and the load average;
`examples_compile_figures` returns the same as a dict (for `python -m benchmarks`).
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

CHILD = r"""
import json, shutil, sys, tempfile, time
import numpy as np
import stencilchain as sc
from stencilchain import examples
from stencilchain.containers import build_container

family, name = sys.argv[1], sys.argv[2]
module = {m.__name__.rsplit(".", 1)[-1]: m for m in examples.ALL_EXAMPLES}[name]
cache = tempfile.mkdtemp(prefix="stencilchain-bench-")
try:
    container = build_container({}, cache_dir=cache)
    toolchain = container.dace.toolchain() if family == "dace" else container.gtfn.toolchain()
    I = sc.Dimension("I")
    @sc.field_operator
    def setup_shift(f: sc.Field[[I], sc.float64]) -> sc.Field[[I], sc.float64]:
        return 3.5 * f(I + 1)
    @sc.program
    def setup_program(f: sc.Field[[I], sc.float64], out: sc.Field[[I], sc.float64]):
        setup_shift(f, out=out)
    toolchain.compile(setup_program)  # the one-time set-up
    stages = {}
    start = time.perf_counter()
    try:
        toolchain.compile(module.PROGRAM, hook=lambda r: stages.__setitem__(r.stage, r.seconds))
    except sc.UnsupportedError as error:
        print(json.dumps({"unsupported": str(error).splitlines()[0]}))
        sys.exit(0)
    wall = time.perf_counter() - start
    inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(0))
    expected = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inputs.items()}
    module.PROGRAM.with_backend(toolchain)(*inputs.values())
    module.PROGRAM(*expected.values())
    same = all(np.allclose(inputs[k], expected[k], rtol=1e-12, atol=0)
               for k, v in inputs.items() if isinstance(v, np.ndarray))
    print(json.dumps({"wall": wall, "translation": stages.get("translation"), "agrees": same}))
finally:
    shutil.rmtree(cache, ignore_errors=True)
"""


def example_names() -> list[str]:
    from stencilchain import examples

    return [m.__name__.rsplit(".", 1)[-1] for m in examples.ALL_EXAMPLES]


TREE = str(Path(__file__).resolve().parents[1])


def compile_one(family: str, name: str, tree: str = TREE) -> dict[str, Any]:
    """The figures of one example and family, from a fresh process of `tree` (by default
    the one this file belongs to)."""
    env = dict(os.environ, PYTHONPATH=tree)
    env.setdefault("OMP_NUM_THREADS", "2")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, family, name],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    row: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    row["load"] = round(os.getloadavg()[0], 2)
    return row


def examples_compile_figures(
    families: tuple[str, ...] = ("dace", "gtfn"), only: tuple[str, ...] = (), tree: str = TREE
) -> dict[str, dict[str, Any]]:
    """`{example: {family: {wall, translation, agrees, load}}}`, the families of an example
    one after the other (so the machine's load weighs on both alike)."""
    results: dict[str, dict[str, Any]] = {}
    for name in only or tuple(example_names()):
        results[name] = {family: compile_one(family, name, tree) for family in families}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default="dace,gtfn")
    parser.add_argument("--only", default="", help="comma-separated example names")
    parser.add_argument("--tree", default=TREE, help="the checkout to measure")
    args = parser.parse_args()
    families = tuple(f for f in args.families.split(",") if f)
    only = tuple(n for n in args.only.split(",") if n)
    print(f"load average at start: {os.getloadavg()}")
    figures = examples_compile_figures(families, only, args.tree)
    print(f"{'example':22}" + "".join(f"{f + ' s (transl.)':>24}" for f in families))
    for name, row in figures.items():
        cells = []
        for family in families:
            r = row[family]
            if "wall" in r:
                cells.append(f"{r['wall']:8.2f} ({r['translation']:.2f}) l{r['load']:.1f}")
            else:
                cells.append(str(r.get("unsupported", r.get("error")))[:22])
        print(f"{name:22}" + "".join(f"{c:>24}" for c in cells))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
