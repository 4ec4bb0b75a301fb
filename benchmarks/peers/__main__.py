"""`python -m benchmarks.peers`: set up the peer baselines, or run their figure alone.

    python -m benchmarks.peers setup [--into DIR] [--peers numba,halide,devito]
    OMP_NUM_THREADS=2 python -m benchmarks.peers run [--families gtfn,dace] [--large]
        [--shapes 256x256x80,...] [--cells 20000x65] [--kernels hdiff,thomas]
        [--rounds 5] [--per-round 3] [--numba-python PATH] [--halide-python PATH]
        [--devito-python PATH] [--json PATH]

`setup` makes one virtual environment per peer (default benchmarks/peers/.venvs/PEER,
where `run` and `python -m benchmarks` look when no --PEER-python is given) from this
interpreter's base Python, and installs the peer's package and NumPy there, at the
versions of the project's `bench` extra: never into the environment that runs stencilchain
(docs/adr/0038-peer-baselines.md). `run` prints one line per contender and case.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from benchmarks.peers.harness import DEFAULT_VENVS, PEERS

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SHAPE = (256, 256, 80)
LARGE_SHAPE = (768, 768, 128)  # 604 MB per array: beyond any last-level cache here
DEFAULT_CELLS = (20000, 65)


def bench_requirements(pyproject: Path = ROOT / "pyproject.toml") -> dict[str, list[str]]:
    """The `bench` extra's requirements for each peer's environment: its package and the
    rest of the extra that is not another peer's package (NumPy)."""
    extra = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]["bench"]

    def name(requirement: str) -> str:
        return requirement.split(">")[0].split("=")[0].split("<")[0].strip().lower()

    shared = [r for r in extra if name(r) not in PEERS]
    return {peer: [r for r in extra if name(r) == peer] + shared for peer in PEERS}


def setup(into: Path, peers: list[str]) -> None:
    requirements = bench_requirements()
    for peer in peers:
        venv = into / peer
        base = getattr(sys, "_base_executable", sys.executable)
        print(f"{peer}: {venv} ({' '.join(requirements[peer])})", flush=True)
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, *requirements[peer]], check=True)


def parse_shape(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in text.lower().split("x"))


def run(args: argparse.Namespace) -> None:
    from benchmarks._common import make_toolchains
    from benchmarks.peers.harness import peers_figures

    os.environ.setdefault("OMP_NUM_THREADS", "2")  # before the first compiled module loads
    shapes = [parse_shape(s) for s in args.shapes.split(",") if s]
    if args.large and LARGE_SHAPE not in shapes:
        shapes.append(LARGE_SHAPE)
    cells = parse_shape(args.cells) if args.cells else None
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="stencilchain-bench-") as cache:
        toolchains = make_toolchains(args.families.split(","), Path(cache), notes)
        pythons = {peer: getattr(args, f"{peer}_python") for peer in PEERS}
        kernels = tuple(k for k in args.kernels.split(",") if k)
        figures = peers_figures(toolchains, shapes, cells, args.rounds, args.per_round,  # type: ignore[arg-type]
                                pythons, notes, kernels)  # fmt: skip
    for key, case in figures.items():
        if key == "peers":
            print(f"peers: {case}")
            continue
        roof = case["roofline"]
        print(f"{key}  (load {case['loadavg'][0]:.2f} -> {case['loadavg'][1]:.2f}; bound "
              f"{1e3 * roof.get('bound_s', float('nan')):.2f} ms at copy "
              f"{roof.get('copy_GBps', float('nan')):.1f} GB/s; best "
              f"{1e3 * roof.get('bound_best_s', float('nan')):.2f} ms at "
              f"{roof.get('copy_GBps_best', float('nan')):.1f} GB/s)")  # fmt: skip
        for name, row in case["contenders"].items():
            print(f"  {name:28s} {1e3 * row['median_s']:9.3f} ms (min {1e3 * row['min_s']:8.3f},"
                  f" cpu {1e3 * row['median_cpu_s']:8.3f})"
                  f" {row['GBps']:7.1f} GB/s"
                  f"  x{row.get('time_over_gtfn', float('nan')):5.2f} of gtfn"
                  f"  {row.get('fraction_of_bound', float('nan')):5.2f} of bound"
                  f" ({row.get('fraction_of_bound_best', float('nan')):4.2f} best)")  # fmt: skip
    for note in notes:
        print(f"note: {note}")
    if args.json is not None:
        args.json.write_text(json.dumps({"figures": figures, "notes": notes}, indent=1) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.peers", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    set_up = sub.add_parser("setup", help="make the peers' environments")
    set_up.add_argument("--into", type=Path, default=DEFAULT_VENVS)
    set_up.add_argument("--peers", default=",".join(PEERS))
    go = sub.add_parser("run", help="run the peer figure alone")
    go.add_argument("--families", default="gtfn,dace")
    go.add_argument("--shapes", default="x".join(map(str, DEFAULT_SHAPE)))
    go.add_argument("--large", action="store_true", help=f"also {'x'.join(map(str, LARGE_SHAPE))}")
    go.add_argument(
        "--cells", default="x".join(map(str, DEFAULT_CELLS)), help="CELLSxLEVELS, or ''"
    )
    go.add_argument("--rounds", type=int, default=5)
    go.add_argument("--per-round", type=int, default=3)
    go.add_argument("--kernels", default="hdiff,thomas", help="hdiff, thomas or both")
    for peer in PEERS:
        go.add_argument(f"--{peer}-python", type=Path)
    go.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.command == "setup":
        for peer in args.peers.split(","):
            if peer not in PEERS:
                parser.error(f"--peers: unknown peer {peer!r}; the peers are {', '.join(PEERS)}")
        setup(args.into, args.peers.split(","))
    else:
        for kernel in args.kernels.split(","):
            if kernel not in ("hdiff", "thomas"):
                parser.error(f"--kernels: unknown kernel {kernel!r}; the kernels are hdiff, thomas")
        run(args)


if __name__ == "__main__":
    main()
