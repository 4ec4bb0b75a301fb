"""The console script in a real process, the progress display, sizes and ages."""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stencilchain.app.errors import CLIError, exit_status, one_line
from stencilchain.app.progress import Progress
from stencilchain.app.units import format_age, format_size, parse_age, parse_size
from stencilchain.containers.config import ConfigError
from stencilchain.errors import CompilationError


def _console_script() -> list[str]:
    script = Path(sys.executable).with_name("stencilchain")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "stencilchain"]


def test_console_script_in_a_subprocess(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STENCILCHAIN_")}
    env["STENCILCHAIN_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run(
        [*_console_script(), "config", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = {r["name"]: r for r in json.loads(done.stdout)["settings"]}
    assert rows["cache_dir"]["value"] == str(tmp_path / "cache")
    assert rows["cache_dir"]["source"] == "environment"

    env["STENCILCHAIN_DATA_LAYOUT"] = "fortran"
    done = subprocess.run(
        [*_console_script(), "backends"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        "stencilchain: error: STENCILCHAIN_DATA_LAYOUT='fortran' is not valid; "
        "accepted: strided, unit_stride\n"
    )


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal() -> None:
    stream = _Terminal()
    with Progress(2, label="starting", stream=stream, delay=0) as progress:
        progress.step("compiling a")
        progress.step("compiling b")
    shown = stream.getvalue()
    assert "starting" in shown and "compiling b" in shown and "2/2" in shown


@pytest.mark.parametrize(
    ("stream", "enabled", "delay"),
    [(io.StringIO(), True, 0.0), (_Terminal(), False, 0.0), (_Terminal(), True, 60.0)],
    ids=["not a terminal", "quiet", "done before the delay"],
)
def test_progress_silent(stream: io.StringIO, enabled: bool, delay: float) -> None:
    with Progress(3, stream=stream, enabled=enabled, delay=delay) as progress:
        for _ in range(3):
            progress.step("x")
        progress.echo("a result")
    assert stream.getvalue() == ""


@pytest.mark.parametrize(
    ("text", "size"),
    [("4096", 4096), ("100k", 102400), ("500M", 500 * 1024**2), ("1.5G", 3 * 1024**3 // 2),
     ("2GiB", 2 * 1024**3), ("3 mb", 3 * 1024**2)],
)  # fmt: skip
def test_parse_size(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("45s", 45), ("30m", 1800), ("12h", 43200), ("7d", 604800), ("2w", 1209600)],
)
def test_parse_age(text: str, seconds: float) -> None:
    assert parse_age(text) == seconds


@pytest.mark.parametrize("text", ["", "lots", "-1G", "5X", "1e3"])
def test_bad_size(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="is not valid"):
        parse_size(text)


@pytest.mark.parametrize("text", ["", "7", "7 days", "d7", "-1h"])
def test_bad_age(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="is not valid"):
        parse_age(text)


def test_formats() -> None:
    assert [format_size(n) for n in (0, 1023, 1536, 5 * 1024**3)] == [
        "0 B",
        "1023 B",
        "1.5 KiB",
        "5.0 GiB",
    ]
    assert [format_age(s) for s in (5, 120, 7200, 3 * 86400)] == ["5s", "2m", "2h", "3d"]


def test_errors_as_one_line() -> None:
    failed = CompilationError(
        "compiling 'smooth' failed",
        "\nsmooth.cpp:3:1: error: boom\n  3 | x\n",
        Path("/b/build.log"),
    )
    assert one_line(failed) == (
        "compiling 'smooth' failed: smooth.cpp:3:1: error: boom (full log: /b/build.log)"
    )
    assert one_line(ValueError("first\nsecond")) == "ValueError: first (more with --debug)"
    assert one_line(CLIError("plain")) == "plain"
    assert one_line(ConfigError("STENCILCHAIN_X='1': bad")) == "STENCILCHAIN_X='1': bad"
    assert (exit_status(CLIError("x")), exit_status(ConfigError("x"))) == (2, 2)
    assert (exit_status(CLIError("x", 1)), exit_status(failed)) == (1, 1)
