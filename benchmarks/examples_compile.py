"""New-program compile time of every bundled example (the mesh examples among them), DaCe
side by side with GTFN.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/examples_compile.py [--families dace,gtfn]
        [--only hdiff,nabla] [--trees /path/to/old/checkout,/path/to/new/checkout]

One fresh process per example, family and tree, so that nothing another example translated
is cached in it (sympy's caches, DaCe's): it builds a container on a private temporary
cache, does the one-time set-up (the workflow's `prepare`: DaCe's imports, the tools; then
a small program of another shape compiled), then compiles the example's program and checks
one run against the embedded executor. Printed per example, the families and trees one
after the other: the wall seconds of `toolchain.compile` and of its translation stage,
DaCe's code generation and the C++ build (DaCe's build of its code; for GTFN CMake's
configure and build), the CPU seconds of the compiling process and of its compiler
processes, the one-time set-up, and the load average; `examples_compile_figures` returns
the same as a dict (for `python -m benchmarks`). Nothing is asserted.
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
import json, resource, shutil, sys, tempfile, time
import numpy as np
import stencilchain as sc
from stencilchain import examples
from stencilchain.containers import build_container

def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime

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
    start = time.perf_counter()
    toolchain.workflow.prepare()  # the one-time set-up: imports, tools, ...
    toolchain.compile(setup_program)  # ... and a first build
    setup = time.perf_counter() - start
    stages = {}
    before, start = cpu(), time.perf_counter()
    try:
        compiled = toolchain.compile(
            module.PROGRAM, hook=lambda r: stages.__setitem__(r.stage, r.seconds)
        )
    except sc.UnsupportedError as error:
        print(json.dumps({"unsupported": str(error).splitlines()[0]}))
        sys.exit(0)
    wall, after = time.perf_counter() - start, cpu()
    meta = compiled.artifact.metadata
    if family == "dace":
        codegen, native = float(meta["codegen_seconds"]), float(meta["dace_compile_seconds"])
    else:
        codegen = None
        native = float(meta.get("configure_seconds", 0)) + float(meta.get("compile_seconds", 0))
    inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(0))
    expected = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inputs.items()}
    module.PROGRAM.with_backend(toolchain)(*inputs.values())
    module.PROGRAM(*expected.values())
    same = all(np.allclose(inputs[k], expected[k], rtol=1e-12, atol=0)
               for k, v in inputs.items() if isinstance(v, np.ndarray))
    print(json.dumps({
        "wall": wall, "translation": stages.get("translation"),
        "compilation": stages.get("compilation"), "codegen": codegen, "native_build": native,
        "python_cpu": after[0] - before[0], "compiler_cpu": after[1] - before[1],
        "setup": setup, "agrees": same,
    }))
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
    """`{example: {family: {wall, translation, compilation, codegen, native_build, python_cpu,
    compiler_cpu, setup, agrees, load}}}`, the families of an example one after the other
    (so the machine's load weighs on both alike)."""
    results: dict[str, dict[str, Any]] = {}
    for name in only or tuple(example_names()):
        results[name] = {family: compile_one(family, name, tree) for family in families}
    return results


def _cell(value: Any) -> str:
    return f"{value:7.2f}" if isinstance(value, (int, float)) else f"{'-':>7}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default="dace,gtfn")
    parser.add_argument("--only", default="", help="comma-separated example names")
    parser.add_argument(
        "--trees", "--tree", default=TREE, help="the checkouts to measure, comma-separated"
    )
    args = parser.parse_args()
    families = tuple(f for f in args.families.split(",") if f)
    only = tuple(n for n in args.only.split(",") if n)
    trees = [t for t in args.trees.split(",") if t]
    print(f"load average at start: {os.getloadavg()}")
    # per example, the families and trees one after the other (the load weighs on all alike)
    figures: dict[str, dict[str, dict[str, Any]]] = {}
    for name in only or tuple(example_names()):
        for tree in trees:
            for family in families:
                figures.setdefault(name, {})[f"{family} {tree}"] = compile_one(family, name, tree)
    columns = ("wall", "translation", "codegen", "native_build", "python_cpu", "compiler_cpu")
    print(
        "seconds; codegen: DaCe's code generation; native_build: DaCe's C++ build (DaCe) or "
        "CMake's configure + build (GTFN); cpu: of the compiling process and its compilers"
    )
    print(f"{'example':20}{'family tree':>40}" + "".join(f"{c[:11]:>12}" for c in columns)
          + f"{'setup':>8}{'load':>6}")  # fmt: skip
    for name, row in figures.items():
        for label, r in row.items():
            if "wall" not in r:
                print(f"{name:20}{label[-40:]:>40}  {r.get('unsupported', r.get('error'))}")
                continue
            cells = "".join(f"{_cell(r.get(c)):>12}" for c in columns)
            agrees = "" if r.get("agrees") else "  DISAGREES WITH THE EMBEDDED EXECUTOR"
            print(
                f"{name:20}{label[-40:]:>40}{cells}{_cell(r['setup']):>8}{r['load']:6.1f}{agrees}"
            )
    print(f"load average at the end: {os.getloadavg()}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
