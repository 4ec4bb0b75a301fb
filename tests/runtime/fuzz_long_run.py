"""The long cross-toolchain fuzz run: one generated program per seed, run by the embedded
executor and by the four CPU toolchains (run_gtfn_cpu, run_gtfn_cpu_no_transforms,
run_dace_cpu, run_dace_cpu_noopt), every output compared (tests/runtime/fuzz_programs.py,
`compare_outputs`). It reports the programs per construct, per toolchain and per layout,
the programs skipped with their reason, and each failure with its reproducer: the seed and
the printed program.

    OMP_NUM_THREADS=1 nice -n 10 python -m tests.runtime.fuzz_long_run \\
        --generator cartesian --seeds 0:300 --log /tmp/fuzz-cartesian.jsonl

`--generator mesh` draws unstructured-mesh programs (tests/runtime/fuzz_mesh_programs.py).
One JSON line per seed goes to `--log` (a rerun skips the seeds already there, so a run
that died continues); `--report` prints the summary of a log. The compiled programs go to
a temporary cache (never the user's), removed at the end. `--seed N --print` prints the
program of one seed, to reproduce it.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings

TOOLCHAINS = ("gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt")


def generator(name: str) -> Any:
    if name == "mesh":
        from .fuzz_mesh_programs import mesh_programs

        return mesh_programs()
    from .fuzz_programs import programs

    return programs()


def draw(name: str, number: int) -> Any:
    """The program of seed `number`: the third example hypothesis draws with that seed (the
    first ones are its simplest)."""
    drawn: list[Any] = []

    @seed(number)
    @settings(
        max_examples=3,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(generator(name))
    def collect(program: Any) -> None:
        drawn.append(program)

    collect()
    return drawn[-1]


def toolchains(cache_dir: Path, names: list[str]) -> dict[str, Any]:
    """The toolchains as tests/conftest.py builds them, on `cache_dir`."""
    import functools

    from stencilchain.containers import build_container, make_gtfn_translation, override_step

    made: dict[str, Any] = {}
    for name in names:
        if name == "gtfn_cpu":
            made[name] = build_container({}, cache_dir=cache_dir).gtfn.toolchain()
        elif name == "gtfn_cpu_no_transforms":
            container = build_container({}, cache_dir=cache_dir)
            container.gtfn.name.override("run_gtfn_cpu_no_transforms")
            override_step(
                container.gtfn.translation,
                functools.partial(make_gtfn_translation, enable_transforms=False),
            )
            made[name] = container.gtfn.toolchain()
        else:
            container = build_container({}, cache_dir=cache_dir, auto_optimize=name == "dace_cpu")
            container.dace.name.override(f"run_{name}")
            made[name] = container.dace.toolchain()
    return made


def run_one(name: str, number: int, compiled: dict[str, Any]) -> dict[str, Any]:
    """Run the program of seed `number`; the record of what happened."""
    import stencilchain as sc

    from .fuzz_programs import compare_outputs

    started = time.monotonic()
    program = draw(name, number)
    record: dict[str, Any] = {
        "seed": number,
        "generator": name,
        "layout": program.layout,
        "constructs": program.constructs(),
        "toolchains": {},
        "differences": [],
    }
    try:
        prog = program.build()
    except sc.DefinitionError as error:  # counted: the generator should make none
        record["skipped"] = f"DefinitionError: {str(error).split(': ', 1)[-1][:160]}"
        record["source"] = program.source
        return record
    data_seed = number
    inputs = program.arguments(data_seed)
    expected = program.arguments(data_seed)
    try:
        prog(*expected)
    except Exception as error:
        record["failures"] = {"embedded": f"{type(error).__name__}: {error}"}
        record["source"] = repr(program)
        return record
    failures = {}
    for toolchain, backend in compiled.items():
        t0 = time.monotonic()
        try:
            actual = program.arguments(data_seed)
            prog.with_backend(backend)(*actual)
            record["differences"] += compare_outputs(program, actual, expected, toolchain)
            for i, (param, _, _) in enumerate(program.params):  # inputs are never written
                if param not in program.outputs and not np.isscalar(inputs[i]):
                    np.testing.assert_array_equal(_array(actual[i]), _array(inputs[i]), strict=True)
            record["toolchains"][toolchain] = "pass"
        except Exception as error:
            failures[toolchain] = f"{type(error).__name__}: {str(error)[:3000]}"
            record["toolchains"][toolchain] = "fail"
            if not isinstance(error, AssertionError):
                failures[toolchain] += "\n" + traceback.format_exc()[-2000:]
        record[f"seconds_{toolchain}"] = round(time.monotonic() - t0, 2)
    if failures:
        record["failures"] = failures
        record["source"] = repr(program)
    record["seconds"] = round(time.monotonic() - started, 2)
    return record


def _array(value: Any) -> Any:
    """The array of a field value (an input with an origin), or `value` itself."""
    import stencilchain as sc

    return value.asnumpy() if isinstance(value, sc.FieldValue) else value


def report(lines: list[dict[str, Any]]) -> str:
    """The summary of a run's records."""
    out = []
    ran = [r for r in lines if "skipped" not in r]
    skipped = collections.Counter(r["skipped"] for r in lines if "skipped" in r)
    failed = [r for r in lines if r.get("failures")]
    seconds = [r["seconds"] for r in ran if "seconds" in r]
    out.append(
        f"programs: {len(lines)} drawn, {len(ran)} run, {sum(skipped.values())} "
        f"skipped, {len(failed)} with failures; {sum(seconds) / 60:.1f} min "
        f"({np.mean(seconds) if seconds else 0:.1f} s per program)"
    )
    per_toolchain: dict[str, collections.Counter[str]] = collections.defaultdict(
        collections.Counter
    )
    for r in ran:
        for toolchain, status in r["toolchains"].items():
            per_toolchain[toolchain][status] += 1
    for toolchain, counts in sorted(per_toolchain.items()):
        out.append(f"  {toolchain}: {counts['pass']} passed, {counts['fail']} failed")
    layouts = collections.Counter(r["layout"] for r in ran)
    out.append("layouts: " + ", ".join(f"{k} {v}" for k, v in sorted(layouts.items())))
    constructs = collections.Counter(c for r in ran for c in r["constructs"])
    out.append("programs per construct:")
    out += [f"  {what}: {count}" for what, count in constructs.most_common()]
    for label in sorted({t for r in ran for t, _ in r["differences"]}):
        kind = label.split()[0]
        diffs = [d for r in ran for t, d in r["differences"] if t == label]
        out.append(
            f"inexact {label} outputs compared: {len(diffs)}, {sum(d > 0 for d in diffs)} not "
            f"bit for bit, largest {max(diffs):.3g} relative "
            f"({max(diffs) / np.finfo(kind).eps:.1f} {kind} eps)"
        )
    if skipped:
        out.append("skipped (the DSL refused a generated program):")
        out += [f"  {count} x {why}" for why, count in skipped.most_common()]
    for r in failed:
        out.append(f"FAILURE seed {r['seed']} ({r['generator']}):")
        out += [f"  {t}: {m.splitlines()[0][:400]}" for t, m in r["failures"].items()]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--generator", choices=["cartesian", "mesh"], default="cartesian")
    parser.add_argument("--seeds", default="0:10", help="a range start:stop")
    parser.add_argument("--log", type=Path, help="JSON lines, one per seed (resumable)")
    parser.add_argument("--toolchains", default=",".join(TOOLCHAINS))
    parser.add_argument("--report", action="store_true", help="summarize --log and exit")
    parser.add_argument("--seed", type=int, help="with --print: the program of one seed")
    parser.add_argument("--print", action="store_true")
    args = parser.parse_args(argv)
    if args.print:
        print(repr(draw(args.generator, args.seed)))
        return 0
    done: list[dict[str, Any]] = []
    if args.log and args.log.exists():
        done = [json.loads(line) for line in args.log.read_text().splitlines() if line.strip()]
    if args.report:
        print(report(done))
        return 0
    start, stop = (int(x) for x in args.seeds.split(":"))
    seen = {(r["generator"], r["seed"]) for r in done}
    cache_dir = Path(tempfile.mkdtemp(prefix="stencilchain-fuzz-"))
    os.environ["STENCILCHAIN_CACHE_DIR"] = str(cache_dir)
    try:
        compiled = toolchains(cache_dir, args.toolchains.split(","))
        for number in range(start, stop):
            if (args.generator, number) in seen:
                continue
            record = run_one(args.generator, number, compiled)
            done.append(record)
            if args.log:
                with args.log.open("a") as log:
                    log.write(json.dumps(record) + "\n")
            status = (
                "skipped" if "skipped" in record else "FAIL" if record.get("failures") else "ok"
            )
            print(f"seed {number}: {status} {record.get('seconds', '')}s", flush=True)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    print(report(done))
    return 0


if __name__ == "__main__":
    sys.exit(main())
