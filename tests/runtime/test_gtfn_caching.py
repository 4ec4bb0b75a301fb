"""The GTFN caches under concurrency and in fresh processes: two (and eight) processes
compiling the same new program into one cache at once build it once (on DaCe too); eight processes
compiling eight new programs into one cache at once all succeed; a fresh process loads it from
the persistent cache without translating or building; `cached_translation=False`
bypasses the translation cache; a build folder whose completion marker (or module) is
gone is rebuilt.

Builds are counted with a BuildCache that logs every build it actually runs (keys of
one program start with its entry point), installed by overriding the compilation
provider; a translation that must not run is a step that raises, installed by
overriding the translation provider.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.containers import build_container, make_gtfn_compiler, override_step
from stencilchain.steps.caches.build_cache import (
    MARKER_NAME,
    BuildCache,
    BuildFunction,
    BuildResult,
)

I = sc.Dimension("I")
J = sc.Dimension("J")
F64 = sc.Field[[I, J], sc.float64]


# --- instruments shared with the worker processes -------------------------------------------


@dataclasses.dataclass(frozen=True)
class CountingBuildCache(BuildCache):
    """A BuildCache that appends `<pid> <key>` to `log` each time it runs a build."""

    log: Path = Path(os.devnull)

    def get_or_build(self, key: str, build: BuildFunction) -> BuildResult:
        def counted(folder: Path) -> Mapping[str, str]:
            with open(self.log, "a") as file:  # one short line per write: appends do not mix
                file.write(f"{os.getpid()} {key}\n")
            return build(folder)

        return super().get_or_build(key, counted)


def counting_compiler(log: Path, family: str = "gtfn") -> Callable[[Any], Any]:
    """A compilation builder: the family's default compiler on a CountingBuildCache."""

    def build(cfg: Any) -> Any:
        if family == "dace":
            from stencilchain.containers import make_dace_compiler

            compiler = make_dace_compiler(cfg)
        else:
            compiler = make_gtfn_compiler(cfg)
        return dataclasses.replace(compiler, cache=CountingBuildCache(compiler.cache.root, log))

    return build


@dataclasses.dataclass(frozen=True, eq=False)
class WatchedTranslation:
    """Delegates to `step`, counting calls, or raises if `forbidden`.

    Its repr is the wrapped step's, because the translation cache keys entries by the
    step's settings (its repr): this wrapper hits the entries the real step wrote.
    """

    step: Any
    forbidden: bool = False
    calls: list[str] = dataclasses.field(default_factory=list)

    def __call__(self, program: Any) -> Any:
        if self.forbidden:
            raise AssertionError(f"the translation of {program.name} ran")
        self.calls.append(program.name)
        return self.step(program)

    def __repr__(self) -> str:
        return repr(self.step)


def build_log(log: Path, entry_point: str) -> list[str]:
    """The builds of `entry_point`'s module recorded in `log`, one `<pid> <key>` each."""
    if not log.exists():
        return []
    return [
        line
        for line in log.read_text().splitlines()
        if line.split()[1].startswith(f"{entry_point}_")
    ]


# --- the worker process ------------------------------------------------------------------------

