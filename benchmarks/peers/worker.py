"""The process of one peer baseline, run with the peer's own interpreter:

    PEER_PYTHON benchmarks/peers/worker.py numba|halide|devito|numpy

It answers requests, one JSON object per line on stdin, with one JSON line on stdout:

- `{"op": "prepare", "case": ID, "kernel": "hdiff"|"thomas", "order": "C"|"F",
  "shape": [...], "variant": "hand"|"auto"|"advanced"}`: makes the inputs (benchmarks/peers/
  reference.py), builds the kernel, runs it once and checks it against NumPy; answers
  `{"ok": true, "build_s", "max_rel_diff"}`, or `{"ok": false, "error"}` (a wrong result
  is an error: that case is not timed);
- `{"op": "time", "case": ID, "repeat": N}`: N calls, `{"ok": true, "wall_s": [...],
  "cpu_s": [...]}` (the CPU time of the process, all its threads);
- `{"op": "drop", "case": ID}`: frees the case's arrays; `{"op": "quit"}`.

The first answer, before any request, is `{"ok": true, "peer", "version", "threads"}` or
`{"ok": false, "error"}` when the peer's package cannot be imported. It needs NumPy and the
peer's package, never stencilchain. "numpy" runs the NumPy references themselves (for tests
of this protocol).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script by the peer's interpreter
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np

from benchmarks.peers import reference

PACKAGES = {"numba": "numba", "halide": "halide", "devito": "devito", "numpy": "numpy"}
KERNELS = {"numba": "numba_kernels", "halide": "halide_kernels", "devito": "devito_kernels"}


def _numpy_build(
    kernel: str, order: str, arrays: dict[str, np.ndarray], variant: str
) -> Callable[[], None]:
    fn = reference.REFERENCES[kernel]
    args = list(arrays.values())
    return lambda: fn(*args)


def builder(peer: str) -> Callable[..., Callable[[], None]]:
    """The `build(kernel, order, arrays, variant)` of `peer`."""
    if peer == "numpy":
        return _numpy_build
    module = importlib.import_module(f"benchmarks.peers.{KERNELS[peer]}")
    return module.build  # type: ignore[no-any-return]


def version(peer: str, package: Any) -> str:
    """The peer package's version: its `__version__`, else its distribution's (Halide's
    module has none)."""
    found = getattr(package, "__version__", None)
    if found is None:
        try:
            found = importlib.metadata.version(PACKAGES[peer])
        except importlib.metadata.PackageNotFoundError:
            found = "?"
    return str(found)


def threads(peer: str) -> int | None:
    if peer == "numba":
        import numba

        return int(numba.get_num_threads())
    if peer == "devito":  # its OpenMP runtime's, where Devito generates OpenMP
        import devito

        if devito.configuration["language"] != "openmp":
            return 1
        return int(os.environ.get("OMP_NUM_THREADS") or os.cpu_count() or 1)
    return None


class Worker:
    """The cases of one peer, by id: their arrays and their compiled call."""

    def __init__(self, peer: str, build: Callable[..., Callable[[], None]]) -> None:
        self.peer = peer
        self.build = build
        self.cases: dict[str, tuple[dict[str, np.ndarray], Callable[[], None]]] = {}

    def prepare(
        self, case: str, kernel: str, order: str, shape: list[int], variant: str
    ) -> dict[str, Any]:
        arrays = reference.make_inputs(kernel, tuple(shape), order)
        start = time.perf_counter()
        call = self.build(kernel, order, arrays, variant)
        call()  # compiles, where the peer compiles at the first call
        build_s = time.perf_counter() - start
        name = f"{self.peer} {variant} {kernel} {order} {'x'.join(map(str, shape))}"
        worst = reference.check_result(name, kernel, arrays)
        self.cases[case] = (arrays, call)
        return {"ok": True, "build_s": build_s, "max_rel_diff": worst}

    def time(self, case: str, repeat: int) -> dict[str, Any]:
        call = self.cases[case][1]
        walls, cpus = [], []
        for _ in range(repeat):
            start, start_cpu = time.perf_counter(), time.process_time()
            call()
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - start_cpu)
        return {"ok": True, "wall_s": walls, "cpu_s": cpus}

    def drop(self, case: str) -> dict[str, Any]:
        self.cases.pop(case, None)
        return {"ok": True}

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.pop("op")
        try:
            return getattr(self, op)(**request)  # type: ignore[no-any-return]
        except Exception as error:  # reported to the harness, which decides
            traceback.print_exc(file=sys.stderr)
            return {"ok": False, "error": f"{type(error).__name__}: {error}"}


def main(argv: list[str]) -> None:
    peer = argv[0] if argv else ""
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever the kernels print stays off the answers
    try:
        if peer not in PACKAGES:
            raise ValueError(f"unknown peer {peer!r}; the peers are {', '.join(PACKAGES)}")
        package = importlib.import_module(PACKAGES[peer])
        worker = Worker(peer, builder(peer))
        hello = {"ok": True, "peer": peer, "version": version(peer, package)}
        hello["threads"] = threads(peer)
    except Exception as error:
        print(
            json.dumps({"ok": False, "error": f"{type(error).__name__}: {error}"}),
            file=out,
            flush=True,
        )
        return
    print(json.dumps(hello), file=out, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("op") == "quit":
            break
        print(json.dumps(worker.handle(request)), file=out, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
