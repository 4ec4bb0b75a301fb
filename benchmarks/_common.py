"""What the benchmarks share: timing medians, fresh-process timings, the toolchains of a
private cache."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


def median_seconds(fn: Callable[[], Any], repeat: int, *, warmup: bool = True) -> float:
    """The median wall time of one call of `fn` over `repeat` calls, after one warm-up call
    (compilation, first touch of the arrays) unless `warmup` is false."""
    return median_wall_cpu(fn, repeat, warmup=warmup)[0]


def median_wall_cpu(
    fn: Callable[[], Any], repeat: int, *, warmup: bool = True
) -> tuple[float, float]:
    """The medians of the wall time and of the CPU time (all threads) of one call of `fn`;
    waiting for a core on a loaded machine inflates the first, not the second."""
    if warmup:
        fn()
    wall, cpu = [], []
    for _ in range(max(1, repeat)):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def per_call_seconds(fn: Callable[[], Any], number: int, repeat: int = 5) -> float:
    """The median over `repeat` batches of the time per call in a batch of `number` calls
    (for calls too short to time one by one)."""
    return statistics.median(timeit.repeat(fn, number=number, repeat=max(1, repeat))) / number


def fresh_process_seconds(code: str, env: dict[str, str], repeat: int) -> float:
    """The median wall time of `python -c code` in a fresh process."""
    return median_seconds(
        lambda: subprocess.run(
            [sys.executable, "-c", code], env=env, check=True, cwd=_outside_checkouts(env)
        ),
        repeat,
        warmup=False,
    )


def fresh_process_value(code: str, env: dict[str, str], repeat: int) -> float:
    """The median of the (first) number that `python -c code` prints, over fresh processes."""
    values = [
        float(
            subprocess.run(
                [sys.executable, "-c", code],
                env=env,
                check=True,
                capture_output=True,
                text=True,
                cwd=_outside_checkouts(env),
            ).stdout.split()[0]
        )
        for _ in range(max(1, repeat))
    ]
    return statistics.median(values)


def _outside_checkouts(env: dict[str, str]) -> str | None:
    """Where the fresh processes run: `python -c` puts its working directory first on
    sys.path, so in a checkout it would import that tree, not the one PYTHONPATH gives;
    the private cache folder holds none."""
    return env.get("STENCILCHAIN_CACHE_DIR")


def make_toolchains(families: Iterable[str], cache: Path, notes: list[str]) -> dict[str, Any]:
    """The default toolchain of each family, from a container on the private `cache`;
    a family whose extra is not installed is left out with a note. `gtfn-recompute`: GTFN
    under `Materialization.RECOMPUTE` (one point per loop iteration, nothing kept), to
    time GTFN's plans against the code before them in the same run."""
    import functools

    from stencilchain.containers import build_container, make_gtfn_translation, override_step
    from stencilchain.steps.gtfn.tiling import Materialization

    container = build_container({}, cache_dir=cache)
    toolchains: dict[str, Any] = {}
    for family in families:
        if family == "gtfn-recompute":
            inline = build_container({}, cache_dir=cache)
            inline.gtfn.name.override("run_gtfn_cpu_recompute")  # pools are keyed by name
            override_step(
                inline.gtfn.translation,
                functools.partial(make_gtfn_translation, materialization=Materialization.RECOMPUTE),
            )
            toolchains[family] = inline.gtfn.toolchain()
            continue
        try:
            toolchains[family] = getattr(container, family).toolchain()
        except ImportError as error:  # DaCe is an optional extra
            notes.append(f"{family}: skipped, {error}")
    return toolchains
