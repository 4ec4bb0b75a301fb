"""One benchmark command: every speed figure of the design for each compiled toolchain
family, side by side with its baselines measured in the same run.

    OMP_NUM_THREADS=2 python -m benchmarks [--families gtfn,dace] [--json PATH] [--quick]
                                            [--only NAME,...] [--large]
                                            [--numba-python PATH] [--halide-python PATH]
                                            [--devito-python PATH]

Figures (NAME for --only): call_overhead, compile, warm_start, import, startup (benchmarks/
startup.py: imports against `import numpy` and the first call of a cached program in a fresh
process, broken down, interleaved over rounds), laplacian, hdiff,
tridiagonal (on (I, J, K) and on ICON's (Cell, K), both layouts), neighbor_sum, icon_calls
(benchmarks/icon_calls.py: ICON-like keyword calls with scalar bounds and a C2E2CO table,
their kernels on a 20,000-cell torus x 65 levels, and the check of a frozen against a
writeable table), peers (benchmarks/peers/: hdiff and the Thomas solve on each toolchain, a
compiled copy, a hand-written Numba nest, Halide pipelines and Devito's hdiff, interleaved
over rounds, with a roofline; each peer runs in its own interpreter, --PEER-python or
the environments of `python -m benchmarks.peers setup`, and is skipped with a note when
missing). `--large` adds the peer figure at 768x768x128, beyond the last-level cache. Prints a table (figure, family, layout, value, unit, baseline,
ratio, target, met?) and writes every measurement as JSON to PATH (default
benchmarks/results/latest.json). OMP_NUM_THREADS is used as set (2 when it is unset, with
a note) and recorded, and so is the load average at start and end; a 1-minute load above
half the cores at start prints a warning. Builds go to a private temporary cache, removed
at exit, never the user's. `--quick` runs tiny sizes with 1-2 repeats: a smoke run whose
figures mean nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import os
import platform
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/run.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

FIGURES = (
    "call_overhead",
    "compile",
    "warm_start",
    "import",
    "startup",
    "laplacian",
    "hdiff",
    "tridiagonal",
    "neighbor_sum",
    "icon_calls",
    "peers",
)
DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "latest.json"


@dataclasses.dataclass(frozen=True)
class Sizes:
    """Problem sizes and repeat counts of one run."""

    laplacian: int = 4096
    hdiff: tuple[int, int, int] = (256, 256, 80)
    tridiagonal: tuple[int, int, int] = (256, 256, 80)
    cells: tuple[int, int] = (20000, 65)  # the Thomas solve on (Cell, K)
    peers: tuple[tuple[int, int, int], ...] = ((256, 256, 80),)  # --large adds 768x768x128
    peer_rounds: int = 5  # interleaved rounds of the peer figure
    peer_per_round: int = 3  # calls of each contender per round
    torus: str = "707x707x1"  # 999,698 cells
    icon_mesh: tuple[int, int, int] = (100, 100, 65)  # torus quads x quads x levels
    repeat: int = 10  # compiled throughput calls, after a warm-up
    numpy_repeat: int = 5  # NumPy baseline calls, after a warm-up
    call_number: int = 20000  # calls per batch of the call overhead
    call_repeat: int = 7  # batches
    fresh_repeat: int = 5  # fresh processes
    startup_rounds: int = 9  # interleaved rounds of the start-up figure's fresh processes
    new_programs: int = 3  # compiles of a new program
    many: int = 50  # programs of compile_many
    examples: tuple[str, ...] = ()  # bundled examples compiled each in a fresh process (all)


QUICK = Sizes(
    64, (16, 16, 6), (8, 8, 6), (64, 6), ((16, 16, 6),), 2, 1, "8x8x1", (10, 10, 4),
    2, 1, 200, 2, 1, 1, 1, 4, ("laplacian",),
)  # fmt: skip


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--families", default="gtfn,dace", help="comma-separated (gtfn,dace)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write JSON")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    parser.add_argument("--only", default=",".join(FIGURES), help="comma-separated figures")
    parser.add_argument("--large", action="store_true",
                        help="the peer figure also at 768x768x128, beyond the last-level cache")  # fmt: skip
    for peer in ("numba", "halide", "devito"):
        parser.add_argument(f"--{peer}-python", type=Path, metavar="PATH",
                            help=f"the interpreter of the {peer} baseline (benchmarks/peers)")  # fmt: skip
    args = parser.parse_args(argv)
    args.families = [f for f in args.families.split(",") if f]
    args.only = [f for f in args.only.split(",") if f]
    for name in args.only:
        if name not in FIGURES:
            parser.error(f"--only: unknown figure {name!r}; the figures are {', '.join(FIGURES)}")
    for family in args.families:
        if family not in ("gtfn", "dace"):
            parser.error(f"--families: unknown family {family!r}; use gtfn, dace or both")
    return args


def omp_threads() -> str:
    """OMP_NUM_THREADS as set, or 2 (set now, before any compiled module loads OpenMP)."""
    threads = os.environ.get("OMP_NUM_THREADS")
    if not threads:
        print("OMP_NUM_THREADS is not set: running with OMP_NUM_THREADS=2", file=sys.stderr)
        threads = os.environ["OMP_NUM_THREADS"] = "2"
    return threads


def measure(
    figures: dict[str, Any],
    name: str,
    key: str,
    errors: list[str],
    fn: Callable[..., Any],
    *args: Any,
) -> None:
    """figures[name][key] = fn(*args); an exception is recorded there and in `errors` (the
    run goes on with the other figures and exits with status 1)."""
    try:
        figures.setdefault(name, {})[key] = fn(*args)
    except Exception as error:
        traceback.print_exc()
        figures.setdefault(name, {})[key] = {"error": f"{type(error).__name__}: {error}"}
        errors.append(f"{name} ({key}): {type(error).__name__}: {error}")


def run_figures(
    args: argparse.Namespace, sizes: Sizes, cache: Path, notes: list[str], errors: list[str]
) -> dict[str, Any]:
    """`{figure: {family (or "all"): measurements}}` of the figures in `args.only`."""
    from benchmarks import figures as per_call
    from benchmarks._common import make_toolchains
    from benchmarks.empty_call import build_empty_call
    from benchmarks.icon_calls import icon_figures
    from benchmarks.neighbor_sum import run_case
    from benchmarks.throughput import hdiff_figures, laplacian_figures
    from benchmarks.tridiagonal import tridiagonal_figures

    only = set(args.only)
    s = sizes
    results: dict[str, Any] = {}
    env = per_call.fresh_process_env(cache)
    os.environ["STENCILCHAIN_CACHE_DIR"] = str(cache)  # anything built from the environment
    if "import" in only:
        measure(results, "import", "all", errors, per_call.import_figures, env, s.fresh_repeat)
    toolchains = make_toolchains(args.families, cache, notes)
    programs = per_call.load_programs(cache)
    empty = build_empty_call(cache / "empty_call") if "call_overhead" in only else None
    if "startup" in only:
        from benchmarks.startup import startup_figures

        measure(results, "startup", "all", errors, startup_figures,
                toolchains, programs, env, s.startup_rounds)  # fmt: skip
        results["startup"] = results["startup"].pop("all")  # {family: ..., "imports_s": ...}
    for family, tc in toolchains.items():
        if "compile" in only:  # first: its one-time set-up is this family's first compile
            measure(results, "compile", family, errors, per_call.compile_figures,
                    family, tc, programs, cache, s.new_programs, s.many)  # fmt: skip
            if isinstance(results["compile"][family], dict):
                measure(results["compile"], family, "examples", errors,
                        _examples_compile, family, s.examples)  # fmt: skip
        if "call_overhead" in only:
            measure(results, "call_overhead", family, errors, per_call.call_overhead_figures,
                    tc, programs, empty, s.call_number, s.call_repeat)  # fmt: skip
        if "warm_start" in only:
            measure(results, "warm_start", family, errors, per_call.warm_start_figures,
                    family, tc, programs, env, s.fresh_repeat)  # fmt: skip
    throughput: dict[str, Callable[[], Any]] = {
        "laplacian": lambda: laplacian_figures(toolchains, s.laplacian, s.repeat, s.numpy_repeat),
        "hdiff": lambda: hdiff_figures(toolchains, s.hdiff, s.repeat, s.numpy_repeat),
        "tridiagonal": lambda: tridiagonal_figures(
            toolchains, s.tridiagonal, s.repeat, s.numpy_repeat, s.cells
        ),
        "neighbor_sum": lambda: _by_family(run_case(s.torus, toolchains, s.repeat, notes)),
        "icon_calls": lambda: icon_figures(
            toolchains, s.icon_mesh, s.call_number, s.call_repeat, s.repeat
        ),
    }
    for name, fn in throughput.items():
        if name in only:
            measure(results, name, "all", errors, fn)
            results[name] = results[name].pop("all")  # {family: {layout: ...}} or the error
    if "peers" in only:
        from benchmarks.peers.__main__ import LARGE_SHAPE
        from benchmarks.peers.harness import peers_figures

        shapes = list(s.peers) + ([LARGE_SHAPE] if args.large else [])
        pythons = {p: getattr(args, f"{p}_python") for p in ("numba", "halide", "devito")}
        measure(results, "peers", "all", errors, peers_figures, toolchains, shapes, s.cells,
                s.peer_rounds, s.peer_per_round, pythons, notes)  # fmt: skip
        results["peers"] = results["peers"].pop("all")  # {case: figures, "peers": versions}
    return results


def _examples_compile(family: str, examples: tuple[str, ...]) -> dict[str, Any]:
    """Each bundled example compiled in a fresh process (benchmarks/examples_compile.py)."""
    from benchmarks.examples_compile import examples_compile_figures

    figures = examples_compile_figures((family,), examples)
    return {name: row[family] for name, row in figures.items()}


def _by_family(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """neighbor_sum's rows as {family: {"table" or "table_skip_values": row}}."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        layout = "table_skip_values" if row["skip_values"] else "table"
        out.setdefault(row["family"], {})[layout] = row
    return out


