"""The speed figures of the design (docs/guide/backends.md shows the latest) for GTFN and
DaCe, side by side with baselines, in one run.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/figures.py [--json] [--families gtfn,dace]

Figures: import time, cold compile of a new program, first call of a cached program in a
fresh process, call overhead (2 fields; 25 fields + 2 scalars), and 4096x4096 Laplacian
throughput for C- and Fortran-order arrays against np.copyto bandwidth. Uses a private
temporary cache, never the user's.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
import timeit
from pathlib import Path
from typing import Any

import numpy as np

PROGRAMS = """
import stencilchain as sc
I, J = sc.Dimension("I"), sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]

@sc.field_operator
def copy(f: F) -> F:
    return f

@sc.program
def two_fields(f: F, out: F):
    copy(f, out=out)

@sc.field_operator
def lap(f: F) -> F:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)

@sc.program
def laplacian(f: F, out: F):
    lap(f, out=out)

N_IN = 24

def _many_body(*args):
    fields, a, b = args[:-2], args[-2], args[-1]
    total = fields[0]
    for f in fields[1:]:
        total = total + f
    return a * total + b

def _many_fop():
    import inspect
    params = [inspect.Parameter(f"f{k}", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=F) for k in range(N_IN)]
    params += [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=sc.float64) for n in ("a", "b")]
    def many(*args):
        return _many_body(*args)
    many.__signature__ = inspect.Signature(params, return_annotation=F)
    many.__annotations__ = {p.name: p.annotation for p in params} | {"return": F}
    many.__name__ = "many"
    return sc.field_operator(many)

many = _many_fop()

def _many_program():
    import inspect
    names = [f"f{k}" for k in range(N_IN)]
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=F) for n in names + ["out"]]
    params += [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=sc.float64) for n in ("a", "b")]
    def fields25(*args):
        many(*args[:N_IN], args[-2], args[-1], out=args[N_IN])
    fields25.__signature__ = inspect.Signature(params)
    fields25.__annotations__ = {p.name: p.annotation for p in params}
    fields25.__name__ = "fields25"
    return sc.program(fields25)

