"""`stencilchain demo`: the bundled examples compiled, checked and timed, per toolchain."""

from __future__ import annotations

import argparse
import sys

from stencilchain.app.demo import (
    HEADER,
    DemoRow,
    Unsupported,
    format_row,
    format_streamed_row,
    format_table,
    row_widths,
    run_demo,
    select_examples,
)
from stencilchain.app.errors import FAILURE, CLIError
from stencilchain.app.output import note, print_json
from stencilchain.app.progress import Progress, isatty
from stencilchain.app.toolchains import (
    DEFAULT_BACKEND,
    backend_names,
    load_backend,
    run_problem,
    toolchain_of,
)
from stencilchain.runtime.toolchain import Toolchain


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    demo = sub.add_parser(
        "demo",
        parents=[common],
        help="compile the bundled examples, check them against NumPy, time them",
        description="Compile the bundled examples with a toolchain (the default one, or every "
        "available one with --all), check each result against the embedded NumPy executor and "
        "print compile, cached-load and run times. An example a toolchain does not support "
        "(UnsupportedError) is reported, not a failure. Exit status 1 if a result differs.",
    )
    which = demo.add_mutually_exclusive_group()
    which.add_argument("--backend", help=f"a pre-built toolchain (default: {DEFAULT_BACKEND})")
    which.add_argument(
        "--all", action="store_true", help="every available pre-built toolchain, side by side"
    )
    demo.add_argument(
        "--program",
        action="append",
        default=[],
        metavar="NAME",
        help="only this example (repeatable)",
    )
    demo.add_argument("--repeat", type=int, default=5, help="timed runs per program (median)")
    demo.add_argument("--tolerance", type=float, default=1e-9, help="largest accepted difference")
    demo.add_argument("--json", action="store_true", help="print the results as JSON")
    demo.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    examples = select_examples(args.program)
    toolchains, skipped = _toolchains(args)
    for name, reason in skipped:
        note(f"skipped {name}: {reason}", quiet=args.quiet)
    rows: list[DemoRow] = []
    unsupported: list[Unsupported] = []
    for_person = not args.quiet and not args.json
    # on a terminal, each row prints as it completes (in the order they complete)
    streamed = for_person and isatty(sys.stdout)
    widths = row_widths([m.PROGRAM.name for m in examples], [t.name for t in toolchains])
    with Progress(len(examples) * len(toolchains), enabled=for_person) as progress:
        if streamed:
            progress.echo(format_row(HEADER, widths))

        def done(item: DemoRow | Unsupported) -> None:
            progress.step(f"done {item.program} with {item.backend}")
            if streamed and isinstance(item, DemoRow):
                progress.echo(format_streamed_row(item, widths))

        for toolchain in toolchains:
            result = run_demo(
                toolchain,
                repeat=args.repeat,
                examples=examples,
                on_step=progress.status,
                on_done=done,
            )
            rows += result.rows
            unsupported += result.unsupported
    if args.all:
        order = {m.PROGRAM.name: k for k, m in enumerate(examples)}
        rows.sort(key=lambda r: order[r.program])  # stable: toolchains keep their order
    differ = [f"{r.program} ({r.backend})" for r in rows if not r.max_difference <= args.tolerance]
    if args.json:
        print_json(
            {
                "rows": [r.as_dict() for r in rows],
                "skipped": [{"backend": n, "reason": r} for n, r in skipped],
                "unsupported": [u.as_dict() for u in unsupported],
                "differ": differ,
            }
        )
    elif not args.quiet and not streamed:
        print(format_table(rows))
    for u in unsupported:  # not a failure: the toolchain says plainly what it cannot compile
        note(f"{u.program} is not supported by {u.backend}: {u.reason}", quiet=args.quiet)
    if differ:
        print(
            f"error: results differ from the embedded executor: {', '.join(differ)}",
            file=sys.stderr,
        )
        return FAILURE
    return 0


def _toolchains(args: argparse.Namespace) -> tuple[list[Toolchain], list[tuple[str, str]]]:
    """The toolchains to run, and (name, reason) of those skipped."""
    if not args.all:
        backend = load_backend(args.backend or DEFAULT_BACKEND)  # None: --all can tell it apart
        toolchain = toolchain_of(backend)
        problem = run_problem(backend)
        if problem:
            raise CLIError(f"{backend.name} cannot run here: {problem}", FAILURE)
        return [toolchain], []
    toolchains, skipped = [], []
    for name in backend_names():
        backend = load_backend(name)
        problem = run_problem(backend)
        if backend.toolchain is None and not problem:
            continue  # the embedded executor is the reference every row is checked against
        if problem:
            skipped.append((name, problem))
        elif backend.toolchain is not None:
            toolchains.append(backend.toolchain)
    if not toolchains:
        raise CLIError("no pre-built toolchain is available here", FAILURE)
    return toolchains, skipped