# --- the table ---------------------------------------------------------------------------


@dataclasses.dataclass
class Row:
    figure: str
    family: str
    layout: str
    value: float
    unit: str
    baseline: str = ""
    ratio: float | None = None
    target: str = ""
    met: bool | None = None


NEW_PROGRAM_TARGET_S = {"gtfn": 0.3, "dace": 0.8}
# a new bundled example, in a fresh process after the set-up: hdiff, and the slowest one
EXAMPLE_TARGET_S = {"dace": (1.0, 2.0)}


def table_rows(figures: dict[str, Any]) -> list[Row]:
    """The rows of the table, with the targets of the design (docs: DESIGN, issue 12)."""
    rows: list[Row] = []
    for family, r in _ok(figures.get("call_overhead")):
        for label, key, target in (("call 2 fields", "2_fields", 0.4),
                                   ("call 25 fields + 2 scalars", "25_fields_2_scalars", 1.0)):  # fmt: skip
            us = 1e6 * r[f"call_{key}_s"]
            rows.append(Row(label, family, "-", us, "us",
                            f"empty C call {1e6 * r[f'empty_call_{key}_s']:.3f} us",
                            r[f"call_{key}_vs_empty"], f"<= {target} us", us <= target))  # fmt: skip
    for family, r in _ok(figures.get("compile")):
        rows.append(
            Row("first compile (set-up)", family, "-", r["first_compile_with_setup_s"], "s")
        )
        target = NEW_PROGRAM_TARGET_S[family]
        rows.append(Row("new program compile", family, "-", r["new_program_s"], "s",
                        target=f"<= {target} s", met=r["new_program_s"] <= target))  # fmt: skip
        timed = {n: e["wall"] for n, e in r.get("examples", {}).items() if "wall" in e}
        hdiff, slowest = EXAMPLE_TARGET_S.get(family, (None, None))
        if "hdiff" in timed:
            rows.append(Row("new hdiff compile", family, "-", timed["hdiff"], "s",
                            target="" if hdiff is None else f"<= {hdiff} s",
                            met=None if hdiff is None else timed["hdiff"] <= hdiff))  # fmt: skip
        if timed:
            name = max(timed, key=timed.__getitem__)
            rows.append(Row("new example compile, slowest", family, "-", timed[name], "s",
                            f"{name} of {len(timed)}",
                            target="" if slowest is None else f"<= {slowest} s",
                            met=None if slowest is None else timed[name] <= slowest))  # fmt: skip
        many = r["compile_many"]
        speedup = _speedup(many) if isinstance(many, dict) else None
        if speedup is None:
            rows.append(Row("compile_many vs serial", family, "-", float("nan"), "x",
                            str(many)[:40], None, ">= 1.8x", None))  # fmt: skip
        else:
            rows.append(Row("compile_many vs serial", family, "-", speedup, "x", "serial",
                            speedup, ">= 1.8x", speedup >= 1.8))  # fmt: skip
    for family, r in _ok(figures.get("warm_start")):
        ms = 1e3 * r["first_call_cached_fresh_process_s"]
        rows.append(Row("first call, fresh process", family, "-", ms, "ms",
                        target="<= 3 ms", met=ms <= 3.0))  # fmt: skip
    for _, r in _ok(figures.get("import")):
        ms = 1e3 * r["import_stencilchain_s"]
        base = (f"pass {1e3 * r['baseline_python_s']:.0f} ms, "
                f"numpy {1e3 * r['baseline_numpy_s']:.0f} ms")  # fmt: skip
        rows.append(Row("import stencilchain", "-", "-", ms, "ms", base,
                        r["import_stencilchain_s"] / r["baseline_numpy_s"], "<= 80 ms", ms <= 80))  # fmt: skip
        if "import_stencilchain_dsl_s" in r:
            ms = 1e3 * r["import_stencilchain_dsl_s"]
            rows.append(Row("import stencilchain + the DSL", "-", "-", ms, "ms", base,
                            r["import_stencilchain_dsl_s"] / r["baseline_numpy_s"]))  # fmt: skip
    rows += _startup_rows(figures.get("startup"))
    for name, label, target in (("laplacian", "Laplacian", 0.9), ("hdiff", "hdiff", 0.6)):
        for family, layouts in _ok(figures.get(name)):
            for layout, r in layouts.items():
                rows.append(Row(label, family, layout, r["stencil_GBps"], "GB/s",
                                _throughput_baseline(r), r["fraction_of_copy"],
                                f">= {target:.0%} of copy", r["fraction_of_copy"] >= target))  # fmt: skip
    for family, layouts in _ok(figures.get("tridiagonal")):
        for layout, r in layouts.items():
            fraction, speedup = r["fraction_of_copy"], r["speedup_vs_numpy"]
            rows.append(Row("tridiagonal scan", family, layout, r["stencil_GBps"], "GB/s",
                            _throughput_baseline(r), fraction, ">= 40% of copy", fraction >= 0.4))  # fmt: skip
            rows.append(Row("tridiagonal scan vs NumPy", family, layout, speedup, "x",
                            f"NumPy {1e3 * r['numpy_s']:.2f} ms", speedup, ">= 5x NumPy",
                            speedup >= 5))  # fmt: skip
    for family, layouts in _ok(figures.get("neighbor_sum")):
        for layout, r in layouts.items():
            speedup = r["speedup_vs_numpy"]
            base = f"NumPy {r['numpy_ms']:.2f} ms, copy {r['copy_GBps']:.1f} GB/s"
            rows.append(Row("neighbour sum", family, layout, r["kernel_GBps"], "GB/s", base,
                            speedup, ">= 5x NumPy", speedup >= 5))  # fmt: skip
    rows += _icon_rows(figures.get("icon_calls"))
    rows += _peer_rows(figures.get("peers"))
    return rows


