"""The distributed model on 1, 2 and 4 ranks: the compile phase from a cold shared cache
(wall time, builds per rank) and the time per step at one global size, with the share
spent in halo exchanges. Needs the mpi extra.

    python benchmarks/model_ranks.py [--ranks 1,2,4] [--size 128x128x32] [--steps 20]
                                     [--family gtfn] [--json PATH]

Each rank count gets a fresh private cache (removed at exit, never the user's) and one
OpenMP thread per rank; the 1-rank run is the baseline of the others, in the same run.
The load average is recorded at start and end: on a machine with fewer cores than ranks,
ranks share cores and the step time says so.
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

if __package__ in (None, ""):  # run as `python benchmarks/model_ranks.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])


def run(ranks: int, size: str, steps: int, family: str, cache: Path) -> dict[str, Any]:
    """One job of the model; what it printed, parsed."""
    nx, ny, nz = size.split("x")
    mpiexec = shutil.which("mpiexec", path=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    if mpiexec is None:
        raise SystemExit("no mpiexec: install the mpi extra (pip install 'stencilchain[mpi]')")
    env = dict(
        os.environ,
        OMP_NUM_THREADS="1",
        STENCILCHAIN_CACHE_DIR=str(cache),
        SCMODEL_NX=nx, SCMODEL_NY=ny, SCMODEL_NZ=nz, SCMODEL_STEPS=str(steps),
        SCMODEL_FAMILY=family,
        PYTHONPATH=str(Path(__file__).resolve().parents[1]),
    )  # fmt: skip
    command = [mpiexec, "-n", str(ranks), sys.executable, "-m", "stencilchain.examples.model"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{ranks} ranks failed:\n{done.stdout}\n{done.stderr}")
    out = done.stdout
    compile_ = re.search(r"compile ([\d.]+) s: (\d+) programs, builds per rank \[([\d, ]+)\]", out)
    steps_ = re.search(r"([\d.]+) ms per step, exchange (\d+)%", out)
    checksum = re.search(r"^checksum (.*)$", out, re.MULTILINE)
    assert compile_ and steps_ and checksum, out
    return {
        "ranks": ranks,
        "compile_s": float(compile_[1]),
        "programs": int(compile_[2]),
        "builds_per_rank": [int(b) for b in compile_[3].split(",")],
        "ms_per_step": float(steps_[1]),
        "exchange_share": int(steps_[2]) / 100,
        "checksum": checksum[1],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="1,2,4")
    parser.add_argument("--size", default="128x128x32")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--family", default="gtfn")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    load_start = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="sc-model-ranks-") as tmp:
        for ranks in (int(r) for r in args.ranks.split(",")):
            rows.append(run(ranks, args.size, args.steps, args.family, Path(tmp, f"cache{ranks}")))
    load_end = os.getloadavg()
    base = rows[0]
    print(
        f"model {args.size}, {args.steps} steps, {args.family}; load {load_start[0]:.2f} -> {load_end[0]:.2f}"
    )
    print("ranks  compile s  builds/rank    ms/step  vs 1 rank  exchange  checksum")
    for row in rows:
        speedup = base["ms_per_step"] / row["ms_per_step"]
        print(
            f"{row['ranks']:5d}  {row['compile_s']:9.2f}  {row['builds_per_rank']!s:12s} "
            f"{row['ms_per_step']:9.2f}  {speedup:8.2f}x  {row['exchange_share']:8.0%}  {row['checksum']}"
        )
    same = len({row["checksum"] for row in rows}) == 1
    print(f"checksums {'identical' if same else 'DIFFER'}")
    if args.json:
        args.json.write_text(json.dumps({"load": [load_start, load_end], "rows": rows}, indent=1))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