WORKER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path

    import numpy as np

    import stencilchain as sc
    from stencilchain.containers import build_container, make_gtfn_translation, override_step

    sys.path.insert(0, sys.argv[1])
    from test_gtfn_caching import WatchedTranslation, counting_compiler, make_program

    tests_dir, cache_dir, tag, mode, log, go, result, family = sys.argv[1:9]
    if mode == "distinct":  # a program of its own, tagged by its result file's name
        tag = Path(result).name.split("-")[1][:12]
    program = make_program(tag)

    container = build_container({}, cache_dir=Path(cache_dir))
    family_container = getattr(container, family)
    override_step(family_container.compilation, counting_compiler(Path(log), family))
    if mode == "cached":  # nothing may be translated (or built, checked by the caller)
        override_step(
            container.gtfn.translation,
            lambda cfg: WatchedTranslation(make_gtfn_translation(cfg), forbidden=True),
        )
    toolchain = family_container.toolchain()
    f = np.random.default_rng(0).random((20, 17))
    out = np.zeros_like(f)

    Path(result + ".ready").touch()
    while not Path(go).exists():  # start together with the other workers
        time.sleep(0.002)
    start = time.time()
    compiled = toolchain.compile(program)
    end = time.time()
    compiled(f, out, 0.25)
    np.save(result + ".npy", out)
    Path(result).write_text(json.dumps({
        "start": start,
        "end": end,
        "module_path": str(compiled.artifact.module_path),
        "metadata": compiled.artifact.metadata_json,
        "tag": tag,
    }))
    """
)


def make_program(tag: str) -> sc.Program:
    """A program no cache has seen: `tag` (a fresh number) is one of its literals."""
    scale = float(int(tag, 16) % 1000003) / 1000003.0 + 1.0

    @sc.field_operator
    def smooth_new(f: F64, alpha: sc.float64) -> F64:
        return f + alpha * (f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1) - 4.0 * f) * scale

    @sc.program
    def cached_program(f: F64, out: F64, alpha: sc.float64):
        smooth_new(f, alpha, out=out)

    return cached_program


def expected_output(tag: str) -> np.ndarray:
    scale = float(int(tag, 16) % 1000003) / 1000003.0 + 1.0
    f = np.random.default_rng(0).random((20, 17))
    out = np.zeros_like(f)
    c = f[1:-1, 1:-1]
    lap = f[2:, 1:-1] + f[:-2, 1:-1] + f[1:-1, 2:] + f[1:-1, :-2] - 4.0 * c
    out[1:-1, 1:-1] = c + 0.25 * lap * scale
    return out


@dataclasses.dataclass
class Workers:
    """Runs worker processes on one cache and collects what they report."""

    folder: Path
    cache_dir: Path
    tag: str
    family: str = "gtfn"

    @property
    def log(self) -> Path:
        return self.folder / "builds.log"

    def run(self, count: int, mode: str = "build") -> list[dict[str, Any]]:
        go = self.folder / f"go-{uuid.uuid4().hex}"
        results = [self.folder / f"result-{uuid.uuid4().hex}.json" for _ in range(count)]
        env = {**os.environ, "OMP_NUM_THREADS": "2", "STENCILCHAIN_CACHE_DIR": str(self.cache_dir)}
        tests_dir = str(Path(__file__).parent)
        processes = [
            subprocess.Popen(
                [sys.executable, str(self.folder / "worker.py"), tests_dir, str(self.cache_dir),
                 self.tag, mode, str(self.log), str(go), str(result), self.family],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for result in results
        ]  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while not all(Path(f"{r}.ready").exists() for r in results):
                failed = [p for p in processes if p.poll() not in (None, 0)]
                assert not failed, failed[0].communicate()[0]
                assert time.monotonic() < deadline, "workers did not start"
                time.sleep(0.01)
            go.touch()
            outputs = [p.communicate(timeout=300)[0] for p in processes]
        finally:
            for p in processes:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        for p, output in zip(processes, outputs):
            assert p.returncode == 0, output
        reports = []
        for result in results:
            report = json.loads(result.read_text())
            report["out"] = np.load(f"{result}.npy")
            reports.append(report)
        return reports


@pytest.fixture()
def workers(private_cache_dir: Path, tmp_path: Path) -> Workers:
    (tmp_path / "worker.py").write_text(WORKER)
    return Workers(tmp_path, private_cache_dir, uuid.uuid4().hex[:12])


# --- tests -------------------------------------------------------------------------------------


def test_concurrent_processes_build_once_and_a_fresh_process_only_loads(workers: Workers) -> None:
    first, second = workers.run(2)
    # they really compiled at the same time
    assert first["start"] < second["end"] and second["start"] < first["end"]
    builds = build_log(workers.log, "cached_program")
    assert len(builds) == 1, builds
    assert first["module_path"] == second["module_path"]
    assert first["metadata"] == second["metadata"]  # the marker of the one build
    expected = expected_output(workers.tag)
    for report in (first, second):
        np.testing.assert_allclose(report["out"], expected, rtol=1e-13)

    # a fresh process: the translation raises if it runs, and no build may happen
    (third,) = workers.run(1, mode="cached")
    assert build_log(workers.log, "cached_program") == builds
    assert third["module_path"] == first["module_path"]
    assert third["metadata"] == first["metadata"]
    np.testing.assert_allclose(third["out"], expected, rtol=1e-13)


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_a_stampede_of_eight_processes_builds_a_new_program_once(
    workers: Workers, family: str
) -> None:
    """Eight processes compile the same new program into one empty cache at once: one
    build runs, the others wait for it and load its module, and every result is right."""
    if family == "dace":
        pytest.importorskip("dace", reason="the DaCe toolchains need the `dace` extra")
    workers.family = family
    reports = workers.run(8)
    builds = build_log(workers.log, "cached_program")
    assert len(builds) == 1, builds
    assert len({r["module_path"] for r in reports}) == 1
    expected = expected_output(workers.tag)
    for report in reports:
        np.testing.assert_allclose(report["out"], expected, rtol=1e-13)


@pytest.mark.slow
def test_eight_processes_build_eight_new_programs_into_one_cache(workers: Workers) -> None:
    reports = workers.run(8, mode="distinct")
    assert len({r["tag"] for r in reports}) == 8
    assert len(build_log(workers.log, "cached_program")) == 8
    assert len({r["module_path"] for r in reports}) == 8
    for report in reports:
        np.testing.assert_allclose(report["out"], expected_output(report["tag"]), rtol=1e-13)


def _toolchain(
    cache_dir: Path, log: Path, translation: WatchedTranslation | None = None, **settings: Any
) -> Any:
    from stencilchain.containers import make_gtfn_translation

    container = build_container({}, cache_dir=cache_dir, **settings)
    # a name of its own: a pool of compiled programs of its own, so that it compiles
    container.gtfn.name.override(f"run_gtfn_cpu_{uuid.uuid4().hex}")
    override_step(container.gtfn.compilation, counting_compiler(log))
    if translation is not None:
        override_step(
            container.gtfn.translation,
            lambda cfg: dataclasses.replace(translation, step=make_gtfn_translation(cfg)),
        )
    return container.gtfn.toolchain()


def _entries(cache_dir: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in (cache_dir / "translations").rglob("*") if p.is_file()}


def _run(toolchain: Any, program: sc.Program, tag: str) -> None:
    f = np.random.default_rng(0).random((20, 17))
    out = np.zeros_like(f)
    toolchain.compile(program)(f, out, 0.25)
    np.testing.assert_allclose(out, expected_output(tag), rtol=1e-13)


def test_translation_cache_hit_bypass_and_corrupt_entry(
    private_cache_dir: Path, tmp_path: Path, subtests: Any
) -> None:
    tag = uuid.uuid4().hex[:12]
    program = make_program(tag)
    log = tmp_path / "builds.log"
    first = WatchedTranslation(None)
    _run(_toolchain(private_cache_dir, log, first), program, tag)
    assert first.calls == ["cached_program"]
    entries = _entries(private_cache_dir)
    assert len(entries) == 1
    assert len(build_log(log, "cached_program")) == 1

    with subtests.test("a new toolchain hits the translation cache"):
        watched = WatchedTranslation(None, forbidden=True)
        _run(_toolchain(private_cache_dir, log, watched), program, tag)

    with subtests.test("cached_translation=False translates again and leaves the cache alone"):
        watched = WatchedTranslation(None)
        toolchain = _toolchain(private_cache_dir, log, watched, cached_translation=False)
        _run(toolchain, program, tag)
        assert watched.calls == ["cached_program"]
        assert _entries(private_cache_dir) == entries

    with subtests.test("a corrupt entry is a miss, and is rewritten"):
        (entry,) = entries
        entry.write_bytes(entries[entry][: len(entries[entry]) // 2])
        # a load index hit reads no translation entry (ADR 0039): without it, one is read
        shutil.rmtree(private_cache_dir / "index")
        watched = WatchedTranslation(None)
        _run(_toolchain(private_cache_dir, log, watched), program, tag)
        assert watched.calls == ["cached_program"]
        assert _entries(private_cache_dir) == entries

    # every toolchain above found the one build
    assert len(build_log(log, "cached_program")) == 1


def _marker_deleted(build_dir: Path) -> None:
    (build_dir / MARKER_NAME).unlink()


def _module_deleted(build_dir: Path) -> None:
    marker = json.loads((build_dir / MARKER_NAME).read_text())
    (build_dir / marker["metadata"]["module"]).unlink()


def _only_a_log_left(build_dir: Path) -> None:
    """A build killed while configuring: the folder holds its log and sources only."""
    for path in sorted(build_dir.rglob("*"), reverse=True):
        if path.name in ("build.log", "src") or path.parent.name == "src":
            continue
        path.unlink() if path.is_file() else path.rmdir()


INTERRUPTIONS = {
    "marker_deleted": _marker_deleted,
    "module_deleted": _module_deleted,
    "only_a_log_left": _only_a_log_left,
}


def test_an_interrupted_build_is_rebuilt(
    private_cache_dir: Path, tmp_path: Path, subtests: Any
) -> None:
    tag = uuid.uuid4().hex[:12]
    program = make_program(tag)
    log = tmp_path / "builds.log"
    compiled = _toolchain(private_cache_dir, log).compile(program)
    build_dir = compiled.artifact.build_dir
    assert (build_dir / MARKER_NAME).is_file()
    count = 1
    for name, interrupt in INTERRUPTIONS.items():
        with subtests.test(name):
            interrupt(build_dir)
            assert not (build_dir / MARKER_NAME).is_file() or name == "module_deleted"
            _run(_toolchain(private_cache_dir, log), program, tag)
            count += 1
            assert len(build_log(log, "cached_program")) == count
            assert (build_dir / MARKER_NAME).is_file()
            assert compiled.artifact.module_path.is_file()
