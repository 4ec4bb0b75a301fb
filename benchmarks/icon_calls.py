"""ICON-like calls, made the way a model makes them: keyword arguments, scalar bounds of
the domain (`horizontal_start`, ..., `vertical_end`) and a C2E2CO neighbour table (each
cell and its three neighbours across its edges, 4 columns), on a torus of
`stencilchain.meshes` with levels K contiguous (C order):

- `nabla2`: one C2E2CO reduction, `out = sum_j geofac[c, j] * psi[C2E2CO[c, j], k]`
  (ICON's `calculate_nabla2_for_z` kind);
- `diffusion`: a 5-call diffusion-like program over the same domain (two C2E2CO
  Laplacians, a Smagorinsky-like coefficient, the update, a vertical average to half
  levels), with a scalar `dt`.

Side by side in the same run, per compiled toolchain family:

- the call cost on a small mesh (a 5x6-quad torus: 60 cells, 2 levels), by keyword (from a
  dict, `fn(**kwargs)`, and written out, `fn(psi=psi, ...)`, as a model's source calls) and
  by position, with the table frozen (`sc.frozen_table`, as a mesh's tables are) and as a
  writeable NumPy copy; the baseline is the positional call of a 2-field copy on the same
  cells (the call micro-benchmark);
- the kernel time on a 100x100-quad torus (20,000 cells) x 65 levels, by keyword, with
  the table frozen and writeable: their difference is the check of a mutable table;
- the check of one 20,000 x 4 table alone: frozen, writeable, and NumPy's own
  `min()`/`max()` of it (the cost of the check before `sc.frozen_table`'s range).

    OMP_NUM_THREADS=2 python -m benchmarks.icon_calls [--json] [--families gtfn,dace]

Builds go to a private temporary cache; prints the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as `python benchmarks/icon_calls.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import stencilchain as sc
from benchmarks._common import make_toolchains, median_wall_cpu, per_call_seconds
from stencilchain import meshes
from stencilchain.program.tables import check_table_entries

Cell = sc.Dimension("Cell")
K = sc.Dimension("K", kind=sc.VERTICAL)
C2E2CODim = sc.Dimension("C2E2CODim", kind=sc.LOCAL)
C2E2CO = sc.Connectivity("C2E2CO", source=Cell, target=(Cell, C2E2CODim), max_neighbors=4)
CellK = sc.Field[[Cell, K], sc.float64]
CellF = sc.Field[[Cell], sc.float64]
Geofac = sc.Field[[Cell, C2E2CODim], sc.float64]


@sc.field_operator
def nabla2_c(psi: CellK, geofac: Geofac) -> CellK:
    return sc.neighbor_sum(psi(C2E2CO) * geofac, axis=C2E2CODim)


@sc.program
def nabla2(
    psi: CellK,
    geofac: Geofac,
    c2e2co: sc.Table[C2E2CO],
    out: CellK,
    horizontal_start: sc.int32,
    horizontal_end: sc.int32,
    vertical_start: sc.int32,
    vertical_end: sc.int32,
) -> None:
    nabla2_c(
        psi,
        geofac,
        out=out,
        domain={Cell: (horizontal_start, horizontal_end), K: (vertical_start, vertical_end)},
    )


@sc.field_operator
def smagorinsky(z4: CellK, area: CellF, coeff: sc.float64) -> CellK:
    return sc.math.maximum(coeff * area * sc.math.abs(z4), 0.0)


@sc.field_operator
def update(theta: CellK, kh: CellK, z4: CellK, dt: sc.float64) -> CellK:
    return theta - dt * kh * z4


@sc.field_operator
def half_levels(theta: CellK) -> CellK:
    return 0.5 * (theta + theta(K - 1))


def diffusion_program(coeff: float = 0.25, name: str = "diffusion") -> sc.Program:
    """The 5-call diffusion-like program named `name`, its Smagorinsky coefficient `coeff`
    (benchmarks/compile_many.py makes many, each with another)."""

    def run(
        theta: CellK,
        geofac: Geofac,
        area: CellF,
        c2e2co: sc.Table[C2E2CO],
        z2: CellK,
        z4: CellK,
        kh: CellK,
        theta_out: CellK,
        theta_half: CellK,
        dt: sc.float64,
        horizontal_start: sc.int32,
        horizontal_end: sc.int32,
        vertical_start: sc.int32,
        vertical_end: sc.int32,
    ) -> None:
        domain = {Cell: (horizontal_start, horizontal_end), K: (vertical_start, vertical_end)}
        nabla2_c(theta, geofac, out=z2, domain=domain)
        nabla2_c(z2, geofac, out=z4, domain=domain)
        smagorinsky(z4, area, coeff, out=kh, domain=domain)
        update(theta, kh, z4, dt, out=theta_out, domain=domain)
        half_levels(theta_out, out=theta_half, domain={Cell: (horizontal_start, horizontal_end),
                                                       K: (vertical_start + 1, vertical_end)})  # fmt: skip

    run.__name__ = run.__qualname__ = name
    return sc.program(run)


diffusion = diffusion_program()


@sc.field_operator
def copy_c(a: CellK) -> CellK:
    return a


@sc.program
def copy2(a: CellK, out: CellK) -> None:
    copy_c(a, out=out)


def c2e2co_table(mesh: meshes.Mesh) -> np.ndarray:
    """Each cell, then its three neighbours across its edges (C2E2C): a writeable copy."""
    cells = np.arange(mesh.n_cells, dtype=mesh.c2e2c.dtype)[:, None]
    return np.ascontiguousarray(np.hstack([cells, mesh.c2e2c]))


def make_arguments(nx: int, ny: int, levels: int, rng: np.random.Generator) -> dict[str, Any]:
    """The keyword arguments of `diffusion` on an nx x ny torus (its table frozen)."""
    mesh = meshes.torus(nx, ny)
    cells = mesh.n_cells

    def field() -> np.ndarray:
        return rng.random((cells, levels))

    return {
        "theta": field(),
        "geofac": rng.random((cells, 4)),
        "area": np.ascontiguousarray(mesh.cell_areas),
        "c2e2co": sc.frozen_table(c2e2co_table(mesh)),
        "z2": field(),
        "z4": field(),
        "kh": field(),
        "theta_out": field(),
        "theta_half": field(),
        "dt": 0.1,
        "horizontal_start": 0,
        "horizontal_end": cells,
        "vertical_start": 0,
        "vertical_end": levels,
    }


def nabla2_arguments(args: Mapping[str, Any]) -> dict[str, Any]:
    names = ("psi", "geofac", "c2e2co", "out", "horizontal_start", "horizontal_end",
             "vertical_start", "vertical_end")  # fmt: skip
    return {
        name: args["theta" if name == "psi" else "z2" if name == "out" else name] for name in names
    }


def with_mutable_table(args: Mapping[str, Any]) -> dict[str, Any]:
    return {**args, "c2e2co": np.array(args["c2e2co"])}


def keyword_call(fn: Callable[..., Any], kwargs: Mapping[str, Any]) -> Callable[[], Any]:
    return lambda: fn(**kwargs)


def literal_keyword_call(fn: Callable[..., Any], kwargs: Mapping[str, Any]) -> Callable[[], Any]:
    """`fn(psi=psi, geofac=geofac, ...)` written out, as a model's source calls a stencil.
    On Python 3.11 this is the slower keyword call: a subclass of functools.partial (the
    BoundProgram) gets no vectorcall before 3.12, so the interpreter builds a dict of the
    keywords for partial's tp_call and the entry unpacks it again (measured +0.15 us for 8
    keywords over `fn(**kwargs)`, whose dict partial passes on as it is)."""
    values = {f"_v{k}": v for k, v in enumerate(kwargs.values())}
    params = ", ".join(f"{name}=_v{k}" for k, name in enumerate(kwargs))
    call = ", ".join(f"{name}={name}" for name in kwargs)
    made: Callable[[], Any] = eval(f"lambda {params}: fn({call})", {"fn": fn, **values})
    return made


def positional_call(fn: Callable[..., Any], args: tuple[Any, ...]) -> Callable[[], Any]:
    return lambda: fn(*args)


def per_call(fn: Callable[[], Any], number: int, repeat: int) -> dict[str, float]:
    """The medians over `repeat` batches of `number` calls of the wall time and of the CPU
    time per call (waiting for a core on a loaded machine inflates the first only)."""
    walls, cpus = [], []
    for _ in range(max(1, repeat)):
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(number):
            fn()
        walls.append((time.perf_counter() - start) / number)
        cpus.append((time.process_time() - start_cpu) / number)
    return {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus)}


def call_figures(tc: Any, number: int, repeat: int) -> dict[str, dict[str, float]]:
    """Per call on a 60-cell, 2-level torus (the kernels' work is a few hundred flops)."""
    args = make_arguments(5, 6, 2, np.random.default_rng(0))
    n2 = nabla2_arguments(args)
    prog_n2, prog_diff, prog_copy = (p.with_backend(tc) for p in (nabla2, diffusion, copy2))
    cases: dict[str, Callable[[], Any]] = {
        "copy_2_fields_positional": positional_call(prog_copy, (args["theta"], args["z2"])),
        "nabla2_positional_frozen": positional_call(prog_n2, tuple(n2.values())),
        "nabla2_keywords_frozen": keyword_call(prog_n2, n2),
        "nabla2_literal_keywords_frozen": literal_keyword_call(prog_n2, n2),
        "nabla2_keywords_mutable": keyword_call(prog_n2, with_mutable_table(n2)),
        "diffusion_positional_frozen": positional_call(prog_diff, tuple(args.values())),
        "diffusion_keywords_frozen": keyword_call(prog_diff, args),
        "diffusion_literal_keywords_frozen": literal_keyword_call(prog_diff, args),
        "diffusion_keywords_mutable": keyword_call(prog_diff, with_mutable_table(args)),
    }
    for fn in cases.values():
        fn()  # compile
    return {name: per_call(fn, number, repeat) for name, fn in cases.items()}


def kernel_figures(
    tc: Any, nx: int, ny: int, levels: int, repeat: int
) -> dict[str, dict[str, float]]:
    """Per keyword call on an nx x ny torus x `levels` (the medians of single calls)."""
    args = make_arguments(nx, ny, levels, np.random.default_rng(1))
    n2 = nabla2_arguments(args)
    prog_n2, prog_diff = nabla2.with_backend(tc), diffusion.with_backend(tc)
    cases = {
        "nabla2_frozen": keyword_call(prog_n2, n2),
        "nabla2_mutable": keyword_call(prog_n2, with_mutable_table(n2)),
        "diffusion_frozen": keyword_call(prog_diff, args),
        "diffusion_mutable": keyword_call(prog_diff, with_mutable_table(args)),
    }
    out = {}
    for name, fn in cases.items():
        wall, cpu = median_wall_cpu(fn, repeat)
        out[name] = {"wall_s": wall, "cpu_s": cpu}
    return out


def table_check_figures(
    tc: Any, nx: int, ny: int, number: int, repeat: int
) -> dict[str, dict[str, float]]:
    """What the check of a C2E2CO table costs a compiled call: `nabla2` by keywords over
    one cell and one level (the kernel is a few flops), with the table of an nx x ny
    torus frozen and writeable, and with the 60-cell torus's frozen table (the baseline:
    the same call with a table too small to matter)."""
    small = nabla2_arguments(make_arguments(5, 6, 1, np.random.default_rng(2)))
    big = nabla2_arguments(make_arguments(nx, ny, 1, np.random.default_rng(3)))
    for args in (small, big):
        args["horizontal_end"] = args["vertical_end"] = 1
    run = nabla2.with_backend(tc)
    cases = {
        "small_table_frozen": keyword_call(run, small),
        "big_table_frozen": keyword_call(run, big),
        "big_table_mutable": keyword_call(run, with_mutable_table(big)),
    }
    for fn in cases.values():
        fn()
    out = {
        name: per_call(fn, number if "mutable" not in name else max(1, number // 50), repeat)
        for name, fn in cases.items()
    }
    out["table"] = {"rows": float(big["c2e2co"].shape[0]), "columns": 4.0}
    return out


def shared_checker_figures(nx: int, ny: int, number: int, repeat: int) -> dict[str, float]:
    """The shared Python check of one C2E2CO table (the embedded executor's and the GPU
    path's), frozen and writeable, beside NumPy's own min() and max() of it."""
    mesh = meshes.torus(nx, ny)
    mutable = c2e2co_table(mesh)
    frozen = sc.frozen_table(mutable)
    where = "argument 'c2e2co' of bench()"

    def minmax() -> None:
        mutable.min()
        mutable.max()

    few = max(1, number // 50)
    return {
        "frozen_s": per_call_seconds(
            lambda: check_table_entries(where, C2E2CO, frozen, mesh.n_cells), number, repeat
        ),
        "mutable_s": per_call_seconds(
            lambda: check_table_entries(where, C2E2CO, mutable, mesh.n_cells), few, repeat
        ),
        "numpy_min_max_s": per_call_seconds(minmax, few, repeat),
    }


def icon_figures(
    toolchains: Mapping[str, Any],
    big: tuple[int, int, int] = (100, 100, 65),
    number: int = 20000,
    repeat: int = 7,
    kernel_repeat: int = 10,
) -> dict[str, Any]:
    """{family: {"calls", "kernels", "table_check"}, "shared_checker": ...}."""
    results: dict[str, Any] = {
        "mesh_small": "torus 5x6 (60 cells) x 2 levels",
        "mesh_big": f"torus {big[0]}x{big[1]} ({2 * big[0] * big[1]} cells) x {big[2]} levels",
        "shared_checker": shared_checker_figures(big[0], big[1], number // 10, repeat),
    }
    for family, tc in toolchains.items():
        results[family] = {
            "calls": call_figures(tc, number, repeat),
            "table_check": table_check_figures(tc, big[0], big[1], number, repeat),
            "kernels": kernel_figures(tc, *big, kernel_repeat),
        }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default="gtfn")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--number", type=int, default=20000)
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")  # before the first compiled module loads
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="stencilchain-bench-") as cache:
        toolchains = make_toolchains(args.families.split(","), Path(cache), notes)
        load = os.getloadavg()
        results = icon_figures(toolchains, number=args.number)
    results["load"] = [load, os.getloadavg()]
    if args.json:
        print(json.dumps(results, indent=1))
        return
    for key, value in results.items():
        if not isinstance(value, dict):
            print(f"{key}: {value}")
            continue
        print(key)
        for group, figures in value.items():
            if not isinstance(figures, dict):
                print(f"  {group:44s} {figures * 1e6:10.3f} us")
                continue
            for name, f in figures.items():
                if "wall_s" in f:
                    print(f"  {group:12s} {name:32s} wall {f['wall_s'] * 1e6:10.3f} us"
                          f"  cpu {f['cpu_s'] * 1e6:10.3f} us")  # fmt: skip
    for note in notes:
        print("note:", note)


if __name__ == "__main__":
    main()
