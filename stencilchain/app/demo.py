"""The main job: compile the bundled examples, check them against the embedded executor."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from stencilchain.app.inputs import (
    bound_with_workspace,
    copy_arguments,
    synchronize,
    to_device,
    to_host,
)
from stencilchain.app.output import table
from stencilchain.errors import UnsupportedError
from stencilchain.examples import ALL_EXAMPLES
from stencilchain.examples.gt4py import GT4PY_EXAMPLES
from stencilchain.program.device import Device
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


@dataclasses.dataclass(frozen=True)
class Unsupported:
    """An example that a toolchain refused to compile (`sc.UnsupportedError`), and why."""

    program: str
    backend: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class DemoResult:
    """The rows of the examples that ran, and the examples the toolchain does not support."""

    rows: list[DemoRow]
    unsupported: list[Unsupported]


def _median_time(fn: Any, args: Sequence[Any], repeat: int, device: Device) -> float:
    times = []
    for _ in range(max(repeat, 1)):
        start = time.perf_counter()
        fn(*args)
        synchronize(device)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


# the bundled examples, then their twins in gt4py's spelling (stencilchain/examples/gt4py)
DEMO_EXAMPLES: list[ModuleType] = [*ALL_EXAMPLES, *GT4PY_EXAMPLES]


def select_examples(programs: Sequence[str] = ()) -> list[ModuleType]:
    """The bundled examples, or those whose program is named in `programs`."""
    if not programs:
        return list(DEMO_EXAMPLES)
    by_name = {m.PROGRAM.name: m for m in DEMO_EXAMPLES}
    unknown = [p for p in programs if p not in by_name]
    if unknown:
        from stencilchain.app.errors import CLIError

        raise CLIError(
            f"no bundled example named {', '.join(map(repr, unknown))}; "
            f"the examples are {', '.join(by_name)}"
        )
    return [by_name[p] for p in programs]


def run_demo(
    toolchain: Toolchain,
    repeat: int = 5,
    seed: int = 0,
    examples: Sequence[ModuleType] | None = None,
    on_step: Callable[[str], None] | None = None,
    on_done: Callable[[DemoRow | Unsupported], None] | None = None,
) -> DemoResult:
    """One row per example: compile, reload through the caches, run, compare; an example
    whose compilation raises `UnsupportedError` is listed
    as unsupported instead.

    `on_step(label)` is called as each phase of an example starts ("compiling hdiff with
    run_gtfn_cpu", then "running ..."), `on_done` with each row or unsupported example as
    it completes (e.g. to show progress, and print rows as they come)."""
    rows = []
    unsupported = []
    device = toolchain.device
    for module in DEMO_EXAMPLES if examples is None else examples:
        program = module.PROGRAM
        label = f"{program.name} with {toolchain.name}"
        if on_step is not None:
            on_step(f"compiling {label}")
        inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(seed))
        expected = copy_arguments(list(inputs.values()))
        embedded = run_embedded.executor(program)
        numpy_s = _median_time(embedded, expected, repeat, Device.CPU)

        start = time.perf_counter()
        try:
            toolchain.compile(program)
        except UnsupportedError as error:
            unsupported.append(Unsupported(program.name, toolchain.name, str(error)))
            if on_done is not None:
                on_done(unsupported[-1])
            continue
        compile_s = time.perf_counter() - start
        if on_step is not None:
            on_step(f"running {label}")

        start = time.perf_counter()
        toolchain.workflow(program.ir).load()  # translation cache + build cache hits
        cached_load_s = time.perf_counter() - start

        actual = to_device(copy_arguments(list(inputs.values())), device)
        compiled = bound_with_workspace(program, toolchain, actual)
        run_s = _median_time(compiled, actual, repeat, device)
        difference = max(
            float(np.max(np.abs(a.astype(np.float64) - e.astype(np.float64)), initial=0.0))
            for a, e in zip(to_host(actual), expected)
            if isinstance(a, np.ndarray)
        )
        rows.append(
            DemoRow(
                program.name, toolchain.name, compile_s, cached_load_s, run_s, numpy_s, difference
            )
        )
        if on_done is not None:
            on_done(rows[-1])
    return DemoResult(rows, unsupported)


HEADER = ("program", "backend", "compile", "cached load", "run", "numpy", "speed-up", "max diff")


def _cells(r: DemoRow) -> tuple[str, ...]:
    return (
        r.program,
        r.backend,
        f"{r.compile_s * 1e3:.0f} ms",
        f"{r.cached_load_s * 1e3:.1f} ms",
        f"{r.run_s * 1e6:.0f} us",
        f"{r.numpy_s * 1e6:.0f} us",
        f"{r.numpy_s / r.run_s:.1f}x" if r.run_s > 0 else "-",
        f"{r.max_difference:.1e}",
    )


def format_table(rows: Sequence[DemoRow]) -> str:
    return table(HEADER, [_cells(r) for r in rows])


def row_widths(programs: Sequence[str], backends: Sequence[str]) -> tuple[int, ...]:
    """Column widths for rows printed one at a time, before all are known: the names'
    widest, and room for typical times in the other columns."""
    names = (max(map(len, programs), default=0), max(map(len, backends), default=0))
    return tuple(max(len(h), names[k] if k < 2 else 9) for k, h in enumerate(HEADER))


def format_row(cells: Sequence[str], widths: Sequence[int]) -> str:
    """One line of the table with columns of `widths` (a header or `DemoRow` cells)."""
    return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()


def format_streamed_row(row: DemoRow, widths: Sequence[int]) -> str:
    return format_row(_cells(row), widths)
