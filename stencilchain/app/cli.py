"""The `stencilchain` command line. Everything is built through `build_container()`,
so the environment configures it exactly as it configures a library user."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn, cast

from stencilchain.app import (
    commands_cache,
    commands_demo,
    commands_program,
    commands_settings,
    commands_trace,
)
from stencilchain.app.errors import exit_status, one_line
from stencilchain.containers.log_level import show_warnings

EPILOG = """\
examples:
  stencilchain demo                          the bundled examples, compiled and checked
  stencilchain demo --all                    every available toolchain side by side
  stencilchain compile stencils.py:smooth    compile ahead of time, show the build folder
  stencilchain run stencils.py:smooth --shape 512x512 --check
  stencilchain cache explain stencils.py:smooth --backend run_gtfn_cpu
  stencilchain config                        every setting and where it came from
  stencilchain trace render trace.json t.png a trace (STENCILCHAIN_TRACE) as a timeline

Settings come from STENCILCHAIN_* environment variables (see `stencilchain config`).
"""


class _Parser(argparse.ArgumentParser):
    """Usage mistakes as one line (`--help` shows the usage), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"stencilchain: error: {message} (see {self.prog} --help)\n")


def _common(suppress: bool) -> argparse.ArgumentParser:
    """--debug and --quiet, accepted before and after the command (defaults set once, on top)."""
    common = argparse.ArgumentParser(add_help=False)
    default: object = argparse.SUPPRESS if suppress else False
    common.add_argument("--debug", action="store_true", default=default, help="show tracebacks")
    common.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=default,
        help="print only errors and --json output",
    )
    return common


def make_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="stencilchain",
        description=__doc__,
        epilog=EPILOG,
        parents=[_common(suppress=False)],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = cast(  # holds _Parsers; the commands need only ArgumentParser's interface
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", required=True, metavar="COMMAND"),
    )
    common = _common(suppress=True)
    commands_demo.add_parser(sub, common)
    commands_program.add_parsers(sub, common)
    commands_settings.add_parsers(sub, common)
    commands_cache.add_parser(sub, common)
    commands_trace.add_parser(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit status (0 ok, 1 failed, 2 a usage mistake)."""
    try:
        args = make_parser().parse_args(argv)
    except SystemExit as done:  # --help, or a usage error argparse already printed
        return done.code if isinstance(done.code, int) else 2
    os.environ.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))
    if not args.quiet:  # an application: the library's warnings reach stderr
        show_warnings()
    try:
        result: int = args.run(args)
        return result
    except KeyboardInterrupt:
        print("stencilchain: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `| head`): nothing left to say
        _silence_stdout()
        return 1
    except Exception as error:
        if args.debug:
            raise
        print(f"stencilchain: error: {one_line(error)}", file=sys.stderr)
        return exit_status(error)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises no second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a stdout without a descriptor (tests)
        pass


if __name__ == "__main__":
    sys.exit(main())
