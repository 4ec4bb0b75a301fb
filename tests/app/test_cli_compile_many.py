"""`stencilchain compile` of several programs: a file alone (every program in it) or several
FILE.py:PROGRAM targets, compiled side by side, one line per program."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stencilchain.program import ir
from stencilchain.steps.gtfn.translation import GTFNTranslationStep

from .cli_support import CLI


def test_a_file_alone_compiles_every_program_in_it(
    cli: CLI, stencils: Path, cache_dir: Path
) -> None:
    result = cli("compile", str(stencils), "--jobs", "2")
    assert result.status == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].startswith("compiled 2 of 2 programs with run_gtfn_cpu in ")
    assert lines[0].endswith("(2 built, 0 cached, 0 failed)")
    assert [line.split()[:2] for line in lines[1:]] == [["smooth", "built"], ["masked", "built"]]
    assert all(str(cache_dir) in line for line in lines[1:])  # each one's build folder

    again = cli("compile", f"{stencils}:masked", f"{stencils}:smooth", "--json")
    assert again.status == 0, again.err
    data = again.json()
    assert data["backend"] == "run_gtfn_cpu"
    rows = data["programs"]
    assert [r["program"] for r in rows] == ["masked", "smooth"]
    assert {r["outcome"] for r in rows} <= {"pool", "cache"}  # in-process: the pool
    assert all(Path(r["module"]).is_file() for r in rows)


def test_a_failure_is_reported_with_the_others_and_exits_1(
    cli: CLI, stencils: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    translate = GTFNTranslationStep.__call__

    def failing(self: GTFNTranslationStep, program: ir.Program, /) -> Any:
        if program.name == "masked":
            raise RuntimeError("no translation of masked today\nmore detail")
        return translate(self, program)

    monkeypatch.setattr(GTFNTranslationStep, "__call__", failing)
    result = cli("compile", str(stencils))
    assert result.status == 1
    lines = result.out.splitlines()
    assert lines[0].endswith("(1 built, 0 cached, 1 failed)")
    assert lines[1].split()[:2] == ["smooth", "built"]
    assert lines[2].split()[:2] == ["masked", "FAILED"]
    assert "RuntimeError: no translation of masked today (more with --debug)" in lines[2]
    assert result.error_line == ("stencilchain: error: 1 of 2 programs failed to compile: masked")


def test_one_program_options_need_exactly_one(cli: CLI, stencils: Path) -> None:
    for option in (["--show-source"], ["--shape", "8x8"]):
        result = cli("compile", str(stencils), *option)
        assert result.status == 2
        assert f"{option[0]} take exactly one program; the targets name 2 (smooth, masked)" in (
            result.error_line
        )
    empty = stencils.with_name("empty.py")
    empty.write_text("x = 1\n")
    result = cli("compile", str(empty))
    assert result.status == 2
    assert result.error_line == f"stencilchain: error: {empty} defines no @sc.program"