def _peer_rows(figure: Any) -> list[Row]:
    """Each case of the peer figure: stencilchain's families against the faster peer (the
    targets: hdiff >= 1.3x faster than the fastest of Halide's schedules and Devito; the Thomas solve
    faster than Numba and Halide), and each family's fraction of the roofline bound."""
    rows: list[Row] = []
    if not isinstance(figure, dict) or "error" in figure:
        return rows
    for key, case in figure.items():
        if key == "peers" or not isinstance(case, dict) or "contenders" not in case:
            continue
        kernel, grid, layout = key.split(" ", 2)
        contenders = case["contenders"]
        rivals = {name: row["median_s"] for name, row in contenders.items()
                  if name.startswith(("numba", "halide", "devito")) and
                  (kernel == "thomas" or name.startswith(("halide", "devito")))}  # fmt: skip
        best = min(rivals, key=rivals.__getitem__) if rivals else None
        for name, row in contenders.items():
            if not name.startswith("stencilchain"):
                continue
            family = name.split()[-1]
            label = f"{kernel} {grid} vs peers"
            if best is None:
                rows.append(Row(label, family, layout, 1e3 * row["median_s"], "ms",
                                "no peer ran", None, "", None))  # fmt: skip
                continue
            speedup = rivals[best] / row["median_s"]
            target = 1.3 if kernel == "hdiff" else 1.0
            rows.append(Row(label, family, layout, 1e3 * row["median_s"], "ms",
                            f"{best} {1e3 * rivals[best]:.3g} ms", speedup,
                            f">= {target:g}x the faster peer", speedup >= target))  # fmt: skip
    return rows


