"""`stencilchain compile` and `stencilchain run`: the user's own programs."""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from stencilchain.app.errors import FAILURE, CLIError, one_line
from stencilchain.app.inputs import (
    bound_with_workspace,
    compare,
    copy_arguments,
    format_shape,
    parse_shape,
    random_arguments,
    synchronize,
    to_device,
    to_host,
)
from stencilchain.app.loading import load_program, load_programs
from stencilchain.app.output import print_json
from stencilchain.app.progress import Progress
from stencilchain.app.source_view import describe_source
from stencilchain.app.toolchains import (
    DEFAULT_BACKEND,
    Backend,
    load_backend,
    run_problem,
    toolchain_of,
)
from stencilchain.app.units import format_seconds
from stencilchain.errors import BuildsFailedError
from stencilchain.program.device import Device
from stencilchain.program.dimensions import Dimension
from stencilchain.program.embedded import run_embedded
from stencilchain.program.program import Program
from stencilchain.runtime.compile_many import BUILT, CACHE, FAILED, POOL, CompileReport
from stencilchain.runtime.toolchain import Toolchain
from stencilchain.steps.stages import ProgramSource
from stencilchain.steps.workflow import COMPILATION, TRANSLATION, StageReport


def add_parsers(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    comp = sub.add_parser(
        "compile",
        parents=[common],
        help="compile programs ahead of time (warms the caches)",
        description="Import FILE.py, find PROGRAM, compile it with a toolchain (or load it from "
        "the caches) and print where its build folder and module are. Several targets, or a "
        "file or module alone (meaning every program in it), compile side by side "
        "(STENCILCHAIN_BUILD_JOBS at once) and print one line per program; the exit status "
        "is 1 if any failed.",
    )
    comp.add_argument(
        "targets",
        nargs="+",
        metavar="TARGET",
        help="FILE.py:PROGRAM or module:PROGRAM; FILE.py or module alone: every program in it",
    )
    comp.add_argument(
        "--backend", default=DEFAULT_BACKEND, help="a pre-built toolchain (default: %(default)s)"
    )
    comp.add_argument(
        "-j",
        "--jobs",
        type=_positive,
        help="programs compiled at once (default: the build_jobs setting)",
    )
    comp.add_argument(
        "--show-source", action="store_true", help="print the generated code (one program)"
    )
    comp.add_argument(
        "--shape", help="also run it once on random inputs of this shape, e.g. 64x64 (one program)"
    )
    comp.add_argument("--json", action="store_true", help="print the result as JSON")
    comp.set_defaults(run=run_compile)

    run = sub.add_parser(
        "run",
        parents=[common],
        help="run a program on random inputs and time it",
        description="Run PROGRAM of FILE.py on random inputs of its declared dtypes (floats in "
        "[0, 1), ints 1 to 9, random bools) and print the median time; --check compares the "
        "result with the embedded NumPy executor (exit status 1 if it differs).",
    )
    run.add_argument("target", metavar="FILE.py:PROGRAM", help="a file and a program in it")
    run.add_argument(
        "--backend", default=DEFAULT_BACKEND, help="a pre-built backend (default: %(default)s)"
    )
    run.add_argument("--shape", help="one size per dimension, e.g. 512x512 (default: 64 each)")
    run.add_argument("--check", action="store_true", help="compare with the embedded executor")
    run.add_argument(
        "--repeat", type=_positive, default=10, help="timed runs (default: %(default)s)"
    )
    run.add_argument("--seed", type=int, default=0, help="of the random inputs")
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    run.set_defaults(run=run_run)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def run_compile(args: argparse.Namespace) -> int:
    programs = list({id(p): p for p in load_programs(args.targets)}.values())
    backend = load_backend(args.backend)
    toolchain = toolchain_of(backend)
    if len(programs) > 1:
        one_only = [
            o for o, on in (("--show-source", args.show_source), ("--shape", args.shape)) if on
        ]
        if one_only:
            raise CLIError(
                f"{' and '.join(one_only)} take exactly one program; the targets name "
                f"{len(programs)} ({', '.join(p.name for p in programs)})"
            )
        return _compile_many(args, programs, toolchain)
    program = programs[0]
    sizes = parse_shape(args.shape, program.ir) if args.shape is not None else None
    reports: dict[str, StageReport] = {}

    translating = f"translating {program.name} with {toolchain.name}"
    with Progress(label=translating, enabled=_shows_progress(args)) as progress:
        show_stage = progress.stage(program.name, toolchain.name)

        def record(report: StageReport) -> None:
            reports.setdefault(report.stage, report)
            show_stage(report)

        start = time.perf_counter()
        compiled = toolchain.compile(program, hook=record)
        seconds = time.perf_counter() - start
    artifact = compiled.artifact
    if TRANSLATION not in reports:  # it was in this process's pool: the stages ran before
        toolchain.workflow.translate(program.ir, hook=record)
    translation = reports[TRANSLATION]
    result: dict[str, Any] = {
        "program": program.name,
        "fingerprint": program.ir.fingerprint(),
        "backend": toolchain.name,
        "seconds": seconds,
        "translation_cache": _cache_state(translation.cached),
        "build_cache": _cache_state(
            reports[COMPILATION].cached if COMPILATION in reports else True
        ),
        "build_dir": str(artifact.build_dir),
        "module": str(artifact.module_path),
        "module_name": artifact.module_name,
        "entry_point": artifact.entry_point,
    }
    if args.show_source:
        assert isinstance(translation.output, ProgramSource)
        result["language"] = translation.output.language
        result["source"] = describe_source(translation.output)
    if sizes is not None:
        problem = run_problem(backend)
        if problem:
            raise CLIError(f"compiled, but {toolchain.name} cannot run here: {problem}", FAILURE)
        args_on_device = to_device(
            random_arguments(program.ir, sizes, np.random.default_rng(0)), toolchain.device
        )
        running = f"running {program.name} on {format_shape(sizes)}"
        with Progress(label=running, enabled=_shows_progress(args)):
            start = time.perf_counter()
            compiled(*args_on_device)
            synchronize(toolchain.device)
        result["shape"] = format_shape(sizes)
        result["first_run_seconds"] = time.perf_counter() - start
    if args.json:
        print_json(result)
    elif not args.quiet:
        if args.show_source:
            print(result["source"].rstrip("\n"))
            print()
        print(
            f"compiled {program.name} with {toolchain.name} in {format_seconds(seconds)} "
            f"(translation cache: {result['translation_cache']}, build cache: {result['build_cache']})"
        )
        print(f"build folder: {artifact.build_dir}")
        print(f"module:       {artifact.module_path}")
        if sizes is not None:
            print(f"ran once on {result['shape']} in {format_seconds(result['first_run_seconds'])}")
    return 0


def _compile_many(args: argparse.Namespace, programs: list[Program], toolchain: Toolchain) -> int:
    """Compile `programs` side by side; one line (or JSON object) per program."""
    reports: dict[str, CompileReport] = {}
    failures: dict[str, BaseException] = {}
    start = time.perf_counter()
    with Progress(
        len(programs),
        label=f"compiling {len(programs)} programs with {toolchain.name}",
        enabled=_shows_progress(args),
    ) as progress:

        def finished(report: CompileReport) -> None:
            reports[report.fingerprint] = report
            progress.step(f"{'failed' if report.error else 'compiled'} {report.name}")

        try:
            toolchain.compile_many(programs, jobs=args.jobs, progress=finished)
        except BuildsFailedError as error:
            failures = error.failures
    seconds = time.perf_counter() - start
    rows = []
    for program in programs:
        report = reports[program.ir.fingerprint()]
        row: dict[str, Any] = {
            "program": program.name,
            "fingerprint": report.fingerprint,
            "outcome": report.outcome,
            "seconds": report.seconds,
        }
        if report.error is None:
            artifact = toolchain.pool[report.fingerprint].artifact
            row["build_dir"] = str(artifact.build_dir)
            row["module"] = str(artifact.module_path)
        else:
            row["error"] = one_line(report.error)
        rows.append(row)
    counts = {o: sum(r["outcome"] == o for r in rows) for o in (BUILT, CACHE, POOL, FAILED)}
    if args.json:
        print_json(
            {
                "backend": toolchain.name,
                "seconds": seconds,
                "jobs": args.jobs or toolchain.config.build_jobs,
                "programs": rows,
            }
        )
    elif not args.quiet:
        print(
            f"compiled {len(rows) - counts[FAILED]} of {len(rows)} programs with "
            f"{toolchain.name} in {format_seconds(seconds)} ({counts[BUILT]} built, "
            f"{counts[CACHE] + counts[POOL]} cached, {counts[FAILED]} failed)"
        )
        width = max(len(r["program"]) for r in rows)
        for r in rows:
            state = {BUILT: "built", FAILED: "FAILED"}.get(r["outcome"], "cached")
            tail = r["error"] if "error" in r else r["build_dir"]
            print(
                f"{r['program'].ljust(width)}  {state:<6}  {format_seconds(r['seconds']):>8}  {tail}"
            )
    if failures:
        raise CLIError(
            f"{len(failures)} of {len(rows)} programs failed to compile: {', '.join(failures)}",
            FAILURE,
        )
    return 0


def _shows_progress(args: argparse.Namespace) -> bool:
    """Whether a command shows progress (on a terminal): not with --quiet or --json."""
    return not args.quiet and not getattr(args, "json", False)


def _cache_state(cached: bool | None) -> str:
    """How a stage's cache answered: "hit", "miss", or "off" (the stage has no cache)."""
    return "off" if cached is None else "hit" if cached else "miss"


def run_run(args: argparse.Namespace) -> int:
    program = load_program(args.target)
    backend = load_backend(args.backend)
    problem = run_problem(backend)
    if problem:
        raise CLIError(f"backend {backend.name} cannot run here: {problem}", FAILURE)
    sizes = parse_shape(args.shape, program.ir)
    inputs = random_arguments(program.ir, sizes, np.random.default_rng(args.seed))
    toolchain = backend.toolchain
    device = Device.CPU if toolchain is None else toolchain.device
    with Progress(enabled=_shows_progress(args)) as progress:
        result = _measure(args, program, backend, sizes, inputs, device, progress)
    if args.json:
        print_json(result)
    elif not args.quiet:
        print(_run_table(result))
    if not result.get("check", {}).get("ok", True):
        raise CLIError(
            f"{program.name} with {backend.name} differs from the embedded executor in "
            f"{', '.join(result['check']['differ'])}",
            FAILURE,
        )
    return 0


def _measure(
    args: argparse.Namespace,
    program: Program,
    backend: Backend,
    sizes: dict[Dimension, int],
    inputs: list[Any],
    device: Device,
    progress: Progress,
) -> dict[str, Any]:
    """`stencilchain run`'s measurements: compile, check (with --check), time."""
    toolchain = backend.toolchain
    compile_s = 0.0
    if toolchain is not None:
        progress.status(f"translating {program.name} with {toolchain.name}")
        start = time.perf_counter()
        toolchain.compile(program, hook=progress.stage(program.name, toolchain.name))
        compile_s = time.perf_counter() - start
        call: Any = bound_with_workspace(program, toolchain, to_device(list(inputs), device))
    else:
        call = program.with_backend(backend.value)
    result: dict[str, Any] = {
        "program": program.name,
        "backend": backend.name,
        "shape": {d.name: s for d, s in sizes.items()},
        "compile_seconds": compile_s,
    }
    if args.check:
        progress.status(f"checking {program.name} against the embedded executor")
        actual = to_device(copy_arguments(inputs), device)
        call(*actual)
        synchronize(device)
        expected = copy_arguments(inputs)
        start = time.perf_counter()
        run_embedded.executor(program)(*expected)
        result["numpy_seconds"] = time.perf_counter() - start
        comparison = compare(program.ir, to_host(actual), expected)
        result["check"] = {
            "ok": comparison.ok,
            "max_difference": comparison.max_difference,
            "differ": list(comparison.mismatched),
        }
    progress.status(f"timing {args.repeat} runs of {program.name} with {backend.name}")
    timed = to_device(copy_arguments(inputs), device)
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        call(*timed)
        synchronize(device)
        times.append(time.perf_counter() - start)
    result["repeat"] = args.repeat
    result["median_seconds"] = float(np.median(times))
    result["min_seconds"] = float(np.min(times))
    return result


def _run_table(result: dict[str, Any]) -> str:
    rows = [
        ("program", result["program"]),
        ("backend", result["backend"]),
        ("shape", "x".join(str(s) for s in result["shape"].values())),
        ("compile", format_seconds(result["compile_seconds"])),
        (f"run (median of {result['repeat']})", format_seconds(result["median_seconds"])),
    ]
    if "check" in result:
        numpy_s, run_s = result["numpy_seconds"], result["median_seconds"]
        rows.append(("numpy (one run)", format_seconds(numpy_s)))
        if run_s > 0:
            rows.append(("speed-up", f"{numpy_s / run_s:.1f}x"))
        diffs = result["check"]["max_difference"]
        worst = max(diffs.values(), default=0.0)
        rows.append(
            (
                "check",
                ("ok" if result["check"]["ok"] else "DIFFERS") + f" (max difference {worst:.1e})",
            )
        )
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)
