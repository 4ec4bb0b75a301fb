"""Compiling many programs at once: `Toolchain.compile_many`.

Each program is compiled as `Toolchain.compile` does (from the pool, the caches, or a
new build, and put in the pool), by a pool of threads: the native builds are processes,
and the Python parts that are not thread-safe take their step's lock (DaCe's). The
steps' one-time set-up runs first, in this thread; each native build then runs about
CPUs / jobs parallel jobs, so that `jobs` builds side by side do not oversubscribe the
CPUs. See docs/adr/0009-compile-many.md.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from stencilchain.errors import BuildsFailedError
from stencilchain.program import ir
from stencilchain.program.program import Program
from stencilchain.runtime.config import default_build_jobs
from stencilchain.steps.workflow import COMPILATION, StageReport

if TYPE_CHECKING:
    from stencilchain.runtime.toolchain import CompiledProgram, Toolchain

T = TypeVar("T")
POOL, CACHE, BUILT, FAILED = "pool", "cache", "built", "failed"


@dataclasses.dataclass(frozen=True)
class CompileReport:
    """One program of a `compile_many`, done: the `done`-th of `total` distinct programs.

    `outcome` says where it came from: "pool" (compiled before in this process),
    "cache" (loaded from the build cache), "built" (a new build) or "failed" (`error`).
    """

    name: str
    fingerprint: str
    done: int
    total: int
    seconds: float
    outcome: str
    error: BaseException | None = None


def compile_many(
    toolchain: Toolchain,
    programs: Iterable[Program | ir.Program],
    *,
    jobs: int | None = None,
    progress: Callable[[CompileReport], None] | None = None,
) -> list[CompiledProgram]:
    """See `Toolchain.compile_many`."""
    irs = [p.ir if isinstance(p, Program) else p for p in programs]
    for p in irs:
        if not isinstance(p, ir.Program):
            raise TypeError(
                f"compile_many takes sc.program objects or ir.Program, got {type(p).__name__}"
            )
    jobs = toolchain.config.build_jobs if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"compile_many: jobs must be a positive integer, got {jobs!r}")
    fingerprints = [p.fingerprint() for p in irs]
    distinct = dict(zip(fingerprints, irs))  # a program given twice is compiled once
    pool = toolchain.pool
    missing = [fp for fp in distinct if fp not in pool]
    workers = max(1, min(jobs, len(missing)))
    if missing:
        toolchain.workflow.prepare()  # the one-time set-up, before builds go side by side
    build_jobs = max(1, default_build_jobs() // workers) if workers > 1 else None

    compiled: dict[str, CompiledProgram] = {}
    failed: dict[str, BaseException] = {}
    total = len(distinct)

    def finished(fp: str, seconds: float, outcome: str, error: BaseException | None) -> None:
        if progress is not None:
            done = len(compiled) + len(failed)
            progress(CompileReport(distinct[fp].name, fp, done, total, seconds, outcome, error))

    for fp in distinct:
        if fp not in missing:
            compiled[fp] = pool[fp]
            finished(fp, 0.0, POOL, None)

    def record(fp: str, attempt: _Attempt) -> None:
        result, outcome, seconds, error = attempt
        if result is not None:
            compiled[fp] = result
        if error is not None:
            failed[fp] = error
        finished(fp, seconds, outcome, error)

    if workers == 1:
        for fp in missing:
            record(fp, _attempt(toolchain, build_jobs, distinct[fp]))
    else:
        with concurrent.futures.ThreadPoolExecutor(
            workers, thread_name_prefix="stencilchain-build"
        ) as executor:
            futures = {
                executor.submit(_attempt, toolchain, build_jobs, distinct[fp]): fp for fp in missing
            }
            try:
                for future in concurrent.futures.as_completed(futures):
                    record(futures[future], future.result())
            except BaseException:  # e.g. KeyboardInterrupt: start no other build
                executor.shutdown(wait=True, cancel_futures=True)
                raise
    if failed:
        raise BuildsFailedError(_by_name(failed, distinct), _by_name(compiled, distinct))
    return [compiled[fp] for fp in fingerprints]


def _compile(
    toolchain: Toolchain, build_jobs: int | None, program: ir.Program
) -> tuple[CompiledProgram, str]:
    """`toolchain.compile(program)` with at most `build_jobs` parallel jobs per native build
    (None: the step's own); where it came from."""
    compilation: list[bool | None] = []

    def hook(report: StageReport) -> None:
        if report.stage == COMPILATION:
            compilation.append(report.cached)

    result = toolchain.compile(program, hook, build_jobs=build_jobs)
    outcome = POOL if not compilation else CACHE if compilation[0] else BUILT
    return result, outcome


_Attempt = tuple["CompiledProgram | None", str, float, "Exception | None"]


def _attempt(toolchain: Toolchain, build_jobs: int | None, program: ir.Program) -> _Attempt:
    """(compiled program or None, outcome, seconds, error or None) of one program."""
    start = time.perf_counter()
    try:
        result, outcome = _compile(toolchain, build_jobs, program)
    except Exception as error:  # reported with the program's name
        return None, FAILED, time.perf_counter() - start, error
    return result, outcome, time.perf_counter() - start, None


def _by_name(values: dict[str, T], distinct: dict[str, ir.Program]) -> dict[str, T]:
    """`values` (by fingerprint) by program name, in input order; a name that two distinct
    programs share gets the start of the fingerprint appended."""
    named: dict[str, T] = {}
    for fp in distinct:
        if fp in values:
            name = distinct[fp].name
            named[name if name not in named else f"{name} ({fp[:12]})"] = values[fp]
    return named
