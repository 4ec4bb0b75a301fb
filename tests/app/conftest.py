"""Fixtures of the command-line tests: run `main()` in-process, user files, private caches."""

from __future__ import annotations

from pathlib import Path

import pytest

from stencilchain.app.cli import main

from .cli_support import CLI, STENCILS, Result


@pytest.fixture()
def cli(capsys: pytest.CaptureFixture[str]) -> CLI:
    """`cli("run", "x.py:p", ...)` runs `main()` with those arguments."""

    def run(*argv: str) -> Result:
        capsys.readouterr()
        status = main(list(argv))
        captured = capsys.readouterr()
        return Result(status, captured.out, captured.err)

    return run


@pytest.fixture()
def stencils(tmp_path: Path) -> Path:
    """A user's file with two programs: smooth (float64) and masked (float32, bool, int32)."""
    path = tmp_path / "stencils.py"
    path.write_text(STENCILS)
    return path


@pytest.fixture()
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of this test's own, configured through the environment."""
    path = tmp_path / "cache"
    monkeypatch.setenv("STENCILCHAIN_CACHE_DIR", str(path))
    return path
