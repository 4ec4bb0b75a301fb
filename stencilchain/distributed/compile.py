"""Compile once per job: the ranks of a job build each program once between them.

The distinct programs are dealt round-robin over the ranks; each rank builds its share
(`Toolchain.compile_many`, so its share builds in parallel too) while the others build
theirs. Then every rank learns every outcome (one allgather): if a build failed anywhere,
every rank raises the same CompilationError, so no rank waits for one that gave up. Where
the ranks share the build cache (one folder on a shared file system, found by a probe
file), the others load each build from it; where they do not (node-local caches), each
build's files are broadcast from the rank that built it and installed in every cache.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from stencilchain.distributed._mpi import mpi
from stencilchain.errors import BuildsFailedError, CompilationError, DistributedError
from stencilchain.program import ir
from stencilchain.program.program import Program
from stencilchain.steps.build.compiler_step import CompilerStep
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.caches.trust import make_private_folder

if TYPE_CHECKING:
    from stencilchain.runtime.toolchain import CompiledProgram, Toolchain

_PROBE_PREFIX = ".job-probe-"


def compile_for_job(
    toolchain: Toolchain,
    programs: Iterable[Program | ir.Program],
    *,
    comm: Any = None,
    shared_cache: bool | None = None,
) -> list[CompiledProgram]:
    """The compiled `programs` (in their order) on every rank of `comm` (default:
    COMM_WORLD), each built by one rank only. Collective: every rank passes the same
    programs in the same order (DistributedError otherwise).

    `shared_cache`: whether the ranks share one build cache; None finds out with a probe
    file. If not, each build travels from its builder to every rank by a broadcast.
    CompilationError on every rank if a build failed on any, naming each failed program
    and the rank that built it.
    """
    MPI = mpi("compile_for_job")
    comm = MPI.COMM_WORLD if comm is None else comm
    irs = [p.ir if isinstance(p, Program) else p for p in programs]
    distinct = list({p.fingerprint(): p for p in irs}.values())
    _require_same_programs(comm, [p.fingerprint() for p in distinct])
    rank, ranks = comm.Get_rank(), comm.Get_size()
    mine = distinct[rank::ranks]

    failures = _build_share(toolchain, mine)
    everyone = comm.allgather(failures)
    failed = {
        name: (builder, text) for builder, f in enumerate(everyone) for name, text in f.items()
    }
    if failed:
        lines = [
            f"{name} (built on rank {builder}): {text}"
            for name, (builder, text) in sorted(failed.items())
        ]
        raise CompilationError(
            f"compile_for_job: {len(failed)} of {len(distinct)} programs failed to build",
            "\n".join(lines),
            None,
        )

    cache = _build_cache(toolchain)
    if shared_cache is None:
        shared_cache = _shares(comm, cache)
    if not shared_cache:
        _broadcast_builds(comm, toolchain, cache, distinct)
    return toolchain.compile_many(irs)


def _build_share(toolchain: Toolchain, programs: Sequence[ir.Program]) -> dict[str, str]:
    """Build `programs` here; what failed, by program name (its error's text)."""
    try:
        toolchain.compile_many(programs)
    except BuildsFailedError as error:
        return {name: str(problem) for name, problem in error.failures.items()}
    except Exception as error:  # every rank must hear of it, whatever it is
        return {p.name: f"{type(error).__name__}: {error}" for p in programs}
    return {}


def _broadcast_builds(
    comm: Any, toolchain: Toolchain, cache: BuildCache, programs: Sequence[ir.Program]
) -> None:
    """Send each build from its builder to every rank, which installs it in its cache."""
    rank, ranks = comm.Get_rank(), comm.Get_size()
    for number, program in enumerate(programs):
        builder = number % ranks
        payload = None
        if rank == builder:
            key = toolchain.compile(program).artifact.build_dir.name
            payload = (key, cache.export(key))
        key, files = comm.bcast(payload, root=builder)
        if rank != builder:
            if files is None:
                raise DistributedError(
                    f"compile_for_job: rank {builder} built {program.name} but has no "
                    f"complete build of it to send (key {key})"
                )
            cache.install(key, files)


def _build_cache(toolchain: Toolchain) -> BuildCache:
    step = toolchain.workflow.compilation
    if not isinstance(step, CompilerStep):
        raise DistributedError(
            f"compile_for_job: the compilation step of {toolchain.name} "
            f"({type(step).__name__}) has no build cache to share"
        )
    return step.cache


def _shares(comm: Any, cache: BuildCache) -> bool:
    """Whether every rank sees the build cache folder of rank 0 (a probe file it writes)."""
    token = secrets.token_hex(8) if comm.Get_rank() == 0 else None
    token = comm.bcast(token, root=0)
    probe = cache.root / f"{_PROBE_PREFIX}{token}"
    if comm.Get_rank() == 0:
        make_private_folder(cache.root, cache.top)
        probe.write_bytes(b"")
    comm.Barrier()
    seen = comm.allreduce(int(probe.exists()), op=mpi("compile_for_job").MIN)
    comm.Barrier()
    if comm.Get_rank() == 0:
        os.unlink(probe)
    return bool(seen)


def _require_same_programs(comm: Any, fingerprints: list[str]) -> None:
    everyone = comm.allgather(fingerprints)
    for rank, theirs in enumerate(everyone):
        if theirs != everyone[0]:
            raise DistributedError(
                f"compile_for_job: rank {rank} passed other programs than rank 0 "
                f"({len(theirs)} distinct against {len(everyone[0])}); every rank must "
                "pass the same programs in the same order"
            )
