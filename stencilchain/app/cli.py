"""The `stencilchain` command line. Everything is built through `build_container()`,
so the environment configures it exactly as it configures a library user."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence


def _demo(args: argparse.Namespace) -> int:
    from stencilchain import backends
    from stencilchain.app.demo import format_table, run_demo

    toolchain = getattr(backends, args.backend)
    rows = run_demo(toolchain, repeat=args.repeat)
    if args.json:
        print(json.dumps([r.as_dict() for r in rows], indent=2))
    else:
        print(format_table(rows))
    bad = [r.program for r in rows if not r.max_difference <= args.tolerance]
    if bad:
        print(
            f"error: results differ from the embedded executor: {', '.join(bad)}", file=sys.stderr
        )
        return 1
    return 0


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="stencilchain", description=__doc__)
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compile the bundled examples and check them")
    demo.add_argument("--backend", default="run_gtfn_cpu", help="a pre-built toolchain")
    demo.add_argument("--repeat", type=int, default=5)
    demo.add_argument("--tolerance", type=float, default=1e-9)
    demo.add_argument("--json", action="store_true")
    demo.set_defaults(run=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))
    try:
        result: int = args.run(args)
        return result
    except Exception as err:
        if args.debug:
            raise
        print(f"error: {type(err).__name__}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