def _startup_rows(figure: Any) -> list[Row]:
    """The imports against `import numpy` and the first call of a cached program in a
    fresh process (benchmarks/startup.py), with the parts of that process."""
    rows: list[Row] = []
    if not isinstance(figure, dict) or "error" in figure:
        return rows
    imports = figure["imports_s"]
    base = f"numpy {1e3 * imports['numpy']:.0f} ms, pass {1e3 * imports['python']:.0f} ms"
    cpu = figure.get("imports_cpu_s", {})
    for label, key in (("start-up: import stencilchain", "stencilchain"),
                       ("start-up: import + sc.field_operator, sc.program", "stencilchain_dsl"),
                       ("start-up: import numpy + define a stencil", "stencilchain_define")):  # fmt: skip
        if key not in imports:
            continue
        ratio = imports[key] / imports["numpy"]
        note = base
        if key in cpu:
            note += f"; CPU {cpu[key] / cpu['numpy']:.2f}x numpy's {1e3 * cpu['numpy']:.0f} ms"
        rows.append(Row(label, "-", "-", 1e3 * imports[key], "ms", note, ratio,
                        "<= 1.1x numpy", ratio <= 1.1))  # fmt: skip
    for family, r in figure.items():
        if not isinstance(r, dict) or "first_call_s" not in r:
            continue
        ms = 1e3 * r["first_call_s"]
        stages = r["stages_s"]
        parts = ", ".join(f"{name} {1e3 * stages[name]:.2f}"
                          for name in ("translation", "bindings", "compilation", "load")
                          if name in stages)  # fmt: skip
        rows.append(Row("start-up: first call, cached, fresh process", family, "-", ms, "ms",
                        parts + " ms", None, "<= 3 ms", ms <= 3.0))  # fmt: skip
        rows.append(Row("start-up: that process, whole", family, "-", 1e3 * r["process_s"], "ms",
                        f"imports {1e3 * r['import_numpy_and_programs_s']:.0f} + containers "
                        f"{1e3 * r['import_containers_s']:.0f} + toolchain "
                        f"{1e3 * r['toolchain_s']:.1f} ms"))  # fmt: skip
    return rows


