"""Start-up: `import stencilchain` against `import numpy`, and the first call of a cached
program in a fresh process, broken down, in fresh processes interleaved over rounds (each
round runs every case once, so that a change of the machine's load touches them alike).

- imports: `python -c pass`, `import numpy`, `import stencilchain`, `import
  stencilchain as sc; sc.field_operator; sc.program` (what a module defining a stencil
  pays before its first decorator), and `import numpy, startup_define` (a module that
  defines one field operator and one program: what a user's module pays), wall time and
  CPU time (user + system, the child's) of the whole process: the ratios to `import
  numpy` of both (CPU time is what a busy machine does not inflate);
- first call of a cached program (the Laplacian of benchmarks/figures.py, built in the
  private cache by this process first), per family, in a fresh process: the import of
  numpy and of the programs' module, the import of `stencilchain.containers`, the
  toolchain (the container and its `toolchain()`), then the first call, and inside it (an
  in-memory trace, `sc.trace`) the load index's hit (`index`: the program's key, the
  entry, the build's marker check; docs/adr/0039-load-index.md) or, without one, the
  translation (the translation cache's lookup), the bindings and the compilation (the
  build cache's lookup and marker check), and the load of the module; `first_call_s` is
  the figure of the target (<= 3 ms). Each fresh process checks that every cache it asked
  answered "hit" (no build ran).

    OMP_NUM_THREADS=1 python -m benchmarks.startup [--rounds 9] [--families gtfn,dace]
        [--trees /path/to/old/checkout,/path/to/new/checkout]

prints the medians (`python -m benchmarks --only startup` runs them with the table).
`--trees` measures two (or more) checkouts side by side: each round runs every case of
every tree once, so that the machine's load weighs on them alike; each tree compiles the
program into the cache in a process of its own first. Uses a private temporary cache,
never the user's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/startup.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from benchmarks._common import _outside_checkouts

IMPORTS = {
    "python": "pass",
    "numpy": "import numpy",
    "stencilchain": "import stencilchain",
    "stencilchain_dsl": "import stencilchain as sc; sc.field_operator; sc.program",
    "stencilchain_define": "import numpy, startup_define",
}

# The user's module of the last import: one field operator and one program.
DEFINE = textwrap.dedent(
    """
    import stencilchain as sc

    I, J = sc.Dimension("I"), sc.Dimension("J")
    F = sc.Field[[I, J], sc.float64]


    @sc.field_operator
    def laplacian(f: F) -> F:
        return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


    @sc.program
    def smooth(f: F, out: F):
        laplacian(f, out=out)
    """
)

FIRST_CALL = textwrap.dedent(
    """
    import time
    t0 = time.perf_counter()
    import json
    import numpy as np
    import bench_programs as p
    t1 = time.perf_counter()
    import stencilchain.containers as containers
    t2 = time.perf_counter()
    tc = getattr(containers.build_container(), {family!r}).toolchain()
    t3 = time.perf_counter()
    from stencilchain.runtime import tracing
    recording = tracing.start(tracing.Trace())
    f = np.ones((64, 64)); out = np.zeros_like(f)
    bound = p.laplacian.with_backend(tc)
    t4, c4 = time.perf_counter(), time.process_time()
    bound(f, out)
    t5, c5 = time.perf_counter(), time.process_time()
    bound(f, out)
    t6 = time.perf_counter()
    tracing.stop()
    stages = {{}}
    caches = {{}}
    for event in recording.events:
        if event.get("ph") == "X" and event["cat"] != "call":
            stages[event["cat"]] = stages.get(event["cat"], 0.0) + event["dur"] * 1e-6
            if "cache" in event.get("args", {{}}):
                caches[event["cat"]] = event["args"]["cache"]
    print(json.dumps({{
        "import_numpy_and_programs_s": t1 - t0,
        "import_containers_s": t2 - t1,
        "toolchain_s": t3 - t2,
        "first_call_s": t5 - t4,
        "first_call_cpu_s": c5 - c4,
        "second_call_s": t6 - t5,
        "stages_s": stages,
        "caches": caches,
    }}))
    """
)


def _same_tree(env: dict[str, str]) -> dict[str, str]:
    """`env` with the tree that this process imports stencilchain from first on PYTHONPATH
    (after the programs' folder): the fresh processes time the same code."""
    import stencilchain

    tree = str(Path(stencilchain.__file__).resolve().parents[1])
    parts = env.get("PYTHONPATH", "").split(os.pathsep)
    if tree in parts:
        return env
    return env | {"PYTHONPATH": os.pathsep.join([*parts[:1], tree, *parts[1:]])}


def _wall(code: str, env: dict[str, str]) -> tuple[float, float]:
    """The wall time and the CPU time (user + system) of a fresh process running `code`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=_outside_checkouts(env))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _first_call(family: str, env: dict[str, str]) -> dict[str, Any]:
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", FIRST_CALL.format(family=family)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=_outside_checkouts(env),
    ).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - start
    return result


def startup_figures(
    toolchains: dict[str, Any], programs: Any, env: dict[str, str], rounds: int
) -> dict[str, Any]:
    """The medians over `rounds` interleaved rounds of the imports and, per family in
    `toolchains`, of the first call of a cached program in a fresh process. `programs` is
    benchmarks.figures' module of programs (on the fresh processes' PYTHONPATH)."""
    env = _same_tree(env)
    (Path(programs.__file__).parent / "startup_define.py").write_text(DEFINE)
    for tc in toolchains.values():
        tc.compile(programs.laplacian)  # in the cache before any fresh process runs
    return _measure({"": env}, list(toolchains), rounds)[""]


def tree_figures(
    trees: list[str], families: list[str], cache: Path, rounds: int
) -> dict[str, dict[str, Any]]:
    """`startup_figures` of each checkout in `trees` (folders holding `stencilchain/`),
    their fresh processes interleaved in the same rounds; each tree compiles the program of
    each family in `families` into the private `cache` in a process of its own first."""
    from benchmarks.figures import PROGRAMS, fresh_process_env

    (cache / "bench_programs.py").write_text(PROGRAMS)
    (cache / "startup_define.py").write_text(DEFINE)
    base = fresh_process_env(cache)
    envs = {}
    for tree in trees:
        env = base | {"PYTHONPATH": os.pathsep.join([str(cache), str(Path(tree).resolve())])}
        compile_code = (
            "import bench_programs as p, stencilchain.containers as c; k = c.build_container()\n"
            f"for family in {families!r}: getattr(k, family).toolchain().compile(p.laplacian)"
        )
        subprocess.run(
            [sys.executable, "-c", compile_code], env=env, check=True, cwd=_outside_checkouts(env)
        )
        envs[tree] = env
    return _measure(envs, families, rounds)


def _measure(
    envs: dict[str, dict[str, str]], families: list[str], rounds: int
) -> dict[str, dict[str, Any]]:
    """The figures of `startup_figures` for each environment of `envs` (a tree each), over
    `rounds` rounds that run every case of every environment once."""
    for env in envs.values():
        for code in IMPORTS.values():  # writes the bytecode (PYTHONPYCACHEPREFIX)
            _wall(code, env)
        for family in families:
            _first_call(family, env)
    imports: dict[str, dict[str, list[tuple[float, float]]]] = {
        tree: {name: [] for name in IMPORTS} for tree in envs
    }
    calls: dict[str, dict[str, list[dict[str, Any]]]] = {
        tree: {family: [] for family in families} for tree in envs
    }
    for _ in range(max(1, rounds)):
        for tree, env in envs.items():
            for name, code in IMPORTS.items():
                imports[tree][name].append(_wall(code, env))
            for family in families:
                calls[tree][family].append(_first_call(family, env))
    return {tree: _medians(imports[tree], calls[tree], rounds) for tree in envs}


def _medians(
    imports: dict[str, list[tuple[float, float]]],
    calls: dict[str, list[dict[str, Any]]],
    rounds: int,
) -> dict[str, Any]:
    results: dict[str, Any] = {
        "rounds": max(1, rounds),
        "imports_s": {name: statistics.median(w for w, _ in v) for name, v in imports.items()},
        "imports_cpu_s": {name: statistics.median(c for _, c in v) for name, v in imports.items()},
    }
    for what, key in (("", "imports_s"), ("_cpu", "imports_cpu_s")):
        numpy = results[key]["numpy"]
        for name in ("stencilchain", "stencilchain_dsl", "stencilchain_define"):
            results[f"import_{name}_vs_numpy{what}"] = results[key][name] / numpy
    for family, runs in calls.items():
        row: dict[str, Any] = {
            key: statistics.median(r[key] for r in runs)
            for key, value in runs[0].items()
            if isinstance(value, float)
        }
        stages = sorted({stage for r in runs for stage in r["stages_s"]})
        row["stages_s"] = {
            stage: statistics.median(r["stages_s"].get(stage, 0.0) for r in runs)
            for stage in stages
        }
        row["all_cache_hits"] = all(
            set(r["caches"].values()) == {"hit"} and r["caches"] for r in runs
        )
        results[family] = row
    return results


def format_figures(results: dict[str, Any]) -> str:
    lines = [f"medians over {results['rounds']} interleaved rounds of fresh processes"]
    lines.append(f"  {'':60s} {'wall':>8s}    {'CPU':>8s}    vs numpy (wall, CPU)")
    for name, seconds in results["imports_s"].items():
        cpu = results["imports_cpu_s"][name]
        ratios = ""
        if name.startswith("stencilchain"):
            ratios = (
                f"{results[f'import_{name}_vs_numpy']:.2f}x, "
                f"{results[f'import_{name}_vs_numpy_cpu']:.2f}x"
            )
        lines.append(f"  {IMPORTS[name]:60s} {1e3 * seconds:8.1f} ms {1e3 * cpu:8.1f} ms  {ratios}")
    for family, row in results.items():
        if not isinstance(row, dict) or "first_call_s" not in row:
            continue
        lines.append(f"  {family}: first call of a cached program, fresh process")
        for key in ("process_s", "import_numpy_and_programs_s", "import_containers_s",
                    "toolchain_s", "first_call_s", "first_call_cpu_s", "second_call_s"):  # fmt: skip
            lines.append(f"    {key:40s} {1e3 * row[key]:8.2f} ms")
        for stage, seconds in row["stages_s"].items():
            lines.append(f"      {stage:38s} {1e3 * seconds:8.2f} ms")
        lines.append(f"    every cache answered hit: {row['all_cache_hits']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--families", default="gtfn,dace")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--trees", default="", help="checkouts to interleave, comma-separated")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from benchmarks._common import make_toolchains
    from benchmarks.figures import fresh_process_env, load_programs

    cache = Path(tempfile.mkdtemp(prefix="stencilchain-bench-"))
    if args.trees:
        try:
            load = os.getloadavg()
            trees = [tree for tree in args.trees.split(",") if tree]
            by_tree = tree_figures(trees, args.families.split(","), cache, args.rounds)
            end = os.getloadavg()
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        if args.json:
            print(json.dumps({"trees": by_tree, "loadavg": [load, end]}, indent=2))
            return
        for tree, figures in by_tree.items():
            print(f"{tree}:")
            print(format_figures(figures))
        print(f"load average (1 min) start {load[0]:.2f}, end {end[0]:.2f}")
        return
    try:
        env = fresh_process_env(cache)
        os.environ["STENCILCHAIN_CACHE_DIR"] = str(cache)
        notes: list[str] = []
        toolchains = make_toolchains(args.families.split(","), cache, notes)
        load = os.getloadavg()
        results = startup_figures(toolchains, load_programs(cache), env, args.rounds)
        results["loadavg"] = [load, os.getloadavg()]
        results["notes"] = notes
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(format_figures(results))
    print(f"load average (1 min) start {load[0]:.2f}, end {results['loadavg'][1][0]:.2f}")
    for note in notes:
        print(f"note: {note}")


if __name__ == "__main__":
    main()
