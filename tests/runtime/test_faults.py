"""The fault suite (issue 13): real compiled programs of both families survive a build
killed by SIGKILL, a corrupt cache (a module cut short or overwritten, a garbage
translation entry, a file missing from a build folder, an unreadable or garbage marker,
a marker or folder of another program), an unwritable cache folder, a full disk during
a build, and Ctrl-C (SIGINT) during a compile or a long compiled call.

Each fault runs in fresh worker processes (a module imported by a process cannot be
imported again from the same path: a faulty load must be that process's first), which
report what they computed, whether they built, and every WARNING of the `stencilchain`
loggers; results are compared with the embedded executor's. A damaged entry must be
logged exactly once, as one WARNING naming its folder (or file), then built again.

A compiler that takes its time is a wrapper script around the real one: while a flag
file exists, its compile of a unit of `fault_smooth` touches a file (the test then knows
the compiler runs) and sleeps instead of compiling.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.errors import CacheDirectoryError
from stencilchain.steps.caches.build_cache import MARKER_NAME

I = sc.Dimension("I")
J = sc.Dimension("J")
F64 = sc.Field[[I, J], sc.float64]

FAMILIES = ["gtfn", "dace"]
SHAPE = (20, 17)
TIMEOUT = 300  # seconds any one worker process may take


@sc.field_operator
def _smooth(f: F64, alpha: sc.float64) -> F64:
    return f + alpha * (f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1) - 4.0 * f)


@sc.program
def fault_smooth(f: F64, out: F64, alpha: sc.float64):  # type: ignore[no-untyped-def]
    _smooth(f, alpha, out=out)


@sc.field_operator
def _skewed(f: F64, alpha: sc.float64) -> F64:
    return f * alpha + f(I + 1) - f(J - 1)


@sc.program
def fault_other(f: F64, out: F64, alpha: sc.float64):  # type: ignore[no-untyped-def]
    """The same signature as fault_smooth, another result: its module, loaded in place of
    fault_smooth's, would run without an error and compute something else."""
    _skewed(f, alpha, out=out)


@sc.field_operator
def _heavy(f: F64, alpha: sc.float64) -> F64:
    t = f
    for _ in range(12):  # unrolled by tracing: 24 sines and cosines a point, in a chain
        t = sc.math.cos(sc.math.sin(t) * alpha)
    return t


@sc.program
def fault_heavy(f: F64, out: F64, alpha: sc.float64):  # type: ignore[no-untyped-def]
    """A call long enough for a Ctrl-C to come during it (0.6 s on 1500 x 1500, 2 threads)."""
    _heavy(f, alpha, out=out)


PROGRAMS = {"fault_smooth": fault_smooth, "fault_other": fault_other, "fault_heavy": fault_heavy}


def inputs(shape: tuple[int, int] = SHAPE) -> tuple[np.ndarray, np.ndarray, float]:
    f = np.random.default_rng(7).random(shape)
    return f, np.zeros_like(f), 0.25


def expected(name: str, shape: tuple[int, int] = SHAPE) -> np.ndarray:
    """The embedded executor's result of the program `name` on `inputs(shape)`."""
    f, out, alpha = inputs(shape)
    PROGRAMS[name].with_backend(sc.backends.run_embedded)(f, out, alpha)
    return out


# --- the worker process ----------------------------------------------------------------------

