"""DaCe call overhead: stencilchain's entry point beside DaCe's own ways to call the same SDFG.

    OMP_NUM_THREADS=2 python benchmarks/dace_call_overhead.py [--json]

One call of a 2-field program (4x4 arrays: the work is negligible), measured through
- `program.with_backend(toolchain)` (the BoundProgram, as users call it),
- the loaded entry point (the extension's METH_FASTCALL function),
- DaCe's `CompiledSDFG.__call__` (generic: argument marshalling on every call),
- DaCe's `CompiledSDFG.fast_call` on an argument vector prepared once (no checks at all),
- `construct_arguments` alone (what preparing the vector costs per call);
plus the 25 fields + 2 scalars program through `with_backend`, the cold compile of a new
program (one-time set-up done) and the first call in a fresh process of a program already
in the cache. The toolchain is assembled from the steps (translator with the translation
cache, DaCeBindings, DaCeCompiler) on a private temporary cache, never the user's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as `python benchmarks/dace_call_overhead.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from benchmarks._common import fresh_process_value
from benchmarks._common import per_call_seconds as best
from benchmarks.figures import PROGRAMS, load_programs

TOOLCHAIN = """
from pathlib import Path
from stencilchain.program.device import Device
from stencilchain.containers.config import DaCeConfig
from stencilchain.runtime.toolchain import Toolchain
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.caches.translation_cache import TranslationCache
from stencilchain.steps.dace.bindings import DaCeBindings
from stencilchain.steps.dace.compiler import DaCeCompiler
from stencilchain.steps.dace.translator import DaCeTranslator
from stencilchain.steps.settings import BuildType
from stencilchain.steps.workflow import CompileWorkflow


def make_toolchain(cache: Path) -> Toolchain:
    workflow = CompileWorkflow(
        DaCeTranslator(Device.CPU),
        DaCeBindings(Device.CPU),
        DaCeCompiler(Device.CPU, BuildType.RELEASE, BuildCache(cache / "builds")),
        TranslationCache(cache / "translations"),
    )
    return Toolchain(name="bench_dace_cpu", family="dace", config=DaCeConfig(), workflow=workflow)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    cache = Path(tempfile.mkdtemp(prefix="stencilchain-dace-bench-"))
    os.chdir(cache)  # `python -c` puts the working directory first on sys.path (figures.py)
    (cache / "bench_toolchain.py").write_text(TOOLCHAIN)
    programs = load_programs(cache)  # puts `cache` on sys.path
    import bench_toolchain  # type: ignore[import-not-found]

    toolchain = bench_toolchain.make_toolchain(cache)

    start = time.perf_counter()
    toolchain.compile(programs.two_fields)
    results["first_compile_with_setup_s"] = time.perf_counter() - start
    colds = []
    for k in range(3):
        src = (
            PROGRAMS
            + f"\n@sc.field_operator\ndef fresh{k}(f: F) -> F:\n    return {k + 2}.5 * f(I + 1)\n"
        )
        src += f"\n@sc.program\ndef new{k}(f: F, out: F):\n    fresh{k}(f, out=out)\n"
        path = cache / f"fresh{k}.py"
        path.write_text(src)
        ns: dict[str, Any] = {}
        exec(compile(src, str(path), "exec"), ns)
        start = time.perf_counter()
        compiled = toolchain.compile(ns[f"new{k}"])
        colds.append(time.perf_counter() - start)
        results[f"cold_compile_{k}_build_s"] = float(compiled.artifact.metadata["total_seconds"])
    results["cold_compile_s"] = float(np.median(colds))

    # steady state, 2 fields
    f = np.ones((4, 4))
    out = np.zeros_like(f)
    bound = programs.two_fields.with_backend(toolchain)
    bound(f, out)
    results["call_2_fields_with_backend_s"] = best(lambda: bound(f, out), 20000)
    entry = toolchain.compile(programs.two_fields).entry
    results["call_2_fields_entry_point_s"] = best(lambda: entry(f, out), 20000)

    # DaCe's own call paths on the same SDFG, compiled by DaCe into a folder of its own
    from stencilchain.steps.dace.sdfg_text import sdfg_from_source

    source = toolchain.workflow.translation(programs.two_fields.ir)
    sdfg = sdfg_from_source(source.source_code)
    sdfg.build_folder = str(cache / "dace_own")
    csdfg = sdfg.compile()
    symbols = {"n_I": 4, "n_J": 4, "f_s0": 4, "f_s1": 1, "out_s0": 4, "out_s1": 1}
    kwargs = {"f": f, "out": out, **{k: v for k, v in symbols.items() if k in csdfg._sig}}
    csdfg(**kwargs)
    results["call_2_fields_compiledsdfg_call_s"] = best(lambda: csdfg(**kwargs), 2000)
    results["construct_arguments_s"] = best(lambda: csdfg.construct_arguments(**kwargs), 2000)
    callargs, initargs = csdfg.construct_arguments(**kwargs)
    results["call_2_fields_fast_call_s"] = best(lambda: csdfg.fast_call(callargs, initargs), 20000)

    # 25 fields + 2 scalars
    fs = [np.ones((4, 4)) for _ in range(24)]
    out25 = np.zeros((4, 4))
    bound25 = programs.fields25.with_backend(toolchain)
    bound25(*fs, out25, 0.5, 1.0)
    results["call_25_fields_2_scalars_with_backend_s"] = best(
        lambda: bound25(*fs, out25, 0.5, 1.0), 20000
    )

    # first call in a fresh process of a cached program
    toolchain.compile(programs.laplacian)
    code = textwrap.dedent(
        f"""
        import time, sys
        import numpy as np, bench_programs as p, bench_toolchain as t
        from pathlib import Path
        tc = t.make_toolchain(Path({str(cache)!r}))
        f = np.ones((64, 64)); out = np.zeros_like(f)
        t1 = time.perf_counter()
        p.laplacian.with_backend(tc)(f, out)
        t2 = time.perf_counter()
        assert "dace" not in sys.modules
        print(t2 - t1)
        """
    )
    path = os.pathsep.join([str(cache), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = dict(os.environ, PYTHONPATH=path)  # the caller's checkout, if given, after the cache
    results["first_call_cached_fresh_process_s"] = fresh_process_value(code, env, 5)

    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for key, value in results.items():
            unit = ""
            if key.endswith("_s"):
                small = value < 1e-3
                value, unit = (value * 1e6, "us") if small else (value * 1e3, "ms")
            print(f"{key:45s} {value:10.2f} {unit}")


if __name__ == "__main__":
    main()
