"""The per-call and per-program figures of the design, side by side with baselines:

- `import_figures`: `import stencilchain` against `python -c pass` and `import numpy`;
- `compile_figures`: the first compile in a fresh cache (one-time set-up included), a new
  program (median of 3), and 50 new programs serially against `compile_many` (from
  benchmarks.compile_many, when there is one);
- `warm_start_figures`: the first call in a fresh process of a program in the cache;
- `call_overhead_figures`: a call of a 2-field program on 8x8 and of a 25 fields + 2
  scalars one, against an empty C extension call with the same arguments.

    OMP_NUM_THREADS=2 python benchmarks/figures.py [--json] [--families gtfn,dace]

prints these figures (`python -m benchmarks` runs them with every other figure). Uses a
private temporary cache, never the user's.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as `python benchmarks/figures.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from benchmarks._common import (
    fresh_process_seconds,
    fresh_process_value,
    make_toolchains,
    per_call_seconds,
)
from benchmarks.empty_call import build_empty_call

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
    """The programs above, written to `folder` (which goes on sys.path, for this process
    and, through PYTHONPATH, for the fresh ones) and imported."""
    path = folder / "bench_programs.py"
    path.write_text(PROGRAMS)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    import bench_programs  # type: ignore[import-not-found]

    return bench_programs


def fresh_process_env(cache: Path) -> dict[str, str]:
    """The environment of the fresh processes: the private cache, its folder (with the
    programs) on PYTHONPATH before the caller's (a checkout given there, to compare two
    trees side by side, is the one they import too), and no other STENCILCHAIN_ setting:
    their toolchains are the defaults, as the ones of this process."""
    path = os.pathsep.join([str(cache), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = {k: v for k, v in os.environ.items() if not k.startswith("STENCILCHAIN_")}
    # with bytecode, as an installed package runs (a private folder, written by the first
    # import), whatever PYTHONDONTWRITEBYTECODE the shell sets
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cache / "pycache")
    return env | {"STENCILCHAIN_CACHE_DIR": str(cache), "PYTHONPATH": path}


def import_figures(env: dict[str, str], repeat: int) -> dict[str, Any]:
    """`import stencilchain` in a fresh process, against `pass` and `import numpy` (after
    one import that writes the bytecode)."""
    fresh_process_seconds("import stencilchain.containers", env, 1)
    results: dict[str, Any] = {
        "import_stencilchain_s": fresh_process_seconds("import stencilchain", env, repeat),
        # the DSL's modules load on first use (stencilchain/__init__.py): what a user's
        # module that defines a stencil pays
        "import_stencilchain_dsl_s": fresh_process_seconds(
            "import stencilchain as sc; sc.field_operator", env, repeat
        ),
        "baseline_python_s": fresh_process_seconds("pass", env, repeat),
        "baseline_numpy_s": fresh_process_seconds("import numpy", env, repeat),
    }
    results["loads_dace"] = subprocess.run(
        [sys.executable, "-c", "import sys, stencilchain; print('dace' in sys.modules)"],
        env=env, check=True, capture_output=True, text=True,
    ).stdout.strip() == "True"  # fmt: skip
    return results


def compile_figures(
    family: str, toolchain: Any, programs: Any, folder: Path, repeat: int, many: int
) -> dict[str, Any]:
    """The first compile in a fresh cache, a new program (median of `repeat`) and `many`
    new programs serially against `compile_many(programs, jobs=2)`."""
    results: dict[str, Any] = {}
    start = time.perf_counter()
    toolchain.compile(programs.two_fields)
    results["first_compile_with_setup_s"] = time.perf_counter() - start
    news = []
    for k in range(repeat):
        name = f"{family}{k}"
        src = (
            PROGRAMS
            + f"\n@sc.field_operator\ndef fresh_{name}(f: F) -> F:\n    return {k + 2}.5 * f(I + 1)\n"
        )
        src += f"\n@sc.program\ndef new_{name}(f: F, out: F):\n    fresh_{name}(f, out=out)\n"
        path = folder / f"fresh_{name}.py"
        path.write_text(src)
        ns: dict[str, Any] = {}
        exec(compile(src, str(path), "exec"), ns)
        start = time.perf_counter()
        toolchain.compile(ns[f"new_{name}"])
        news.append(time.perf_counter() - start)
    results["new_program_s"] = statistics.median(news)
    try:
        from benchmarks.compile_many import (  # type: ignore[import-not-found, unused-ignore]
            compile_many_figures,
        )
    except ImportError as error:
        results["compile_many"] = f"not available ({error})"
    else:
        try:
            results["compile_many"] = compile_many_figures(family, n=many, jobs=2)
        except Exception as error:  # the other figures of this group stand
            results["compile_many"] = f"failed ({type(error).__name__}: {error})"
    return results


def warm_start_figures(
    family: str, toolchain: Any, programs: Any, env: dict[str, str], repeat: int
) -> dict[str, Any]:
    """The first call, in a fresh process, of a program already in the persistent cache
    (the time of that call, after the imports and the container)."""
    toolchain.compile(programs.laplacian)
    code = textwrap.dedent(
        f"""
        import time
        import numpy as np, bench_programs as p
        from stencilchain.containers import build_container
        tc = build_container().{family}.toolchain()
        f = np.ones((64, 64)); out = np.zeros_like(f)
        t1, c1 = time.perf_counter(), time.process_time()
        p.laplacian.with_backend(tc)(f, out)
        print(time.perf_counter() - t1, time.process_time() - c1)
        """
    )
    return {"first_call_cached_fresh_process_s": fresh_process_value(code, env, repeat)}


def call_overhead_figures(
    toolchain: Any, programs: Any, empty: Any, number: int, repeat: int
) -> dict[str, Any]:
    """Steady-state calls on 8x8 arrays (the work is negligible), beside the empty C
    extension call `empty` with the same arguments."""
    results: dict[str, Any] = {}
    two = (np.ones((8, 8)), np.zeros((8, 8)))
    many = (*(np.ones((8, 8)) for _ in range(programs.N_IN)), np.zeros((8, 8)), 0.5, 1.0)
    for label, program, args in (("2_fields", programs.two_fields, two),
                                 ("25_fields_2_scalars", programs.fields25, many)):  # fmt: skip
        bound = program.with_backend(toolchain)
        bound(*args)
        empty(*args)
        t_call = per_call_seconds(functools.partial(bound, *args), number, repeat)
        t_empty = per_call_seconds(functools.partial(empty, *args), number, repeat)
        results[f"call_{label}_s"] = t_call
        results[f"empty_call_{label}_s"] = t_empty
        results[f"call_{label}_vs_empty"] = t_call / t_empty
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--families", default="gtfn,dace")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")  # before the first compiled module loads
    cache = Path(tempfile.mkdtemp(prefix="stencilchain-bench-"))
    env = fresh_process_env(cache)
    os.environ.update(STENCILCHAIN_CACHE_DIR=str(cache))
    results: dict[str, Any] = {"import": import_figures(env, 5)}
    programs = load_programs(cache)
    empty = build_empty_call(cache / "empty_call")
    notes: list[str] = []
    for family, toolchain in make_toolchains(args.families.split(","), cache, notes).items():
        results[family] = {
            **compile_figures(family, toolchain, programs, cache, 3, 50),
            **warm_start_figures(family, toolchain, programs, env, 5),
            **call_overhead_figures(toolchain, programs, empty, 20000, 5),
        }
    if args.json:
        print(json.dumps({"figures": results, "notes": notes}, indent=2))
        return
    for group, figures in results.items():
        for key, value in figures.items():
            if isinstance(value, float) and key.endswith("_s"):
                value, unit = (value * 1e6, "us") if value < 1e-3 else (value * 1e3, "ms")
                print(f"{group}.{key:45s} {value:10.2f} {unit}")
            elif isinstance(value, float):
                print(f"{group}.{key:45s} {value:10.2f}")
            else:
                print(f"{group}.{key:45s} {value}")
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