WORKER = textwrap.dedent(
    """
    import dataclasses, json, logging, signal, sys, time, traceback
    from pathlib import Path

    import numpy as np

    # Ctrl-C raises KeyboardInterrupt here even where the test run was started in the
    # background (a shell starts those with SIGINT ignored, which Python then keeps)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    options = json.loads(sys.argv[1])
    sys.path.insert(0, options["tests_dir"])
    from test_faults import MARKER_NAME, PROGRAMS, inputs

    from stencilchain.containers import build_container, override_step

    records = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append([record.name, record.levelname, record.getMessage()])

    logger = logging.getLogger("stencilchain")
    logger.setLevel(logging.WARNING)
    logger.addHandler(Collect())

    family, report = options["family"], {"results": {}, "records": records}
    cache_dir = Path(options["cache_dir"])

    def toolchain():
        container = build_container({}, cache_dir=cache_dir)
        family_container = getattr(container, family)
        if options.get("cxx"):
            if family == "dace":
                from stencilchain.containers import make_dace_compiler as make
            else:
                from stencilchain.containers import make_gtfn_compiler as make
            cxx = options["cxx"]
            override_step(
                family_container.compilation,
                lambda cfg: dataclasses.replace(make(cfg), cxx=cxx),
            )
        return family_container.toolchain()

    def run(tc, name, shape=(20, 17)):
        compiled = tc.compile(PROGRAMS[name])
        f, out, alpha = inputs(shape)
        compiled(f, out, alpha)
        np.save(f"{options['result']}.{name}.npy", out)
        report["results"][name] = {
            "built": compiled.artifact.built,
            "build_dir": str(compiled.artifact.build_dir),
            "module_path": str(compiled.artifact.module_path),
        }
        return compiled

    def complete_builds(name):
        return [
            str(folder) for folder in (cache_dir / "builds").glob(name + "_*")
            if (folder / MARKER_NAME).exists()
        ]

    try:
        mode = options["mode"]
        if mode == "run":
            tc = toolchain()
            for name in options["programs"]:
                run(tc, name)
        elif mode == "interrupt_compile":
            tc = toolchain()
            Path(options["ready"]).touch()
            try:
                tc.compile(PROGRAMS["fault_smooth"])
                report["interrupted"] = False
            except KeyboardInterrupt:
                report["interrupted"] = True
            report["complete_after_interrupt"] = complete_builds("fault_smooth")
            Path(options["flag"]).unlink()  # the compiler compiles again
            run(tc, "fault_smooth")
        elif mode == "interrupt_call":
            tc = toolchain()
            compiled = tc.compile(PROGRAMS["fault_heavy"])
            f, out, alpha = inputs(tuple(options["shape"]))
            start = time.perf_counter()
            compiled(f, out, alpha)
            report["call_seconds"] = time.perf_counter() - start
            calls = 0
            Path(options["ready"]).touch()
            try:
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    compiled(f, out, alpha)
                    calls += 1
                report["interrupted"] = False
            except KeyboardInterrupt:
                report["interrupted"] = True
            report["calls"] = calls
            run(tc, "fault_heavy", tuple(options["shape"]))  # the same pool: no compile
        else:
            raise ValueError(mode)
    except Exception as error:
        report["error"] = {
            "type": type(error).__name__,
            "mro": [c.__name__ for c in type(error).__mro__],
            "message": str(error),
            "traceback": traceback.format_exc(),
        }
    Path(options["result"]).write_text(json.dumps(report))
    """
)