def _icon_rows(figure: Any) -> list[Row]:
    """The ICON-like calls (CPU time per call: the machine is shared) against the
    positional call of a 2-field copy, and the check of an unchanged (frozen) table."""
    rows: list[Row] = []
    if not isinstance(figure, dict) or "error" in figure:
        return rows
    for family, r in figure.items():
        if not isinstance(r, dict) or "calls" not in r:
            continue
        calls, check = r["calls"], r["table_check"]
        base = 1e6 * calls["copy_2_fields_positional"]["cpu_s"]
        for label, key, target in (
            ("ICON stencil call, keywords (CPU)", "nabla2_keywords_frozen", 1.0),
            (
                "ICON stencil call, keywords written out (CPU)",
                "nabla2_literal_keywords_frozen",
                1.0,
            ),
            ("ICON stencil call, positions (CPU)", "nabla2_positional_frozen", 1.0),
            ("5-call program call, keywords (CPU)", "diffusion_keywords_frozen", 10.0),
            (
                "5-call program call, keywords written out (CPU)",
                "diffusion_literal_keywords_frozen",
                10.0,
            ),
        ):
            if key not in calls:
                continue
            us = 1e6 * calls[key]["cpu_s"]
            rows.append(Row(label, family, "frozen table", us, "us",
                            f"2-field copy by position {base:.3f} us", us / base,
                            f"<= {target:g} us", us <= target))  # fmt: skip
        small = 1e6 * check["small_table_frozen"]["cpu_s"]
        rows_n = int(check["table"]["rows"])
        for layout, key, target in (("frozen", "big_table_frozen", 1.0),
                                    ("writeable", "big_table_mutable", None)):  # fmt: skip
            extra = 1e6 * check[key]["cpu_s"] - small
            rows.append(Row(f"table check {rows_n} x 4, per call (CPU)", family, layout, extra,
                            "us", f"call with a 60 x 4 table {small:.3f} us", None,
                            "" if target is None else f"<= {target:g} us",
                            None if target is None else extra <= target))  # fmt: skip
        for key, label in (("nabla2_frozen", "ICON C2E2CO kernel"),
                           ("diffusion_frozen", "5-call diffusion kernel")):  # fmt: skip
            ms = 1e3 * r["kernels"][key]["wall_s"]
            rows.append(Row(label, family, figure.get("mesh_big", ""), ms, "ms"))
    return rows


