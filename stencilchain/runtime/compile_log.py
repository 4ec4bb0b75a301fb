"""The log lines of a compilation: one INFO line per translation and per build, each saying
how its cache answered (hit, miss, or off) and how long the stage took, or one for a load
index hit (which ran neither: docs/adr/0039-load-index.md); DEBUG lines with
the paths (translation cache entry, build folder, module) and the bindings and load times.

They are written by the stage hook of `Toolchain._build`, once per program a toolchain
compiles (not for a program already in the process's pool), never on the call path.
"""

from __future__ import annotations

import logging
from pathlib import Path

from stencilchain.steps.stages import CompiledArtifact
from stencilchain.steps.workflow import (
    BINDINGS,
    COMPILATION,
    INDEX,
    TRANSLATION,
    CompileWorkflow,
    StageReport,
)

log = logging.getLogger(__name__)


def format_seconds(seconds: float) -> str:
    """`1.2 ms`, `152 ms`, `2.31 s`: the time of a stage in a log line."""
    if seconds < 0.01:
        return f"{seconds * 1e3:.1f} ms"
    if seconds < 1.0:
        return f"{seconds * 1e3:.0f} ms"
    return f"{seconds:.2f} s"


def log_stage(
    report: StageReport, program: str, toolchain: str, family: str, workflow: CompileWorkflow
) -> None:
    """Log one finished stage of compiling `program` with `toolchain` (of `family`)."""
    if not log.isEnabledFor(logging.INFO):  # DEBUG is below INFO: nothing to say
        return
    who = f"{program} ({toolchain}, {family})"
    took = format_seconds(report.seconds)
    if report.stage == TRANSLATION:
        if report.cached is None:
            log.info("%s: translated in %s (translation cache off)", who, took)
            return
        if report.cached:
            log.info("%s: translation cache hit in %s", who, took)
        else:
            log.info("%s: translation cache miss, translated in %s", who, took)
        cache = workflow.translation_cache
        if cache is not None and log.isEnabledFor(logging.DEBUG):
            output = getattr(report.output, "program", None)
            key = workflow.translation_key(output) if output is not None else None
            if key is not None:
                log.debug("%s: translation cache entry %s", who, cache.path(key))
    elif report.stage == BINDINGS:
        log.debug("%s: bindings generated in %s", who, took)
    elif report.stage == INDEX:
        log.info("%s: load index hit in %s (no translation, no bindings, no build plan)", who, took)
        if isinstance(report.output, CompiledArtifact):
            log.debug("%s: build folder %s", who, report.output.build_dir)
    elif report.stage == COMPILATION:
        if report.cached:
            log.info("%s: build cache hit in %s", who, took)
        else:
            log.info("%s: build cache miss, built in %s", who, took)
        if isinstance(report.output, CompiledArtifact):
            log.debug("%s: build folder %s", who, report.output.build_dir)


def log_load(program: str, toolchain: str, family: str, module: Path, seconds: float) -> None:
    """Log (DEBUG) the import of a compiled program's module."""
    if log.isEnabledFor(logging.DEBUG):
        log.debug(
            "%s (%s, %s): loaded module %s in %s",
            program, toolchain, family, module, format_seconds(seconds),
        )  # fmt: skip
