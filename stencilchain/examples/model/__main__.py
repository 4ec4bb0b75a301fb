"""`python -m stencilchain.examples.model [--config FILE] [--steps N] [--trace PATH]`:
compile once for the job, run, print each step's time (rank 0) and the final checksum.
`--trace` writes one trace of the run (every rank's compiles, steps and calls, one process
lane per rank) to PATH, for Perfetto or `stencilchain trace render PATH out.png`."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from stencilchain.errors import StencilchainError
from stencilchain.examples.model.containers import build_model_container
from stencilchain.runtime import tracing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stencilchain.examples.model")
    parser.add_argument("--config", help="a TOML file with [model] and [stencils] sections")
    parser.add_argument("--steps", type=int, help="overrides the steps setting")
    parser.add_argument(
        "--trace", type=Path, metavar="PATH", help="write a trace of the run (all ranks) to PATH"
    )
    args = parser.parse_args(argv)
    container = build_model_container(file=args.config)
    if args.steps is not None:
        container.config.model.steps.from_value(args.steps)
    model = container.model()
    grid = model.grid
    lead = grid.rank == 0

    def say(text: str) -> None:
        if lead:
            print(text, flush=True)

    recording: tracing.Trace | None = None
    if args.trace is not None:
        recording = tracing.start(tracing.Trace(None, grid.rank, f"rank {grid.rank}"))

    def span(name: str, cat: str, **what: Any) -> Any:
        if recording is None:
            return contextlib.nullcontext()
        return recording.span(name, cat, **what)

    s = model.settings
    say(
        f"grid {s.nx}x{s.ny}x{s.nz} on {grid.ranks} ranks ({'x'.join(map(str, grid.grid))}), "
        f"{s.family}, halo {model.halo[grid.split[0]]}"
    )
    with span("compile the model", "model"):
        seconds, built, programs = model.compile()
    builds = grid.comm.gather(built, root=0)
    say(f"compile {seconds:.2f} s: {programs} programs, builds per rank {builds}")
    total = exchange = 0.0
    for number in range(1, s.steps + 1):
        with span(f"step {number}", "step", step=number):
            report = model.step(number)
        total += report.seconds
        exchange += report.exchange_seconds
        say(
            f"step {report.step:4d}  dt {report.dt:.4f}  max {report.tracer_max:.6f}  "
            f"{report.seconds * 1e3:8.2f} ms  (exchange {report.exchange_seconds * 1e3:.2f} ms)"
        )
    share = exchange / total if total else 0.0
    say(f"steps {total:.3f} s, {total / s.steps * 1e3:.2f} ms per step, exchange {share:.0%}")
    if recording is not None:
        tracing.stop()
        documents = grid.comm.gather(recording.document(), root=0)
        if lead:
            _write_merged(args.trace, documents)
            say(f"trace {args.trace}")
    result = model.checksum()
    if result is not None:
        print(f"checksum {result[0]!r} sha256 {result[1]}", flush=True)
    return 0


def _write_merged(path: Path, documents: list[dict[str, Any]]) -> None:
    """One trace-event file of the ranks' traces (each rank a process lane)."""
    events = [event for doc in documents for event in doc["traceEvents"]]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ms"}) + "\n")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except StencilchainError as error:  # a bad setting, a missing extra: said, not traced
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
