"""Unstructured meshes on many ranks: partition quality, halo sizes and message counts
(no MPI: the partitions and local meshes of many ranks computed in one process), and the
mesh model on 1, 2 and 4 ranks with both exchange methods (neighbourhood collective and
point-to-point), its time per step, the share in halo exchanges, and its checksum.

    python benchmarks/mesh_ranks.py [--ranks 1,2,4] [--size 100x100x20] [--steps 20]
                                    [--toolchain run_gtfn_cpu] [--parts 2,4,16,64,256]
                                    [--partitioner hilbert] [--json PATH]

`--partitioner` is for the partition figures (metis needs pymetis importable); the model
jobs use the default ("auto").

Each job gets a fresh private cache (removed at exit) and one OpenMP thread per rank.
The load average is printed at start and end: the machine is shared, figures are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/mesh_ranks.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import numpy as np

from stencilchain import meshes
from stencilchain.meshes.local import local_mesh
from stencilchain.meshes.partition import partition


def partition_figures(
    nx: int, ny: int, parts: list[int], layers: int, method: str = "hilbert"
) -> list[dict[str, Any]]:
    """Per rank count: edge cut, imbalance, and per rank the halo cells, edges, vertices
    of `layers` layers and the ranks it receives from (mean and max over the ranks)."""
    mesh = meshes.torus(nx, ny)
    rows = []
    for count in parts:
        split = partition(mesh, count, method=method)
        halo: dict[str, list[int]] = {"cell": [], "edge": [], "vertex": []}
        sources: list[int] = []
        for rank in range(count):
            local = local_mesh(mesh, split.owner, rank, layers)
            for entity in halo:
                halo[entity].append(local.size(entity) - local.owned[entity])
            sources.append(len({int(r) for e in halo for r in local.owner[e][local.owned[e] :]}))
        owned = mesh.n_cells / count
        rows.append({
            "mesh": f"torus {nx}x{ny}", "cells": mesh.n_cells, "ranks": count,
            "method": split.method, "edge_cut": split.edge_cut,
            "imbalance": split.imbalance, "cells_per_rank": owned,
            **{f"halo_{e}_mean": float(np.mean(v)) for e, v in halo.items()},
            "halo_cell_max": max(halo["cell"]),
            "neighbours_mean": float(np.mean(sources)), "neighbours_max": max(sources),
            "halo_cells_per_sqrt_owned": float(np.mean(halo["cell"])) / owned**0.5,
        })  # fmt: skip
    return rows


def model_job(
    ranks: int, size: str, steps: int, toolchain: str, method: str, cache: Path
) -> dict[str, Any]:
    nx, ny, nz = size.split("x")
    mpiexec = shutil.which("mpiexec", path=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    if mpiexec is None:
        raise SystemExit("no mpiexec: install the mpi extra (pip install 'stencilchain[mpi]')")
    env = dict(os.environ, OMP_NUM_THREADS="1", STENCILCHAIN_CACHE_DIR=str(cache),
               PYTHONPATH=str(Path(__file__).resolve().parents[1]))  # fmt: skip
    command = [
        mpiexec, "-n", str(ranks), sys.executable, "-m", "stencilchain.examples.mesh_model",
        "--nx", nx, "--ny", ny, "--nz", nz, "--steps", str(steps), "--toolchain", toolchain,
        "--method", method,
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{ranks} ranks failed:\n{done.stdout}\n{done.stderr}")
    out = done.stdout
    step_ms = [float(m) for m in re.findall(r"^step \d+ ([\d.]+) ms", out, re.MULTILINE)]
    exchange_ms = [float(m) for m in re.findall(r"\(exchange ([\d.]+) ms\)", out)]
    halo = re.search(r"(\d+) halo cells, (\d+) messages, (\d+) bytes", out)
    checksum = re.search(r"^checksum (\S+)", out, re.MULTILINE)
    assert step_ms and halo and checksum, out
    warm = slice(1, None) if len(step_ms) > 1 else slice(None)  # the first step loads
    step = float(np.median(step_ms[warm]))
    exchange = float(np.median(exchange_ms[warm]))
    return {
        "ranks": ranks, "method": method, "ms_per_step": step, "exchange_ms": exchange,
        "exchange_share": exchange / step if step else 0.0, "halo_cells_rank0": int(halo[1]),
        "messages_rank0": int(halo[2]), "bytes_rank0": int(halo[3]), "checksum": checksum[1],
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="1,2,4")
    parser.add_argument("--size", default="100x100x20")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--toolchain", default="run_gtfn_cpu")
    parser.add_argument("--parts", default="2,4,16,64,256")
    parser.add_argument("--partitioner", default="hilbert", help="hilbert, metis or auto")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    load_start = os.getloadavg()
    nx, ny, _ = (int(n) for n in args.size.split("x"))
    counts = [int(p) for p in args.parts.split(",")]
    parts = partition_figures(nx, ny, counts, layers=1, method=args.partitioner)
    jobs = []
    with tempfile.TemporaryDirectory(prefix="sc-mesh-ranks-") as tmp:
        for ranks in (int(r) for r in args.ranks.split(",")):
            for method in ("neighbor", "p2p"):
                jobs.append(model_job(ranks, args.size, args.steps, args.toolchain, method,
                                      Path(tmp, "cache")))  # fmt: skip
    load_end = os.getloadavg()
    print(f"load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end")
    print("ranks  method   cut  imbalance  halo cells (mean, max)  edges  vertices  neighbours")
    for r in parts:
        print(f"{r['ranks']:5d}  {r['method']:7s} {r['edge_cut']:5d}  {r['imbalance']:9.4f}  "
              f"{r['halo_cell_mean']:10.1f} {r['halo_cell_max']:6d}  {r['halo_edge_mean']:12.1f}  "
              f"{r['halo_vertex_mean']:8.1f}  {r['neighbours_mean']:5.2f} (max {r['neighbours_max']})"
              f"  halo/sqrt(owned) {r['halo_cells_per_sqrt_owned']:.2f}")  # fmt: skip
    print("ranks  method    ms/step  exchange ms  share  halo cells  messages  bytes  checksum")
    for j in jobs:
        print(f"{j['ranks']:5d}  {j['method']:8s} {j['ms_per_step']:8.3f}  {j['exchange_ms']:11.3f}  "
              f"{j['exchange_share']:5.1%}  {j['halo_cells_rank0']:10d}  {j['messages_rank0']:8d}  "
              f"{j['bytes_rank0']:6d}  {j['checksum']}")  # fmt: skip
    if len({j["checksum"] for j in jobs}) != 1:
        print("checksums differ!")
        return 1
    if args.json:
        args.json.write_text(json.dumps({"partitions": parts, "jobs": jobs,
                                         "load": [load_start, load_end]}, indent=2))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