@dataclasses.dataclass
class Worker:
    """Starts worker processes on one cache and reads their reports."""

    folder: Path
    cache_dir: Path
    family: str
    cxx: str | None = None

    def start(self, mode: str, **options: Any) -> tuple[subprocess.Popen[str], Path]:
        script = self.folder / "fault_worker.py"
        if not script.exists():
            script.write_text(WORKER)
        result = self.folder / f"result-{uuid.uuid4().hex}.json"
        settings = {
            "tests_dir": str(Path(__file__).parent),
            "cache_dir": str(self.cache_dir),
            "family": self.family,
            "cxx": self.cxx,
            "mode": mode,
            "result": str(result),
            **options,
        }
        env = {**os.environ, "OMP_NUM_THREADS": "2", "STENCILCHAIN_CACHE_DIR": str(self.cache_dir)}
        process = subprocess.Popen(
            [sys.executable, str(script), json.dumps(settings)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: a kill reaches its compilers too
        )
        return process, result

    def finish(self, process: subprocess.Popen[str], result: Path) -> dict[str, Any]:
        try:
            output = process.communicate(timeout=TIMEOUT)[0]
        finally:
            kill_group(process)
        assert process.returncode == 0, output
        report: dict[str, Any] = json.loads(result.read_text())
        for name, value in report["results"].items():
            value["out"] = np.load(f"{result}.{name}.npy")
        report["output"] = output
        return report

    def run(self, *programs: str, **options: Any) -> dict[str, Any]:
        """Run a fresh worker compiling and calling `programs`; its report."""
        return self.finish(*self.start("run", programs=list(programs), **options))


def kill_group(process: subprocess.Popen[str]) -> None:
    """SIGKILL `process` and its process group (its compilers) if it still runs."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def wait_for(path: Path, process: subprocess.Popen[str], what: str, timeout: float = 180) -> None:
    """Wait until `path` exists (the worker got to `what`); fail if the worker ends first."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if process.poll() is not None:
            raise AssertionError(f"the worker ended before {what}:\n{process.communicate()[0]}")
        assert time.monotonic() < deadline, f"the worker did not get to {what} in {timeout} s"
        time.sleep(0.02)


def warnings_of(report: dict[str, Any]) -> list[list[str]]:
    return [r for r in report["records"] if r[1] in ("WARNING", "ERROR", "CRITICAL")]


def assert_correct(report: dict[str, Any], name: str = "fault_smooth", shape: Any = SHAPE) -> None:
    assert "error" not in report, report["error"]["traceback"]
    # fault_heavy's sines and cosines are the C library's, not NumPy's: a few ulp apart
    rtol, atol = (1e-12, 1e-14) if name == "fault_heavy" else (1e-13, 0.0)
    np.testing.assert_allclose(
        report["results"][name]["out"], expected(name, shape), rtol=rtol, atol=atol
    )


def require_family(family: str) -> None:
    if family == "dace":
        pytest.importorskip("dace", reason="the DaCe toolchains need the `dace` extra")


def slow_compiler(folder: Path) -> tuple[Path, Path, Path]:
    """(wrapper, flag, compiling): a C++ compiler that, while `flag` exists, writes its
    process id to `compiling` and sleeps instead of compiling a unit of fault_smooth."""
    real = shutil.which("c++")
    assert real is not None
    flag, compiling = folder / "slow", folder / "compiling"
    wrapper = folder / "bin" / "c++"
    wrapper.parent.mkdir()
    wrapper.write_text(
        "#!/bin/sh\n"
        'case "$*" in *fault_smooth*" -c "*|*" -c "*fault_smooth*)\n'
        f'  if [ -e "{flag}" ]; then echo $$ > "{compiling}"; exec sleep 120; fi;;\n'
        "esac\n"
        f'exec "{real}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper, flag, compiling


# --- a cache with both programs built, per family ----------------------------------------------


@dataclasses.dataclass
class BuiltCache:
    """A cache holding complete builds of both programs (a fault test damages it; the test
    then leaves it rebuilt, complete again)."""

    worker: Worker
    build_dirs: dict[str, Path]

    @property
    def folder(self) -> Path:
        return self.build_dirs["fault_smooth"]

    def marker(self, name: str = "fault_smooth") -> dict[str, Any]:
        value: dict[str, Any] = json.loads((self.build_dirs[name] / MARKER_NAME).read_text())
        return value

    def translation_entry(self, name: str) -> Path:
        for path in (self.worker.cache_dir / "translations").rglob("*.json"):
            payload = json.loads(json.loads(path.read_text())["payload"])
            if payload["entry_point"] == name:
                return path
        raise AssertionError(f"no translation entry of {name}")


@pytest.fixture(scope="module", params=FAMILIES)
def built_cache(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Iterator[BuiltCache]:
    require_family(request.param)
    folder = tmp_path_factory.mktemp(f"faults-{request.param}")
    cache_dir = folder / "cache"
    cache_dir.mkdir(mode=0o700)
    worker = Worker(folder, cache_dir, request.param)
    report = worker.run("fault_smooth", "fault_other", "fault_heavy")
    for name in ("fault_smooth", "fault_other", "fault_heavy"):
        assert_correct(report, name)
    yield BuiltCache(worker, {n: Path(r["build_dir"]) for n, r in report["results"].items()})


# --- corruption --------------------------------------------------------------------------------


def _module(cache: BuiltCache) -> Path:
    return cache.folder / cache.marker()["metadata"]["module"]


def truncated_module(cache: BuiltCache) -> Path:
    module = _module(cache)
    data = module.read_bytes()
    module.write_bytes(data[: len(data) // 2])
    return cache.folder


def garbage_module(cache: BuiltCache) -> Path:
    """Overwritten with as many bytes: only loading it can tell."""
    module = _module(cache)
    module.write_bytes(
        b"\0garbage" * (module.stat().st_size // 8) + b"\0" * (module.stat().st_size % 8)
    )
    return cache.folder


def without_load_index(cache: BuiltCache) -> None:
    """Remove the load index: a hit reads no translation entry (docs/adr/0039-load-index.md),
    so a damaged one is found only by a process that translates, as one without it does."""
    shutil.rmtree(cache.worker.cache_dir / "index", ignore_errors=True)


def garbage_translation(cache: BuiltCache) -> Path:
    without_load_index(cache)
    entry = cache.translation_entry("fault_smooth")
    entry.write_bytes(os.urandom(entry.stat().st_size))
    return entry


def translation_of_another_program(cache: BuiltCache) -> Path:
    """An intact entry (its checksum right) holding fault_other's source under
    fault_smooth's key."""
    without_load_index(cache)
    entry = cache.translation_entry("fault_smooth")
    other = json.loads(cache.translation_entry("fault_other").read_text())
    content = json.loads(entry.read_text())
    content["payload"] = other["payload"]
    content["sha256"] = other["sha256"]
    entry.write_text(json.dumps(content))
    return entry


def missing_file(cache: BuiltCache) -> Path:
    """The last file the build records (GTFN's module, DaCe's SDFG library)."""
    metadata = cache.marker()["metadata"]
    name = "dace_library" if "dace_library" in metadata else "module"
    (cache.folder / metadata[name]).unlink()
    return cache.folder


def garbage_marker(cache: BuiltCache) -> Path:
    (cache.folder / MARKER_NAME).write_bytes(b"\x89\x00garbage{" + os.urandom(64))
    return cache.folder


def marker_mode_000(cache: BuiltCache) -> Path:
    if os.geteuid() == 0:
        pytest.skip("root reads a file of mode 000: `marker_is_a_link` makes it unreadable")
    (cache.folder / MARKER_NAME).chmod(0)
    return cache.folder


def marker_is_a_link(cache: BuiltCache) -> Path:
    """An unreadable marker, as root can have one: the caches never open through a link."""
    marker = cache.folder / MARKER_NAME
    real = cache.folder.parent / f"moved-marker-{uuid.uuid4().hex}"
    marker.rename(real)
    marker.symlink_to(real)
    return cache.folder


def another_programs_folder(cache: BuiltCache) -> Path:
    """fault_other's complete build copied over fault_smooth's folder."""
    shutil.rmtree(cache.folder)
    shutil.copytree(cache.build_dirs["fault_other"], cache.folder, symlinks=True)
    return cache.folder


def marker_of_another_program(cache: BuiltCache) -> Path:
    """fault_other's folder under fault_smooth's key, its marker saying that key."""
    another_programs_folder(cache)
    marker = cache.folder / MARKER_NAME
    content = json.loads(marker.read_text())
    content["key"] = cache.folder.name
    marker.write_text(json.dumps(content))
    return cache.folder


def marker_names_another_module(cache: BuiltCache) -> Path:
    """fault_smooth's marker naming fault_other's module, in fault_other's folder."""
    other = cache.build_dirs["fault_other"]
    other_module = other / cache.marker("fault_other")["metadata"]["module"]
    marker = cache.folder / MARKER_NAME
    content = json.loads(marker.read_text())
    content["metadata"]["module"] = os.path.relpath(other_module, cache.folder)
    marker.write_text(json.dumps(content))
    return cache.folder


def marker_without_file_sizes(cache: BuiltCache) -> Path:
    """A marker as written before builds recorded their files' sizes and hashes: the build
    is made again once, never trusted unchecked."""
    marker = cache.folder / MARKER_NAME
    content = json.loads(marker.read_text())
    for entry in ("file_sizes", "file_hashes"):
        content["metadata"].pop(entry)
    marker.write_text(json.dumps(content))
    return cache.folder


CORRUPTIONS: dict[str, Callable[[BuiltCache], Path]] = {
    f.__name__: f
    for f in (
        truncated_module,
        garbage_module,
        garbage_translation,
        translation_of_another_program,
        missing_file,
        garbage_marker,
        marker_mode_000,
        marker_is_a_link,
        another_programs_folder,
        marker_of_another_program,
        marker_names_another_module,
        marker_without_file_sizes,
    )
}


@pytest.mark.slow
@pytest.mark.parametrize("fault", list(CORRUPTIONS))
def test_a_corrupt_cache_entry_is_logged_once_and_built_again(
    built_cache: BuiltCache, fault: str
) -> None:
    damaged = CORRUPTIONS[fault](built_cache)
    report = built_cache.worker.run("fault_smooth")
    assert_correct(report)
    result = report["results"]["fault_smooth"]
    assert Path(result["build_dir"]) == built_cache.folder
    assert Path(result["module_path"]).parent.is_relative_to(built_cache.folder)
    warnings = warnings_of(report)
    assert len(warnings) == 1, warnings
    assert str(damaged) in warnings[0][2], warnings
    assert warnings[0][0].startswith("stencilchain."), warnings
    # a translation is redone (and the build found); any damaged build is built again
    assert result["built"] is ("translation" not in fault)
    assert json.loads((built_cache.folder / MARKER_NAME).read_text())["key"] == (
        built_cache.folder.name
    )
    # the next fresh process finds it all intact: no warning, no build
    again = built_cache.worker.run("fault_smooth")
    assert_correct(again)
    assert warnings_of(again) == []
    assert again["results"]["fault_smooth"]["built"] is False


def test_verify_finds_a_library_damaged_at_the_same_size(built_cache: BuiltCache) -> None:
    """What a first call does not see before it loads the file (DaCe's SDFG library is
    opened by its module as that loads): `verify_build`, behind `stencilchain cache
    verify`, reads the hashes."""
    from stencilchain.steps.build.cached_build import verify_build

    metadata = built_cache.marker()["metadata"]
    assert verify_build(built_cache.folder, metadata) == ""
    name = "dace_library" if "dace_library" in metadata else "module"
    path = built_cache.folder / metadata[name]
    original = path.read_bytes()
    damaged = bytearray(original)
    damaged[len(damaged) // 3] ^= 0x5A
    path.write_bytes(bytes(damaged))  # no process has it loaded: the workers have ended
    try:
        problem = verify_build(built_cache.folder, metadata)
    finally:
        path.write_bytes(original)  # the next fault test finds the build intact
    assert problem == f"has a {metadata[name]!r} whose content changed since it was built (sha256)"
    assert verify_build(built_cache.folder, metadata) == ""


def _build_marker_fault(kind: str, folder: Path) -> None:
    marker = folder / MARKER_NAME
    if kind == "garbage":
        marker.write_bytes(b"\x00not json")
    elif kind == "another_key":
        content = json.loads(marker.read_text())
        content["key"] = "another_key"
        marker.write_text(json.dumps(content))
    else:  # a link: never opened through
        real = folder.parent / "real-marker"
        marker.rename(real)
        marker.symlink_to(real)


@pytest.mark.parametrize("kind", ["garbage", "another_key", "link"])
def test_the_build_cache_logs_a_damaged_marker_once_and_builds_again(
    kind: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """In one process, without a compiler: the warning comes from the process that
    rebuilds, once, and a lookup (no lock) says nothing."""
    from stencilchain.steps.caches.build_cache import BuildCache

    cache = BuildCache(tmp_path / "builds")

    def build(folder: Path) -> dict[str, str]:
        (folder / "module").write_text("built")
        return {"module": "module"}

    first = cache.get_or_build("prog_key", build)
    _build_marker_fault(kind, first.folder)
    caplog.set_level(logging.WARNING, logger="stencilchain")
    assert cache.lookup("prog_key") is None
    again = cache.get_or_build("prog_key", build)
    assert again.built and again.folder == first.folder
    records = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(records) == 1, records
    assert records[0].name == "stencilchain.steps.caches.build_cache"
    assert str(first.folder) in records[0].getMessage()
    assert cache.get_or_build("prog_key", build).built is False
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 1


UNPRIVILEGED = textwrap.dedent(
    """
    import json, logging, os, sys
    from pathlib import Path

    from stencilchain.steps.caches.build_cache import MARKER_NAME, BuildCache

    # a user that a mode-000 file keeps out, as root is not (imports first: the
    # installation may not be readable by that user)
    os.setgid(65534)
    os.setuid(65534)

    records = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append([record.name, record.levelname, record.getMessage()])

    logging.getLogger("stencilchain").addHandler(Collect())
    cache = BuildCache(Path(sys.argv[1]) / "builds")

    def build(folder):
        (folder / "module").write_text("built")
        return {"module": "module"}

    first = cache.get_or_build("prog_key", build)
    (first.folder / MARKER_NAME).chmod(0)
    again = cache.get_or_build("prog_key", build)
    print(json.dumps({"built": again.built, "folder": str(again.folder), "records": records}))
    """
)


def test_a_marker_of_mode_000_is_logged_once_and_built_again(tmp_path: Path) -> None:
    """What `marker_mode_000` cannot do as root: an unprivileged user whose marker it
    cannot read (the BuildCache alone, in a process that gives up root)."""
    if os.geteuid() != 0:
        pytest.skip(
            "needs root to run the check as another user (as non-root, the "
            "compiled `marker_mode_000` fault runs)"
        )
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="sc-faults-nobody-"))  # in /tmp: reachable by all
    try:
        os.chown(root, 65534, 65534)
        os.chmod(root, 0o700)
        done = subprocess.run(
            [sys.executable, "-c", UNPRIVILEGED, str(root)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(Path(sc.__file__).parents[1])},
            check=False,
        )
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout.splitlines()[-1])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert report["built"] is True
    warnings = [r for r in report["records"] if r[1] == "WARNING"]
    assert len(warnings) == 1, warnings
    assert report["folder"] in warnings[0][2] and "Permission denied" in warnings[0][2]


def test_an_unfinished_build_is_rebuilt_without_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from stencilchain.steps.caches.build_cache import BuildCache

    cache = BuildCache(tmp_path / "builds")
    (tmp_path / "builds" / "prog_key").mkdir(parents=True)  # killed before its marker
    caplog.set_level(logging.WARNING, logger="stencilchain")
    assert cache.get_or_build("prog_key", lambda folder: {}).built
    assert caplog.records == []


@pytest.mark.parametrize("lifetime", ["persistent", "session"])
def test_a_cache_root_below_a_file_is_a_clear_error(lifetime: str, tmp_path: Path) -> None:
    from stencilchain.steps.caches.cache_root import cache_root
    from stencilchain.steps.settings import CacheLifetime

    (tmp_path / "a-file").write_text("")
    with pytest.raises(CacheDirectoryError, match="STENCILCHAIN_CACHE_DIR") as caught:
        cache_root(CacheLifetime(lifetime), tmp_path / "a-file" / "cache")
    assert str(tmp_path / "a-file") in str(caught.value)


# --- a killed build ----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_a_build_killed_while_compiling_is_rebuilt_by_the_next_process(
    family: str, tmp_path: Path, private_cache_dir: Path
) -> None:
    require_family(family)
    wrapper, flag, compiling = slow_compiler(tmp_path)
    worker = Worker(tmp_path, private_cache_dir, family, cxx=str(wrapper))
    flag.touch()
    process, _ = worker.start("run", programs=["fault_smooth"])
    try:
        wait_for(compiling, process, "compiling fault_smooth")
        os.killpg(process.pid, signal.SIGKILL)  # the worker and its compilers, as a job killer
        process.wait(timeout=30)
    finally:
        kill_group(process)
    assert process.returncode == -signal.SIGKILL
    (folder,) = [p for p in (private_cache_dir / "builds").glob("fault_smooth_*") if p.is_dir()]
    assert not (folder / MARKER_NAME).exists()
    assert folder.with_name(folder.name + ".lock").exists()  # left by the dead process

    flag.unlink()
    report = worker.run("fault_smooth")
    assert_correct(report)
    assert report["results"]["fault_smooth"]["built"] is True
    assert Path(report["results"]["fault_smooth"]["build_dir"]) == folder
    assert (folder / MARKER_NAME).exists()
    assert warnings_of(report) == []  # an unfinished build is not damage: nothing to say


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


RUNNER_SCRIPT = """
import os, sys, time
from pathlib import Path
from stencilchain.steps.build.runner import BuildRunner

folder = Path(sys.argv[1])
with BuildRunner(folder, dict(os.environ)) as runner:
    runner.start(["sh", "-c", f"sleep 100 & echo $! > {folder}/pid; wait"], "a sleeper")
    time.sleep(100)
"""


def test_a_killed_runner_ends_the_process_group_of_its_command(tmp_path: Path) -> None:
    """A command's own children (a compiler driver's cc1plus) end with the Python process."""
    env = {**os.environ, "PYTHONPATH": str(Path(sc.__file__).parents[1])}
    process = subprocess.Popen([sys.executable, "-c", RUNNER_SCRIPT, str(tmp_path)], env=env)
    try:
        wait_for(tmp_path / "pid", process, "starting the command", timeout=60)
        deadline = time.monotonic() + 10
        while not (tmp_path / "pid").read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.02)
        child = int((tmp_path / "pid").read_text())
        assert _alive(child)
        process.kill()
        process.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), "the command's child outlived the process"
    finally:
        process.kill()


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_compilers_die_with_the_process_that_started_them(
    family: str, tmp_path: Path, private_cache_dir: Path
) -> None:
    """SIGKILL of the Python process alone (not its group, as a job killer would): the
    compiler it started through Ninja or directly ends too, and the next process rebuilds."""
    require_family(family)
    wrapper, flag, compiling = slow_compiler(tmp_path)
    worker = Worker(tmp_path, private_cache_dir, family, cxx=str(wrapper))
    flag.touch()
    process, _ = worker.start("run", programs=["fault_smooth"])
    try:
        wait_for(compiling, process, "compiling fault_smooth")
        deadline = time.monotonic() + 30
        while not compiling.read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.02)  # written by the wrapper: its pid, once it has run `echo`
        compiler = int(compiling.read_text())
        assert _alive(compiler)
        os.kill(process.pid, signal.SIGKILL)  # the Python process alone
        process.wait(timeout=30)
        deadline = time.monotonic() + 30
        while _alive(compiler) and time.monotonic() < deadline:
            time.sleep(0.05)
        survived = _alive(compiler)
    finally:
        kill_group(process)
    assert process.returncode == -signal.SIGKILL
    assert not survived, f"the compiler (pid {compiler}) outlived the process that started it"

    flag.unlink()
    report = worker.run("fault_smooth")
    assert_correct(report)
    assert report["results"]["fault_smooth"]["built"] is True


# --- disk and permissions ----------------------------------------------------------------------


@contextlib.contextmanager
def tmpfs(folder: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted on `folder` with `options`; skips the test where mounting is not
    permitted. Always unmounted."""
    folder.mkdir(mode=0o700, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to simulate the fault: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False, capture_output=True)


def _unwritable_cache_error(cache_dir: Path, family: str) -> Exception:
    from stencilchain.containers import build_container

    with pytest.raises(CacheDirectoryError) as caught:
        getattr(build_container({}, cache_dir=cache_dir), family).toolchain().compile(fault_smooth)
    return caught.value


@pytest.mark.parametrize("family", FAMILIES)
def test_a_read_only_cache_folder_is_a_clear_error(family: str, tmp_path: Path) -> None:
    require_family(family)
    with tmpfs(tmp_path / "cache", "ro,size=1m,mode=0700") as cache_dir:
        error = _unwritable_cache_error(cache_dir, family)
    message = str(error)
    assert str(cache_dir) in message and "STENCILCHAIN_CACHE_DIR" in message, message
    assert "Read-only file system" in message, message
    assert isinstance(error, OSError)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_cache_folder_below_a_file_is_a_clear_error(family: str, tmp_path: Path) -> None:
    require_family(family)
    (tmp_path / "a-file").write_text("")
    cache_dir = tmp_path / "a-file" / "cache"
    error = _unwritable_cache_error(cache_dir, family)
    message = str(error)
    assert str(cache_dir) in message and "STENCILCHAIN_CACHE_DIR" in message, message


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_a_full_disk_fails_the_build_cleanly_and_a_later_run_rebuilds(
    family: str, tmp_path: Path
) -> None:
    require_family(family)
    with tmpfs(tmp_path / "cache", "size=128k,mode=0700") as cache_dir:
        worker = Worker(tmp_path, cache_dir, family)
        report = worker.run("fault_smooth")
        error = report.get("error")
        assert error is not None, "the build fit in 128 KiB: the fault was not injected"
        assert "CompilationError" in error["mro"] or "OSError" in error["mro"], error
        # the error names the folder of the failed build (its log); CMake may report a full
        # disk as a file it could not write rather than as ENOSPC
        assert str(cache_dir) in error["message"], error
        complete = [p for p in (cache_dir / "builds").glob("fault_smooth_*/" + MARKER_NAME)]
        assert complete == []  # nothing that a later run trusts

        # the disk has room again: a later run builds and is right
        remounted = subprocess.run(
            ["mount", "-o", "remount,size=512m", str(cache_dir)], capture_output=True, text=True
        )
        assert remounted.returncode == 0, remounted.stderr
        report = worker.run("fault_smooth")
        assert_correct(report)
        assert report["results"]["fault_smooth"]["built"] is True


# --- Ctrl-C ------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_ctrl_c_during_a_compile_leaves_the_process_usable_and_the_cache_consistent(
    family: str, tmp_path: Path, private_cache_dir: Path
) -> None:
    require_family(family)
    wrapper, flag, compiling = slow_compiler(tmp_path)
    worker = Worker(tmp_path, private_cache_dir, family, cxx=str(wrapper))
    flag.touch()
    process, result = worker.start(
        "interrupt_compile", flag=str(flag), ready=str(tmp_path / "ready")
    )
    try:
        wait_for(compiling, process, "compiling fault_smooth")
        os.kill(process.pid, signal.SIGINT)
    except BaseException:
        kill_group(process)
        raise
    report = worker.finish(process, result)
    assert report["interrupted"] is True
    assert report["complete_after_interrupt"] == []
    assert_correct(report)
    assert report["results"]["fault_smooth"]["built"] is True
    # a fresh process loads that build
    again = worker.run("fault_smooth")
    assert_correct(again)
    assert again["results"]["fault_smooth"]["built"] is False


@pytest.mark.slow
def test_ctrl_c_during_a_long_call_leaves_the_process_usable(built_cache: BuiltCache) -> None:
    """SIGINT while the worker calls fault_heavy in a loop (each call about 0.6 s, in
    native code): KeyboardInterrupt is raised when that call returns, the worker catches
    it, and its next call is right."""
    shape = (1500, 1500)
    ready = built_cache.worker.folder / f"ready-{uuid.uuid4().hex}"
    process, result = built_cache.worker.start("interrupt_call", shape=shape, ready=str(ready))
    try:
        wait_for(ready, process, "calling in a loop")
        time.sleep(0.2)
        os.kill(process.pid, signal.SIGINT)
    except BaseException:
        kill_group(process)
        raise
    report = built_cache.worker.finish(process, result)
    assert report["interrupted"] is True
    assert_correct(report, "fault_heavy", shape)
    assert report["results"]["fault_heavy"]["built"] is False
