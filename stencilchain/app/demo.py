"""The main job: compile the bundled examples, check them against the embedded executor."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from stencilchain.examples import ALL_EXAMPLES
from stencilchain.program.embedded import run_embedded
from stencilchain.runtime.toolchain import Toolchain


@dataclasses.dataclass(frozen=True)
class DemoRow:
    program: str
    backend: str
    compile_s: float
    cached_load_s: float
    run_s: float
    numpy_s: float
    max_difference: float

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _copy_inputs(inputs: dict[str, Any]) -> list[Any]:
    return [v.copy() if isinstance(v, np.ndarray) else v for v in inputs.values()]


def _median_time(fn: Any, args: Sequence[Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def run_demo(toolchain: Toolchain, repeat: int = 5, seed: int = 0) -> list[DemoRow]:
    """One row per example: compile, reload through the caches, run, compare."""
    rows = []
    for module in ALL_EXAMPLES:
        program = module.PROGRAM
        inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(seed))
        expected = _copy_inputs(inputs)
        embedded = run_embedded.executor(program)
        numpy_s = _median_time(embedded, expected, repeat)

        start = time.perf_counter()
        compiled = toolchain.compile(program)
        compile_s = time.perf_counter() - start

        start = time.perf_counter()
        toolchain.workflow(program.ir).load()  # translation cache + build cache hits
        cached_load_s = time.perf_counter() - start

        actual = _copy_inputs(inputs)
        run_s = _median_time(compiled, actual, repeat)
        difference = max(
            float(np.max(np.abs(a.astype(np.float64) - e.astype(np.float64)), initial=0.0))
            for a, e in zip(actual, expected)
            if isinstance(a, np.ndarray)
        )
        rows.append(
            DemoRow(
                program.name, toolchain.name, compile_s, cached_load_s, run_s, numpy_s, difference
            )
        )
    return rows


def format_table(rows: Sequence[DemoRow]) -> str:
    header = (
        "program",
        "backend",
        "compile",
        "cached load",
        "run",
        "numpy",
        "speed-up",
        "max diff",
    )
    lines = [header]
    for r in rows:
        lines.append(
            (
                r.program,
                r.backend,
                f"{r.compile_s * 1e3:.0f} ms",
                f"{r.cached_load_s * 1e3:.1f} ms",
                f"{r.run_s * 1e6:.0f} us",
                f"{r.numpy_s * 1e6:.0f} us",
                f"{r.numpy_s / r.run_s:.1f}x" if r.run_s > 0 else "-",
                f"{r.max_difference:.1e}",
            )
        )
    widths = [max(len(line[k]) for line in lines) for k in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines)