fields25 = _many_program()
"""


def load_programs(folder: Path) -> Any:
    path = folder / "bench_programs.py"
    path.write_text(PROGRAMS)
    sys.path.insert(0, str(folder))
    import bench_programs  # type: ignore[import-not-found]

    return bench_programs


def best(fn: Any, number: int, repeat: int = 5) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def median_of(fn: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def fresh_process_seconds(code: str, env: dict[str, str]) -> float:
    """Median wall time of `python -c code` over 5 runs."""
    return median_of(lambda: subprocess.run([sys.executable, "-c", code], env=env, check=True), 5)


def fresh_process_cpu_seconds(code: str, env: dict[str, str]) -> float:
    """Median CPU time (user + system) of `python -c code` over 5 runs: on a machine that
    others share, wall time measures their load as much as the code."""

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    times = []
    for _ in range(5):
        before = cpu()
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        times.append(cpu() - before)
    return float(np.median(times))


def family_figures(
    family: str, cache: Path, env: dict[str, str], programs: Any, size: int
) -> dict[str, Any]:
    """Compile, first-call, call-overhead and throughput figures of one toolchain family."""
    from stencilchain.containers import build_container

    results: dict[str, Any] = {}
    toolchain = getattr(build_container({}, cache_dir=cache), family).toolchain()

    # one-time set-up (tool detection, prototype build folders), then cold compiles
    start = time.perf_counter()
    toolchain.compile(programs.two_fields)
    results["first_compile_with_setup_s"] = time.perf_counter() - start
    colds = []
    for k in range(3):
        name = f"{family}{k}"
        src = (
            PROGRAMS
            + f"\n@sc.field_operator\ndef fresh_{name}(f: F) -> F:\n    return {k + 2}.5 * f(I + 1)\n"
        )
        src += f"\n@sc.program\ndef new_{name}(f: F, out: F):\n    fresh_{name}(f, out=out)\n"
        path = cache / f"fresh_{name}.py"
        path.write_text(src)
        ns: dict[str, Any] = {}
        exec(compile(src, str(path), "exec"), ns)
        start = time.perf_counter()
        toolchain.compile(ns[f"new_{name}"])
        colds.append(time.perf_counter() - start)
    results["cold_compile_s"] = float(np.median(colds))

    # first call in a fresh process of a program already in the persistent cache
    toolchain.compile(programs.laplacian)
    call_code = textwrap.dedent(
        f"""
        import time
        import numpy as np, bench_programs as p
        from stencilchain.containers import build_container
        tc = build_container().{family}.toolchain()
        f = np.ones((64, 64)); out = np.zeros_like(f)
        t1, c1 = time.perf_counter(), time.process_time()
        p.laplacian.with_backend(tc)(f, out)
        print(time.perf_counter() - t1)
        print(time.process_time() - c1)
        """
    )
    firsts = [
        [float(line) for line in subprocess.run(
            [sys.executable, "-c", call_code], env=env, check=True, capture_output=True, text=True
        ).stdout.split()]
        for _ in range(5)
    ]  # fmt: skip
    results["first_call_cached_fresh_process_s"] = float(np.median([w for w, _ in firsts]))
    results["first_call_cached_fresh_process_cpu_s"] = float(np.median([c for _, c in firsts]))

    # steady-state call overhead (tiny arrays: the work is negligible)
    f = np.ones((4, 4))
    out = np.zeros_like(f)
    bound = programs.two_fields.with_backend(toolchain)
    bound(f, out)
    results["call_2_fields_s"] = best(lambda: bound(f, out), 20000)
    fs = [np.ones((4, 4)) for _ in range(24)]
    out25 = np.zeros((4, 4))
    bound25 = programs.fields25.with_backend(toolchain)
    bound25(*fs, out25, 0.5, 1.0)
    results["call_25_fields_2_scalars_s"] = best(lambda: bound25(*fs, out25, 0.5, 1.0), 20000)

    # Laplacian throughput, C and Fortran order, against np.copyto
    for order in ("C", "F"):
        src_arr = np.asarray(np.random.default_rng(0).random((size, size)), order=order)
        dst = np.zeros_like(src_arr, order=order)
        lap = programs.laplacian.with_backend(toolchain)
        lap(src_arr, dst)
        t_lap = best(functools.partial(lap, src_arr, dst), 3, repeat=5)
        t_copy = best(functools.partial(np.copyto, dst, src_arr), 3, repeat=5)
        results[f"laplacian_{order}_GBps"] = 2 * src_arr.nbytes / t_lap / 1e9
        results[f"laplacian_{order}_vs_copyto"] = t_copy / t_lap
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--families", default="gtfn,dace")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    cache = Path(tempfile.mkdtemp(prefix="stencilchain-bench-"))
    # `python -c` puts the working directory first on sys.path: run in the cache, so that a
    # checkout in the working directory does not shadow the one PYTHONPATH gives
    os.chdir(cache)
    # the caller's PYTHONPATH is kept after the cache: a checkout given there (to compare two
    # trees side by side) is the one the fresh processes import too
    path = os.pathsep.join([str(cache), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = dict(os.environ, STENCILCHAIN_CACHE_DIR=str(cache), PYTHONPATH=path)
    os.environ.update(STENCILCHAIN_CACHE_DIR=str(cache))
    # the fresh processes run as an installed package does: with bytecode (in a private
    # folder, written by a first import), whatever PYTHONDONTWRITEBYTECODE the shell sets;
    # without it every process compiles the package's sources again
    no_bytecode = dict(env, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cache / "pycache")
    subprocess.run([sys.executable, "-c", "import stencilchain.containers"], env=env, check=True)

    # import time, against an empty interpreter and numpy alone
    results["import_stencilchain_s"] = fresh_process_seconds("import stencilchain", env)
    results["import_stencilchain_no_bytecode_s"] = fresh_process_seconds(
        "import stencilchain", no_bytecode
    )
    results["import_baseline_python_s"] = fresh_process_seconds("pass", env)
    results["import_baseline_numpy_s"] = fresh_process_seconds("import numpy", env)
    for name, code in (("stencilchain", "import stencilchain"), ("baseline_numpy", "import numpy")):
        results[f"import_{name}_cpu_s"] = fresh_process_cpu_seconds(code, env)
    results["import_stencilchain_loads_dace"] = subprocess.run(
        [sys.executable, "-c", "import sys, stencilchain; print('dace' in sys.modules)"],
        env=env, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip

    programs = load_programs(cache)
    # baselines: a no-op Python call, the embedded executor, np.copyto bandwidth
    f = np.ones((4, 4))
    out = np.zeros_like(f)

    def noop(*a: Any) -> None:
        return None

    results["baseline_call_python_noop_s"] = best(lambda: noop(f, out), 20000)
    results["baseline_call_2_fields_embedded_s"] = best(lambda: programs.two_fields(f, out), 2000)
    big = np.random.default_rng(0).random((args.size, args.size))
    big_out = np.zeros_like(big)
    t_copy = best(functools.partial(np.copyto, big_out, big), 3, repeat=5)
    results["baseline_copyto_GBps"] = 2 * big.nbytes / t_copy / 1e9
    results["baseline_laplacian_numpy_s"] = best(
        functools.partial(programs.laplacian, big, big_out), 1, repeat=3
    )

    for family in args.families.split(","):
        for key, value in family_figures(family, cache, env, programs, args.size).items():
            results[f"{family}.{key}"] = value

    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for key, value in results.items():
            unit = ""
            if key.endswith("_s"):
                small = value < 1e-3
                value, unit = (value * 1e6, "us") if small else (value * 1e3, "ms")
            print(
                f"{key:50s} {value:>10.2f} {unit}"
                if isinstance(value, float)
                else f"{key:50s} {value:>10}"
            )


if __name__ == "__main__":
    main()