def _ok(figure: Any) -> list[tuple[str, Any]]:
    """The (family, measurements) of a figure that ran without an error."""
    if not isinstance(figure, dict) or "error" in figure:
        return []
    return [(k, v) for k, v in figure.items() if isinstance(v, dict) and "error" not in v]


def _throughput_baseline(r: dict[str, Any]) -> str:
    return f"copy {r['copy_GBps']:.1f} GB/s, NumPy {1e3 * r['numpy_s']:.2f} ms"


def _speedup(many: dict[str, Any]) -> float | None:
    """compile_many's speedup over the serial compiles, from compile_many_figures' dict."""
    for key in ("speedup", "speedup_vs_serial", "ratio"):
        if isinstance(many.get(key), (int, float)):
            return float(many[key])
    serial = next((v for k, v in many.items() if "serial" in k and k.endswith("_s")), None)
    parallel = next(
        (v for k, v in many.items() if ("many" in k or "parallel" in k) and k.endswith("_s")),
        None,
    )
    if isinstance(serial, (int, float)) and isinstance(parallel, (int, float)) and parallel:
        return float(serial) / float(parallel)
    return None


def format_table(rows: list[Row]) -> str:
    head = ("figure", "family", "layout", "value", "unit", "baseline", "ratio", "target", "met?")
    cells = [head] + [
        (
            r.figure, r.family, r.layout, "-" if math.isnan(r.value) else f"{r.value:.3g}",
            r.unit, r.baseline,
            "" if r.ratio is None else f"{r.ratio:.2f}", r.target,
            {True: "yes", False: "NO", None: ""}[r.met],
        )
        for r in rows
    ]  # fmt: skip
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    right = {3, 6}
    lines = [
        "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))
        )
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def cpu_description() -> dict[str, Any]:
    """The CPU model and its caches (Linux: /proc/cpuinfo and sysfs; empty elsewhere)."""
    info: dict[str, Any] = {"model": platform.processor() or None, "caches": {}}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["model"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level, kind, size = ((index / f).read_text().strip() for f in ("level", "type", "size"))
        except OSError:
            continue
        name = f"L{level}" + {"Data": "d", "Instruction": "i"}.get(kind, "")
        info["caches"][name] = size
    return info


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    threads = omp_threads()
    cores = os.cpu_count() or 1
    load_start = os.getloadavg()
    if load_start[0] > 0.5 * cores:
        print(
            f"warning: the 1-minute load average is {load_start[0]:.2f} on {cores} cores "
            "(above half of them): the figures will be noisy",
            file=sys.stderr,
        )
    sizes = QUICK if args.quick else Sizes()
    cache = Path(tempfile.mkdtemp(prefix="stencilchain-bench-"))
    notes: list[str] = []
    errors: list[str] = []
    started = datetime.datetime.now(datetime.timezone.utc)
    try:
        results = run_figures(args, sizes, cache, notes, errors)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    load_end = os.getloadavg()
    rows = table_rows(results)
    report: dict[str, Any] = {
        "meta": {
            "started": started.isoformat(timespec="seconds"),
            "omp_num_threads": threads,
            "cores": cores,
            "loadavg_start": load_start,
            "loadavg_end": load_end,
            "quick": args.quick,
            "families": args.families,
            "only": args.only,
            "sizes": dataclasses.asdict(sizes),
            "python": sys.version.split()[0],
            "machine": platform.machine(),
            "cpu": cpu_description(),
            "notes": list(dict.fromkeys(notes)),
            "errors": errors,
        },
        "figures": results,
        "table": [dataclasses.asdict(r) for r in rows],
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2, default=str) + "\n")

    print(
        f"stencilchain benchmarks{' (--quick: sizes are tiny, figures mean nothing)' if args.quick else ''}, "
        f"OMP_NUM_THREADS={threads}, {cores} cores"
    )
    print(format_table(rows))
    for note in report["meta"]["notes"]:
        print(f"note: {note}")
    for error in errors:
        print(f"error: {error}")
    print(
        f"load average (1, 5, 15 min): start {' '.join(f'{x:.2f}' for x in load_start)}, "
        f"end {' '.join(f'{x:.2f}' for x in load_end)}"
    )
    print(f"JSON: {args.json}")
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
