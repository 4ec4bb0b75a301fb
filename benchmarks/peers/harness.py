"""The peer figure: hdiff and the Thomas solve on stencilchain's toolchains, a compiled copy
of the same arrays, and the peer baselines (a hand-written Numba nest, Halide with a hand
schedule and, for hdiff, Mullapudi2016's auto-scheduler, and for hdiff Devito's advanced
mode with OpenMP), interleaved over rounds in one run.

Each peer runs in a process of its own interpreter (benchmarks/peers/worker.py), which
times its kernel there and answers with the wall times; stencilchain's toolchains and the
copy run here. Every contender's result is checked against NumPy before it is timed (a
wrong result is an error of the figure, never a figure). A peer whose interpreter or
package is missing is skipped with a note saying how to set it up.

Per case (kernel, shape, layout): each contender's median wall time over `rounds` rounds
of `per_round` calls, the order of the contenders rotating from round to round (and the
least time, which waiting for a core on a loaded machine inflates less, and the median CPU
time of all the process's threads, which waiting does not inflate at all on one thread);
its GB/s
in unique bytes; its time over stencilchain GTFN's; and a roofline: the kernel's unique
bytes and flops per point, the copy's GB/s, hence the least time a kernel that moves its
unique bytes once can take, and each contender's fraction of it.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.peers import reference

PEERS = ("numba", "halide", "devito")
# the variants of each peer per kernel: Halide's auto-scheduler only for hdiff; Devito's
# advanced mode (OpenMP) for hdiff alone, called through `Operator.apply` and directly
VARIANTS = {
    ("numba", "hdiff"): ("hand",),
    ("numba", "thomas"): ("hand",),
    ("halide", "hdiff"): ("hand", "auto"),
    ("halide", "thomas"): ("hand",),
    ("devito", "hdiff"): ("advanced", "advanced-cfunction"),
    ("devito", "thomas"): (),  # Devito's equations are explicit updates: hdiff only
}
WORKER = Path(__file__).resolve().parent / "worker.py"
# where `python -m benchmarks.peers setup` makes the peers' virtual environments
DEFAULT_VENVS = Path(__file__).resolve().parent / ".venvs"
SETUP_HINT = "python -m benchmarks.peers setup"
# unique bytes (each input read once, the output written once) and flops per grid point:
# hdiff: inp, coeff, out; Laplacian 5, two limited fluxes 3 each (a difference, and the
# product of the limiter), the update 5 (and two comparisons). Thomas: a, b, c, d, x;
# forward 6 (two of them divisions), backward 2.
BYTES_PER_POINT = {"hdiff": 24, "thomas": 40}
FLOPS_PER_POINT = {"hdiff": 16, "thomas": 8}
PROGRAM_NAMES = {"hdiff": "hdiff", "thomas": "tridiagonal"}


@dataclass(frozen=True)
class Case:
    """One kernel on one grid in one layout."""

    kernel: str  # "hdiff" or "thomas"
    shape: tuple[int, ...]  # (I, J, K), or (Cell, K) for the Thomas solve on cells
    order: str  # "C" or "F"

    @property
    def key(self) -> str:
        grid = "x".join(map(str, self.shape))
        where = "Cell,K " if len(self.shape) == 2 else ""
        return f"{self.kernel} {grid} {where}{self.order}"


def peer_python(peer: str, given: Path | None) -> Path:
    """The interpreter of `peer`: as given, else the one `setup` made."""
    return given if given is not None else DEFAULT_VENVS / peer / "bin" / "python"


class PeerProcess:
    """A running worker of one peer: requests out, one JSON answer per request."""

    def __init__(self, peer: str, python: Path, env: Mapping[str, str]) -> None:
        self.peer = peer
        self.process = subprocess.Popen(
            [str(python), str(WORKER), peer],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=dict(env),
            cwd=str(WORKER.parent),
        )
        self.hello = self._answer()

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait()
            return {"ok": False, "error": f"the worker exited with status {code}"}
        return json.loads(line)  # type: ignore[no-any-return]

    def request(self, **request: Any) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self._answer()

    def close(self) -> None:
        """Asks the worker to quit (it answers nothing) and waits for it."""
        if self.process.poll() is None and self.process.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                self.process.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.process.stdin.close()
        self.process.wait(timeout=60)


def start_peers(pythons: Mapping[str, Path | None], notes: list[str]) -> dict[str, PeerProcess]:
    """A worker per peer whose interpreter and package are there; the others are left out
    with a note."""
    env = dict(os.environ)
    threads = env.get("OMP_NUM_THREADS", "2")
    env.setdefault("NUMBA_NUM_THREADS", threads)
    env.setdefault("HL_NUM_THREADS", threads)
    env.setdefault("DEVITO_LANGUAGE", "openmp")  # Devito's advanced mode with OpenMP, GCC
    env.setdefault("DEVITO_ARCH", "gcc")
    env.pop("PYTHONPATH", None)  # the peer's interpreter, not the project's packages
    started: dict[str, PeerProcess] = {}
    for peer, given in pythons.items():
        python = peer_python(peer, given)
        if not python.exists():
            notes.append(
                f"peer {peer}: skipped, no interpreter at {python} (set one up with "
                f"`{SETUP_HINT}`, or pass --{peer}-python PATH)"
            )
            continue
        process = PeerProcess(peer, python, env)
        if not process.hello.get("ok"):
            notes.append(
                f"peer {peer}: skipped, {python} cannot run it: {process.hello.get('error')} "
                f"(`{SETUP_HINT}` installs it)"
            )
            process.close()
            continue
        started[peer] = process
    return started


def stencilchain_program(case: Case) -> Any:
    from benchmarks.tridiagonal import cell_tridiagonal_solve
    from stencilchain.examples import hdiff, tridiagonal

    if case.kernel == "hdiff":
        return hdiff.PROGRAM
    return tridiagonal.PROGRAM if len(case.shape) == 3 else cell_tridiagonal_solve


PAGE = 4096
DEVITO_HALO = 2  # benchmarks/peers/devito_kernels.py's HALO: Devito pads every dimension by it


def devito_layout(array: np.ndarray, halo: int = DEVITO_HALO) -> np.ndarray:
    """A copy of `array` in memory laid out as Devito lays out a Function's data: every
    dimension padded by `halo` on both sides (a 768-point row becomes 772), the padded
    block starting on a page, and without NumPy's advice for transparent huge pages
    (Devito's allocator is `posix_memalign` and advises nothing, so where the kernel's
    setting is `madvise` its arrays are on 4 KiB pages); the view of the unpadded points.
    Beyond the last-level cache the padding and the pages change a kernel's time by up
    to 1.5x (docs/guide/backends.md, "hdiff beyond the last-level cache"): a fair
    comparison with Devito passes arrays allocated alike."""
    order = "F" if array.flags.f_contiguous and not array.flags.c_contiguous else "C"
    padded = tuple(n + 2 * halo for n in array.shape)
    nbytes = int(np.prod(padded)) * array.itemsize
    advise = getattr(np._core.multiarray, "_set_madvise_hugepage", None)
    before = advise(False) if advise is not None else None
    try:
        flat = np.empty(nbytes + PAGE, np.uint8)
    finally:
        if advise is not None:
            advise(before)
    start = -flat.ctypes.data % PAGE
    block = np.ndarray(padded, array.dtype, buffer=flat, offset=start, order=order)  # type: ignore[call-overload]
    block.fill(0.0)
    view = block[tuple(slice(halo, n - halo) for n in padded)]
    view[...] = array
    return view  # type: ignore[no-any-return]


def _local_contenders(
    case: Case,
    toolchains: Mapping[str, Any],
    arrays: dict[str, np.ndarray],
    devito_arrays: bool = False,
) -> dict[str, Callable[[], Any]]:
    """stencilchain's toolchains (checked against NumPy here) and a compiled copy of an
    array of the grid's shape and layout (through the first toolchain); with
    `devito_arrays`, also the first toolchain on copies of `arrays` laid out as Devito's
    own (`devito_layout`)."""
    from benchmarks.throughput import COPIES

    calls: dict[str, Callable[[], Any]] = {}
    args = list(arrays.values())
    program = stencilchain_program(case)
    for family, toolchain in toolchains.items():
        bound = program.with_backend(toolchain)
        bound(*args)
        reference.check_result(f"stencilchain {family} {case.key}", case.kernel, arrays)
        calls[f"stencilchain {family}"] = partial(bound, *args)
    if toolchains and devito_arrays:
        family, toolchain = next(iter(toolchains.items()))
        padded = {name: devito_layout(array) for name, array in arrays.items()}
        bound = program.with_backend(toolchain)
        bound(*padded.values())
        name = f"stencilchain {family}, Devito's arrays"
        reference.check_result(f"{name} {case.key}", case.kernel, padded)
        calls[name] = partial(bound, *padded.values())
    if toolchains:
        family, toolchain = next(iter(toolchains.items()))
        src = np.ones(case.shape, order=case.order)  # type: ignore[call-overload]
        dst = np.zeros(case.shape, order=case.order)  # type: ignore[call-overload]
        copy = COPIES[len(case.shape)].with_backend(toolchain)
        calls[f"compiled copy ({family})"] = partial(copy, src, dst)
    return calls


def case_figures(
    case: Case,
    toolchains: Mapping[str, Any],
    peers: Mapping[str, PeerProcess],
    rounds: int,
    per_round: int,
) -> dict[str, Any]:
    """The contenders of one case, interleaved over `rounds`, with the roofline."""
    load_start = os.getloadavg()
    arrays = reference.make_inputs(case.kernel, case.shape, case.order)
    local = _local_contenders(
        case, toolchains, arrays, "devito" in peers and case.kernel == "hdiff"
    )
    remote: dict[str, tuple[PeerProcess, str]] = {}
    results: dict[str, Any] = {}
    for peer, process in peers.items():
        for variant in VARIANTS.get((peer, case.kernel), ("hand",)):
            name = f"{peer} {variant}"
            answer = process.request(op="prepare", case=case.key + name, kernel=case.kernel,
                                     order=case.order, shape=list(case.shape), variant=variant)  # fmt: skip
            if not answer.get("ok"):
                raise reference.WrongResultError(f"{name} {case.key}: {answer.get('error')}")
            remote[name] = (process, case.key + name)
            results[name] = {"build_s": answer["build_s"], "max_rel_diff": answer["max_rel_diff"]}
    for fn in local.values():
        fn()  # warm
    names = list(local) + list(remote)
    walls: dict[str, list[float]] = {name: [] for name in names}
    cpus: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(max(1, rounds)):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            if name in local:
                for _ in range(per_round):
                    start, start_cpu = time.perf_counter(), time.process_time()
                    local[name]()
                    walls[name].append(time.perf_counter() - start)
                    cpus[name].append(time.process_time() - start_cpu)
            else:
                process, key = remote[name]
                answer = process.request(op="time", case=key, repeat=per_round)
                if not answer.get("ok"):
                    raise RuntimeError(f"{name} {case.key}: {answer.get('error')}")
                walls[name] += answer["wall_s"]
                cpus[name] += answer["cpu_s"]
    for process, key in remote.values():
        process.request(op="drop", case=key)
    points = int(np.prod(case.shape))
    unique = BYTES_PER_POINT[case.kernel] * points
    copy_name = next((n for n in names if n.startswith("compiled copy")), None)
    for name in names:
        median = statistics.median(walls[name])
        row = results.setdefault(name, {})
        nbytes = 16 * points if name == copy_name else unique
        row.update({"median_s": median, "min_s": min(walls[name]), "GBps": nbytes / median / 1e9,
                    "median_cpu_s": statistics.median(cpus[name]), "calls": len(walls[name])})  # fmt: skip
    ours = results.get("stencilchain gtfn", {}).get("median_s")
    for row in results.values():
        if ours:
            row["time_over_gtfn"] = row["median_s"] / ours
    roofline: dict[str, Any] = {
        "points": points,
        "bytes_per_point": BYTES_PER_POINT[case.kernel],
        "flops_per_point": FLOPS_PER_POINT[case.kernel],
        "flops_per_byte": FLOPS_PER_POINT[case.kernel] / BYTES_PER_POINT[case.kernel],
    }
    if copy_name is not None:
        # the bound from the copy's median, and from its least time: on a loaded machine
        # the median waits for cores, the least time is the bandwidth when it has them
        copy_gbps = results[copy_name]["GBps"]
        best_gbps = 16 * points / results[copy_name]["min_s"] / 1e9
        bound, best = unique / (copy_gbps * 1e9), unique / (best_gbps * 1e9)
        roofline.update({"copy_GBps": copy_gbps, "bound_s": bound,
                         "copy_GBps_best": best_gbps, "bound_best_s": best})  # fmt: skip
        for name in names:
            if name != copy_name:
                results[name]["fraction_of_bound"] = bound / results[name]["median_s"]
                results[name]["fraction_of_bound_best"] = best / results[name]["min_s"]
    return {
        "contenders": results,
        "roofline": roofline,
        "loadavg": [load_start[0], os.getloadavg()[0]],
    }


def cases(
    shapes: list[tuple[int, int, int]],
    cells: tuple[int, int] | None,
    kernels: tuple[str, ...] = ("hdiff", "thomas"),
) -> list[Case]:
    """hdiff and the Thomas solve (those of `kernels`) on each (I, J, K) shape, and the
    Thomas solve on (Cell, K), each in C and Fortran order."""
    found = [Case(k, s, o) for s in shapes for k in ("hdiff", "thomas") for o in "CF"
             if k in kernels]  # fmt: skip
    if cells is not None and "thomas" in kernels:
        found += [Case("thomas", cells, o) for o in "CF"]
    return found


def peers_figures(
    toolchains: Mapping[str, Any],
    shapes: list[tuple[int, int, int]],
    cells: tuple[int, int] | None,
    rounds: int,
    per_round: int,
    pythons: Mapping[str, Path | None],
    notes: list[str],
    kernels: tuple[str, ...] = ("hdiff", "thomas"),
) -> dict[str, Any]:
    """`{case key: case_figures, "peers": {peer: version}}`: every case, one after the
    other, each with all its contenders interleaved."""
    peers = start_peers(pythons, notes)
    versions = {p: {"version": w.hello.get("version"), "threads": w.hello.get("threads")}
                for p, w in peers.items()}  # fmt: skip
    figures: dict[str, Any] = {"peers": versions}
    try:
        for case in cases(shapes, cells, kernels):
            figures[case.key] = case_figures(case, toolchains, peers, rounds, per_round)
    finally:
        for process in peers.values():
            process.close()
    return figures


def main(argv: list[str] | None = None) -> None:
    """`python -m benchmarks.peers.harness`: this figure alone (see benchmarks/peers/__main__.py)."""
    from benchmarks.peers.__main__ import main as peers_main

    peers_main(["run", *(argv if argv is not None else sys.argv[1:])])
