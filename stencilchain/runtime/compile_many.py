"""Compiling many programs at once: `Toolchain.compile_many`.

Each program is compiled as `Toolchain.compile` does (from the pool, the caches, or a
new build, and put in the pool), by a pool of threads: the native builds are processes,
and the Python parts that are not thread-safe take their step's lock (DaCe's). The
steps' one-time set-up runs first, in this thread; each native build then runs about
CPUs / jobs parallel jobs, so that `jobs` builds side by side do not oversubscribe the
CPUs. A compilation step that can build several programs at once (`BatchBuildStep`:
GTFN's, DaCe's on the CPU) gets them in batches of up to BATCH_SIZE, one batch per worker
at a time. See docs/adr/0009-compile-many.md, docs/adr/0036-compile-many-batches.md and
docs/adr/0058-dace-batch-units.md.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from stencilchain.errors import BuildsFailedError
from stencilchain.program import ir
from stencilchain.program.program import Program
from stencilchain.runtime.config import default_build_jobs
from stencilchain.steps.build.batch import BatchBuildStep
from stencilchain.steps.workflow import COMPILATION, INDEX, StageReport

if TYPE_CHECKING:
    from stencilchain.runtime.toolchain import CompiledProgram, Toolchain
    from stencilchain.steps.stages import CompiledArtifact, ExtensionSource

T = TypeVar("T")
POOL, CACHE, BUILT, FAILED = "pool", "cache", "built", "failed"
BATCH_SIZE = 16
"""The most programs one batch build holds (see `_batches`)."""


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
    batch: bool = True,
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

    batching = batch and workers > 1 and isinstance(toolchain.workflow.compilation, BatchBuildStep)
    chunks = _batches(missing, workers) if batching else [[fp] for fp in missing]

    def run(chunk: list[str]) -> list[tuple[str, _Attempt]]:
        programs = [distinct[fp] for fp in chunk]
        return _attempt_batch(toolchain, build_jobs, programs, batch=batching)

    if workers == 1:
        for chunk in chunks:
            for fp, attempt in run(chunk):
                record(fp, attempt)
    else:
        with concurrent.futures.ThreadPoolExecutor(
            workers, thread_name_prefix="stencilchain-build"
        ) as executor:
            futures = {executor.submit(run, chunk): chunk for chunk in chunks}
            try:
                for future in concurrent.futures.as_completed(futures):
                    for fp, attempt in future.result():
                        record(fp, attempt)
            except BaseException:  # e.g. KeyboardInterrupt: start no other build
                executor.shutdown(wait=True, cancel_futures=True)
                raise
    if failed:
        raise BuildsFailedError(_by_name(failed, distinct), _by_name(compiled, distinct))
    return [compiled[fp] for fp in fingerprints]


def _batches(missing: list[str], workers: int) -> list[list[str]]:
    """`missing` in batches of at most BATCH_SIZE, as many as a multiple of `workers` (so
    that each worker gets as many), their sizes differing by one at most."""
    count = workers * math.ceil(math.ceil(len(missing) / BATCH_SIZE) / workers)
    count = min(count, len(missing))
    size, extra = divmod(len(missing), count)
    batches, start = [], 0
    for index in range(count):
        end = start + size + (index < extra)
        batches.append(missing[start:end])
        start = end
    return batches


def _attempt_batch(
    toolchain: Toolchain, build_jobs: int | None, programs: list[ir.Program], *, batch: bool
) -> list[tuple[str, _Attempt]]:
    """Each of `programs` compiled as `compile` does, after (with `batch`) a batch build of
    them all (`BatchBuildStep`): a program it built is compiled with the artifact of its
    new entry as its compilation (so it is "built", as a build of its own would be: its
    artifact says so, the size limit is kept after it), the others (and any it could not
    build) are built alone. A program the batch built takes the batch's time per program
    it built on top of its own."""
    start = time.perf_counter()
    built = _build_batch(toolchain, build_jobs, programs) if batch else {}
    share = (time.perf_counter() - start) / max(1, len(built))
    results = []
    for index, program in enumerate(programs):
        artifact = built.get(index)
        result, outcome, seconds, error = _attempt(toolchain, build_jobs, program, artifact)
        if artifact is not None:
            seconds += share
        results.append((program.fingerprint(), (result, outcome, seconds, error)))
    return results


def _build_batch(
    toolchain: Toolchain, build_jobs: int | None, programs: list[ir.Program]
) -> dict[int, CompiledArtifact]:
    """The artifacts, by index in `programs`, of the programs that one batch build of
    their sources put into the build cache. A program whose translation or bindings fail
    is left out (its own compilation reports it), as is everything if the batch fails."""
    workflow = (
        toolchain.workflow if build_jobs is None else toolchain.workflow.with_build_jobs(build_jobs)
    )
    step = workflow.compilation
    if not isinstance(step, BatchBuildStep):
        return {}
    sources, indices = [], []
    for index, program in enumerate(programs):
        try:
            sources.append(workflow.bind(workflow.translate(program)))
        except Exception:  # reported by the program's own compilation
            continue
        indices.append(index)
    try:
        done = step.build_batch(sources)
    except Exception:  # each program is then built alone
        return {}
    return {indices[k]: artifact for k, artifact in enumerate(done) if artifact is not None}


@dataclasses.dataclass(frozen=True)
class _Built:
    """A compilation step that hands over what a batch build made: `artifact`, the new
    entry of the one program it is used for."""

    artifact: CompiledArtifact

    def __call__(self, source: ExtensionSource, /) -> CompiledArtifact:
        return self.artifact


def _compile(
    toolchain: Toolchain,
    build_jobs: int | None,
    program: ir.Program,
    artifact: CompiledArtifact | None = None,
) -> tuple[CompiledProgram, str]:
    """`toolchain.compile(program)` with at most `build_jobs` parallel jobs per native build
    (None: the step's own), or with `artifact` (a batch's) as its compilation; where it
    came from."""
    compilation: list[bool | None] = []

    def hook(report: StageReport) -> None:
        if report.stage in (COMPILATION, INDEX):  # a load index hit is a cache hit
            compilation.append(report.cached)

    workflow = toolchain.workflow
    if artifact is not None:
        workflow = dataclasses.replace(workflow, compilation=_Built(artifact))
    elif build_jobs is not None:
        workflow = workflow.with_build_jobs(build_jobs)
    result = toolchain.compile_with(program, hook, workflow)
    outcome = POOL if not compilation else CACHE if compilation[0] else BUILT
    return result, outcome


_Attempt = tuple["CompiledProgram | None", str, float, "Exception | None"]


def _attempt(
    toolchain: Toolchain,
    build_jobs: int | None,
    program: ir.Program,
    artifact: CompiledArtifact | None = None,
) -> _Attempt:
    """(compiled program or None, outcome, seconds, error or None) of one program."""
    start = time.perf_counter()
    try:
        result, outcome = _compile(toolchain, build_jobs, program, artifact)
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
