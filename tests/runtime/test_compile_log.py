"""Logging (issue 13): a compilation logs one INFO line per translation and per build, each
saying how its cache answered and how long it took, DEBUG lines with the paths; a call of a
compiled program logs nothing. `STENCILCHAIN_LOG_LEVEL` sets the `stencilchain` logger's
level when a container is built, and attaches a stderr handler only if nothing else
handles its records.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.containers import build_container
from stencilchain.containers.log_level import StderrHandler, apply_log_level
from stencilchain.errors import ConfigError

I = sc.Dimension("I")
J = sc.Dimension("J")
F64 = sc.Field[[I, J], sc.float64]


@sc.field_operator
def _blur(f: F64) -> F64:
    return 0.5 * f + 0.125 * (f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1))


@sc.program
def logged_blur(f: F64, out: F64) -> None:
    _blur(f, out=out)


TIME = r"[0-9.]+ m?s"


def _info_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.INFO and r.name.startswith("stencilchain")
    ]


def _expect(lines: list[str], patterns: list[str]) -> None:
    assert len(lines) == len(patterns), lines
    for line, pattern in zip(lines, patterns):
        assert re.fullmatch(pattern, line), (line, pattern)


@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_a_compile_logs_its_cache_decisions(
    family: str, private_cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Miss then hit, on a new cache: exactly one INFO line per translation and per build,
    or one for a load index hit."""
    if family == "dace":
        pytest.importorskip("dace", reason="the DaCe toolchains need the `dace` extra")
    who = re.escape(f"logged_blur (run_{family}_cpu, {family})")
    first = getattr(build_container({}, cache_dir=private_cache_dir), family).toolchain()
    with caplog.at_level(logging.DEBUG, logger="stencilchain"):
        first.compile(logged_blur)
    _expect(
        _info_lines(caplog),
        [
            f"{who}: translation cache miss, translated in {TIME}",
            f"{who}: build cache miss, built in {TIME}",
        ],
    )
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert any(str(private_cache_dir) in m and "translation cache entry" in m for m in debug)
    assert any(str(private_cache_dir) in m and "build folder" in m for m in debug)
    assert any("loaded module" in m for m in debug)

    caplog.clear()
    again = getattr(build_container({}, cache_dir=private_cache_dir), family).toolchain()
    with caplog.at_level(logging.INFO, logger="stencilchain"):
        again.compile(logged_blur)
        again.compile(logged_blur)  # from the pool: nothing to say
    _expect(  # a load index hit (ADR 0039): one line, neither cache asked
        _info_lines(caplog),
        [f"{who}: load index hit in {TIME} \\(no translation, no bindings, no build plan\\)"],
    )

    caplog.clear()
    shutil.rmtree(private_cache_dir / "index")  # without the index, both caches answer
    again = getattr(build_container({}, cache_dir=private_cache_dir), family).toolchain()
    with caplog.at_level(logging.INFO, logger="stencilchain"):
        again.compile(logged_blur)
    _expect(
        _info_lines(caplog),
        [f"{who}: translation cache hit in {TIME}", f"{who}: build cache hit in {TIME}"],
    )


def test_translation_cache_off_is_said(
    private_cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    container = build_container({}, cache_dir=private_cache_dir, cached_translation=False)
    with caplog.at_level(logging.INFO, logger="stencilchain"):
        container.gtfn.toolchain().compile(logged_blur)
    assert re.fullmatch(
        rf"logged_blur \(run_gtfn_cpu, gtfn\): translated in {TIME} \(translation cache off\)",
        _info_lines(caplog)[0],
    )


@pytest.mark.parametrize("metrics", [False, True])
def test_a_call_logs_nothing(
    session_cache_dir: Path, caplog: pytest.LogCaptureFixture, metrics: bool
) -> None:
    toolchain = build_container({}, cache_dir=session_cache_dir, metrics=metrics).gtfn.toolchain()
    bound = logged_blur.with_backend(toolchain)
    f = np.random.default_rng(0).random((8, 8))
    out = np.zeros_like(f)
    bound(f, out)  # compiles (logs), then calls
    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        for _ in range(3):
            bound(f, out)
            bound(f=f, out=out)
    assert caplog.records == []


@pytest.fixture()
def package_logger() -> Iterator[logging.Logger]:
    """The `stencilchain` logger, its level and handlers restored after the test."""
    logger = logging.getLogger("stencilchain")
    level, handlers = logger.level, list(logger.handlers)
    yield logger
    logger.setLevel(level)
    logger.handlers[:] = handlers


def test_log_level_unset_changes_nothing(package_logger: logging.Logger) -> None:
    level, handlers = package_logger.level, list(package_logger.handlers)
    assert apply_log_level({}) is None
    assert apply_log_level({"STENCILCHAIN_LOG_LEVEL": " "}) is None
    assert (package_logger.level, package_logger.handlers) == (level, handlers)
    assert any(isinstance(h, logging.NullHandler) for h in handlers)  # the library's only


def test_log_level_with_a_configured_application(package_logger: logging.Logger) -> None:
    """Records already reach a handler (pytest's, on the root logger): only the level."""
    assert logging.getLogger().handlers
    assert apply_log_level({"STENCILCHAIN_LOG_LEVEL": "debug"}) is None
    assert package_logger.level == logging.DEBUG
    assert not any(isinstance(h, StderrHandler) for h in package_logger.handlers)


def test_bad_log_level_names_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"STENCILCHAIN_LOG_LEVEL='loud' is not valid.*INFO"):
        build_container({"STENCILCHAIN_LOG_LEVEL": "loud"})


_SCRIPT = """\
import numpy as np, stencilchain as sc
from stencilchain import backends
I, J = sc.Dimension("I"), sc.Dimension("J")

@sc.field_operator
def _blur(f: sc.Field[[I, J], sc.float64]) -> sc.Field[[I, J], sc.float64]:
    return 0.5 * f + 0.125 * (f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1))

@sc.program
def logged_blur(f: sc.Field[[I, J], sc.float64], out: sc.Field[[I, J], sc.float64]):
    _blur(f, out=out)

f = np.ones((8, 8)); out = np.zeros_like(f)
run = logged_blur.with_backend(backends.run_gtfn_cpu)
run(f, out); run(f, out)
print("ok")
"""


@pytest.mark.parametrize("level", ["INFO", "WARNING", ""])
def test_log_level_for_a_user_without_logging(tmp_path: Path, level: str) -> None:
    """A script that configures no logging: INFO lines on stderr with the variable, none
    at WARNING or without it, and nothing on stdout either way."""
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent(_SCRIPT))
    env = {k: v for k, v in os.environ.items() if k != "STENCILCHAIN_LOG_LEVEL"}
    env["STENCILCHAIN_CACHE_DIR"] = str(tmp_path / "cache")
    if level:
        env["STENCILCHAIN_LOG_LEVEL"] = level
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"
    lines = [line for line in done.stderr.splitlines() if "stencilchain." in line]
    if level == "INFO":
        assert len(lines) == 2, done.stderr
        assert " INFO " in lines[0] and "translation cache miss" in lines[0]
        assert "build cache miss, built in" in lines[1]
    else:
        assert lines == [], done.stderr
