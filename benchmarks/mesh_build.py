"""How long building, validating and reading a mesh takes.

    .venv/bin/python benchmarks/mesh_build.py [--json] [--cells 1000000] [--repeat 3]

For a torus and a rectangle of about `--cells` cells (square, 2 triangles per quad): the
best wall time and the CPU time of that run for the builder, `Mesh.validate`, and a
`write_mesh` / `read_mesh` round trip (which validates) through a temporary file.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stencilchain import meshes


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """The best (wall, CPU) seconds of `repeat` calls."""
    runs = []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        runs.append((time.perf_counter() - wall, time.process_time() - cpu))
    return min(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    n = max(3, round(math.sqrt(args.cells / 2)))
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for kind, build in (("torus", meshes.torus), ("rectangle", meshes.rectangle)):
            mesh = build(n, n)
            path = Path(folder) / f"{kind}.npz"
            meshes.write_mesh(mesh, path)
            for step, fn in (
                ("build", lambda build=build: build(n, n)),
                ("validate", mesh.validate),
                ("read", lambda path=path: meshes.read_mesh(path)),
            ):
                wall, cpu = best(fn, args.repeat)
                results[f"{kind} {step}"] = {"cells": mesh.n_cells, "wall_s": wall, "cpu_s": cpu}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, r in results.items():
        print(
            f"{name:<20} {r['cells']:>9} cells  {r['wall_s']:6.2f} s wall  {r['cpu_s']:6.2f} s CPU"
        )


if __name__ == "__main__":
    main()
