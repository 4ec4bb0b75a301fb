"""What a call costs with plain arrays and with field values (`sc.as_field`), GTFN on the
CPU, side by side with an empty C extension call of the same arguments.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/field_values.py [--json]

Times (median per call, tiny 2-point arrays, so that the call path is what is measured):
a program of 2 fields and one of 25 fields + 2 scalars, called with plain NumPy arrays (the
native BoundEntry path) and with every field an `sc.FieldValue` (rejected by the native
check, unwrapped in Python, run again); and the 2-field program over its own ranges (`a`
one point longer than `out`, ICON's half levels: rejected by the native check, its range
key looked up, the specialisation's entry run; docs/adr/0032), once remembered by shapes and over
5 pairs of shapes in turn (each call rejected by the plain program's check and explained:
the rejection path, docs/adr/0037), and the raw entry point rejecting that call (raising
its ArgumentMismatch). Run it on a tree without field values too (the
plain-array lines; the field-value lines print n/a there) to compare the plain call path
before and after. Prints the load average: the figures of a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as `python benchmarks/field_values.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import stencilchain as sc
from benchmarks._common import per_call_seconds
from benchmarks.empty_call import build_empty_call

I = sc.Dimension("I")
F = sc.Field[[I], sc.float64]


@sc.field_operator
def copy(a: F) -> F:
    return a


@sc.program
def two_fields(a: F, out: F) -> None:
    copy(a, out=out)


NAMES = [f"f{k}" for k in range(24)]
SOURCE = f"""
@sc.field_operator
def total({", ".join(f"{n}: F" for n in NAMES)}, alpha: sc.float64, beta: sc.float64) -> F:
    return {" + ".join(NAMES)} * alpha + beta


@sc.program
def many_fields({", ".join(f"{n}: F" for n in NAMES)}, out: F, alpha: sc.float64, beta: sc.float64) -> None:
    total({", ".join(NAMES)}, alpha, beta, out=out)
"""
namespace: dict[str, Any] = {"sc": sc, "F": F}
exec(compile(SOURCE, "<many_fields>", "exec"), namespace)  # a 25-field signature
many_fields = namespace["many_fields"]


def _times(
    name: str, run: Any, plain: list[Any], empty: Any, calls: int
) -> dict[str, float | None]:
    """Per-call seconds of `run` with plain arrays, of the empty C call, and of `run` with
    field values (None where the tree has no sc.as_field)."""
    run(*plain)  # compile
    found: dict[str, float | None] = {
        f"{name}, plain arrays": per_call_seconds(lambda: run(*plain), calls),
        f"{name}, empty C call": per_call_seconds(lambda: empty(*plain), calls),
    }
    as_field = getattr(sc, "as_field", None)
    if as_field is None:
        found[f"{name}, field values"] = None
        return found
    wrapped = [as_field((I,), v) if isinstance(v, np.ndarray) else v for v in plain]
    run(*wrapped)
    found[f"{name}, field values"] = per_call_seconds(lambda: run(*wrapped), calls // 10)
    return found


def _own_ranges(run: Any, calls: int) -> dict[str, float | None]:
    """Per-call seconds of the 2-field program with `a` one point longer than `out`, of the
    same over 5 pairs of shapes in turn (one more than the BoundEntry remembers: every call
    is rejected by the plain program's check and run by the explain hook), and of the raw
    entry point rejecting such a call (None where the tree runs no own ranges)."""
    longer, out = np.ones(3), np.zeros(2)
    try:
        run(longer, out)
    except sc.ArgumentError:  # a tree without own ranges
        return {key: None for key in _OWN_RANGES}
    pairs = [(np.ones(n + 1), np.zeros(n)) for n in range(2, 7)]
    for pair in pairs:
        run(*pair)
    turn = itertools.cycle(pairs)
    entry = run.compile().entry
    mismatch = entry.__self__.ArgumentMismatch

    def rejected() -> None:
        with contextlib.suppress(mismatch):
            entry(longer, out)

    rejected()
    timed = (
        lambda: run(longer, out),
        lambda: run(*next(turn)),
        rejected,
    )
    return {key: per_call_seconds(fn, calls // 10) for key, fn in zip(_OWN_RANGES, timed)}


_OWN_RANGES = (
    "2 fields, own ranges (a longer)",
    "2 fields, own ranges, 5 shapes in turn",
    "2 fields, rejected by the raw entry",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from stencilchain.containers import build_container

    results: dict[str, float | None] = {}
    with tempfile.TemporaryDirectory() as folder:
        toolchain = build_container({}, cache_dir=Path(folder)).gtfn.toolchain()
        empty = build_empty_call(Path(folder) / "empty")
        small = np.ones(2), np.zeros(2)
        plain25 = [np.ones(2) for _ in range(24)] + [np.zeros(2), 0.5, 1.0]
        for name, program, plain in (
            ("2 fields", two_fields, list(small)),
            ("25 fields + 2 scalars", many_fields, plain25),
        ):
            results.update(_times(name, program.with_backend(toolchain), plain, empty, args.calls))
        results.update(_own_ranges(two_fields.with_backend(toolchain), args.calls))
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"seconds": results, "load": load}))
        return
    for key, seconds in results.items():
        shown = "n/a" if seconds is None else f"{1e6 * seconds:.3f} us"
        print(f"{key + ':':40s} {shown}")
    print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
