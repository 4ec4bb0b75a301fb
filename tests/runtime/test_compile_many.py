"""`Toolchain.compile_many`: many programs compiled side by side, each once, into the pool;
failures named while the others compile; the `build_jobs` setting."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dependency_injector import providers

import stencilchain as sc
from stencilchain.containers import (
    build_container,
    make_gtfn_bindings,
    make_gtfn_translation,
    override_step,
)
from stencilchain.containers.config import GTFNConfig
from stencilchain.containers.environment import settings_from_environ
from stencilchain.program import ir
from stencilchain.runtime.compile_many import CompileReport
from stencilchain.runtime.config import default_build_jobs
from stencilchain.runtime.toolchain import Toolchain
from stencilchain.steps.caches.build_cache import MARKER_NAME
from stencilchain.steps.gtfn.compiler import SHARED_BINDINGS_FILE

I = sc.Dimension("I")
F = sc.Field[[I], sc.float64]


def _program(index: int, factor: float) -> sc.Program:
    """A tiny program `out = factor * f(I + 1)` named `many_<index>`."""

    def op(f: F) -> F:
        return factor * f(I + 1)

    op.__name__ = op.__qualname__ = f"many_op_{index}"
    operator = sc.field_operator(op)

    def run(f: F, out: F) -> None:
        operator(f, out=out)

    run.__name__ = run.__qualname__ = f"many_{index}"
    return sc.program(run)


def _programs(factors: tuple[float, ...]) -> list[sc.Program]:
    """Distinct tiny programs, named by their index."""
    return [_program(index, factor) for index, factor in enumerate(factors)]


PROGRAMS = _programs((1.5, 2.5, 3.5, 4.5))


def _check_against_embedded(program: sc.Program, compiled: Any) -> None:
    f = np.arange(10.0)
    out, expected = np.zeros_like(f), np.zeros_like(f)
    compiled(f, out)
    program(f, expected)
    np.testing.assert_array_equal(out, expected)


def _gtfn(cache_dir: Path, **settings: Any) -> Toolchain:
    toolchain = build_container({}, cache_dir=cache_dir, **settings).gtfn.toolchain()
    assert isinstance(toolchain, Toolchain)
    return toolchain


def test_each_program_is_built_once_then_loaded_from_the_cache(private_cache_dir: Path) -> None:
    toolchain = _gtfn(private_cache_dir)
    reports: list[CompileReport] = []
    given = [*PROGRAMS, PROGRAMS[1]]  # a duplicate is compiled once
    compiled = toolchain.compile_many(given, jobs=2, progress=reports.append)

    assert [c.name for c in compiled] == [p.name for p in given]
    assert compiled[4] is compiled[1]
    assert sorted(r.name for r in reports) == sorted(p.name for p in PROGRAMS)
    assert [r.done for r in reports] == [1, 2, 3, 4]
    assert {r.total for r in reports} == {4}
    assert {r.outcome for r in reports} == {"built"}
    # built by batch builds (several programs, one CMake project), each in its own entry
    batches = {c.artifact.metadata["batch"] for c in compiled}
    assert 1 <= len(batches) <= 2
    assert all(int(c.artifact.metadata["batch_programs"]) >= 2 for c in compiled)
    assert len({c.artifact.build_dir for c in compiled}) == 4
    assert {p.name for p in private_cache_dir.rglob("batch-*") if p.is_dir()} == batches
    for folder in (p for p in private_cache_dir.rglob("batch-*") if p.is_dir()):
        # the bindings of a batch's programs are one unit, each in a namespace of its own
        metadata = json.loads((folder / MARKER_NAME).read_text())["metadata"]
        members = json.loads(metadata["members"])
        assert json.loads(metadata["shared_bindings"]) == members
        text = (folder / "src" / SHARED_BINDINGS_FILE).read_text()
        assert all(f"#define STENCILCHAIN_MODULE_NAME {m}" in text for m in members)
        assert text.count("namespace sc_member_") == 2 * len(members)  # opened and closed
    for program, result in zip(given, compiled):
        _check_against_embedded(program, result)
        # in the pool, as compile() puts it: neither compile nor a bound program rebuilds
        assert toolchain.compile(program) is result
        assert program.with_backend(toolchain).compile() is result

    again: list[CompileReport] = []
    assert toolchain.compile_many(PROGRAMS, progress=again.append) == compiled[:4]
    assert {r.outcome for r in again} == {"pool"}

    fresh = _gtfn(private_cache_dir)  # another container: an empty pool, the same caches
    fresh_reports: list[CompileReport] = []
    loaded = fresh.compile_many([p.ir for p in PROGRAMS], jobs=2, progress=fresh_reports.append)
    assert {r.outcome for r in fresh_reports} == {"cache"}
    assert not any(c.artifact.built for c in loaded)
    for program, result in zip(PROGRAMS, loaded):
        _check_against_embedded(program, result)


@dataclasses.dataclass(frozen=True)
class _FailingFor:
    """A translation that raises for the program `name` and translates the others."""

    inner: Any
    name: str

    def __call__(self, program: ir.Program, /) -> Any:
        if program.name == self.name:
            raise RuntimeError(f"cannot translate {program.name}\nsecond line")
        return self.inner(program)


@dataclasses.dataclass(frozen=True)
class _BrokenFor:
    """A translation whose C++ for the program `name` does not compile."""

    inner: Any
    name: str

    def __call__(self, program: ir.Program, /) -> Any:
        source = self.inner(program)
        if program.name != self.name:
            return source
        return dataclasses.replace(source, source_code=source.source_code + "\n#error broken\n")


def test_a_program_failing_in_a_batch_is_named_and_the_others_are_built(
    private_cache_dir: Path,
) -> None:
    container = build_container({}, cache_dir=private_cache_dir)
    override_step(
        container.gtfn.translation, lambda cfg: _BrokenFor(make_gtfn_translation(cfg), "many_2")
    )
    toolchain = container.gtfn.toolchain()
    programs = _programs((7.5, 8.5, 9.5, 10.5))
    reports: list[CompileReport] = []
    with pytest.raises(sc.BuildsFailedError) as caught:
        toolchain.compile_many(programs, jobs=2, progress=reports.append)
    error = caught.value
    assert set(error.failures) == {"many_2"}
    assert isinstance(error.failures["many_2"], sc.CompilationError)
    assert "broken" in str(error.failures["many_2"])
    assert set(error.compiled) == {"many_0", "many_1", "many_3"}
    assert {r.outcome for r in reports if r.name != "many_2"} == {"built"}
    for program in programs:
        if program.name != "many_2":
            compiled = error.compiled[program.name]
            assert "batch" in compiled.artifact.metadata
            _check_against_embedded(program, compiled)
    # the failed program left no complete entry: a later compile tries again and fails
    with pytest.raises(sc.CompilationError):
        toolchain.compile(programs[2])


@dataclasses.dataclass(frozen=True)
class _BrokenBindingsFor:
    """Bindings whose module for the program `name` does not compile."""

    inner: Any
    name: str

    def __call__(self, source: Any, /) -> Any:
        extension = self.inner(source)
        if extension.program_source.entry_point != self.name:
            return extension
        binding = extension.binding_source
        broken = dataclasses.replace(binding, source_code=binding.source_code + "\n#error broken\n")
        return dataclasses.replace(extension, binding_source=broken)


def test_bindings_failing_in_a_batch_are_named_and_the_others_are_built(
    private_cache_dir: Path,
) -> None:
    container = build_container({}, cache_dir=private_cache_dir)
    override_step(
        container.gtfn.bindings, lambda cfg: _BrokenBindingsFor(make_gtfn_bindings(cfg), "many_1")
    )
    toolchain = container.gtfn.toolchain()
    programs = _programs((17.5, 18.5, 19.5, 20.5))
    with pytest.raises(sc.BuildsFailedError) as caught:
        toolchain.compile_many(programs, jobs=2)
    error = caught.value
    assert set(error.failures) == {"many_1"}
    assert "broken" in str(error.failures["many_1"])
    assert set(error.compiled) == {"many_0", "many_2", "many_3"}
    for program in programs:
        if program.name != "many_1":
            compiled = error.compiled[program.name]
            assert "batch" in compiled.artifact.metadata
            _check_against_embedded(program, compiled)
    # the batch of the broken bindings built each program's bindings as a unit of its own
    logs = [p.read_text() for p in private_cache_dir.rglob("batch-*/build.log")]
    assert any("bindings of each member as its own unit" in log for log in logs)
    with pytest.raises(sc.CompilationError):  # no complete entry: tried again, fails again
        toolchain.compile(programs[1])


def test_batch_false_builds_each_program_alone(private_cache_dir: Path) -> None:
    toolchain = _gtfn(private_cache_dir)
    programs = _programs((11.5, 12.5, 13.5))
    reports: list[CompileReport] = []
    compiled = toolchain.compile_many(programs, jobs=2, progress=reports.append, batch=False)
    assert {r.outcome for r in reports} == {"built"}
    assert not any("batch" in c.artifact.metadata for c in compiled)
    assert not list(private_cache_dir.rglob("batch-*"))  # no batch folder was made
    for program, result in zip(programs, compiled):
        _check_against_embedded(program, result)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failure_names_its_program_and_the_others_compile(
    session_cache_dir: Path, jobs: int
) -> None:
    container = build_container({}, cache_dir=session_cache_dir)
    override_step(
        container.gtfn.translation, lambda cfg: _FailingFor(make_gtfn_translation(cfg), "many_2")
    )
    toolchain = container.gtfn.toolchain()
    reports: list[CompileReport] = []
    with pytest.raises(sc.BuildsFailedError) as caught:
        toolchain.compile_many(PROGRAMS, jobs=jobs, progress=reports.append)
    error = caught.value
    assert isinstance(error, sc.StencilchainError)
    assert set(error.failures) == {"many_2"}
    assert isinstance(error.failures["many_2"], RuntimeError)
    assert "many_2: RuntimeError: cannot translate many_2" in str(error)
    assert "second line" not in str(error)
    assert set(error.compiled) == {"many_0", "many_1", "many_3"}
    assert [r.outcome for r in reports if r.name == "many_2"] == ["failed"]
    for program in PROGRAMS:
        if program.name != "many_2":
            assert program.ir.fingerprint() in toolchain.pool  # compiled and pooled
            assert toolchain.compile(program) is error.compiled[program.name]
            _check_against_embedded(program, error.compiled[program.name])


class _Observed:
    """A compilation step that says when its one-time set-up ran (and in which thread) and
    lets a build through only when `parties` builds have arrived: side by side or never."""

    def __init__(self, inner: Any, parties: int) -> None:
        self.inner = inner
        self.barrier = threading.Barrier(parties, timeout=120)
        self.events: list[tuple[str, int]] = []

    def prepare(self) -> None:
        self.events.append(("prepare", threading.get_ident()))
        self.inner.prepare()

    def __call__(self, extension: Any, /) -> Any:
        self.events.append(("build", threading.get_ident()))
        self.barrier.wait()
        return self.inner(extension)


def test_the_set_up_runs_once_first_then_builds_run_side_by_side(
    session_cache_dir: Path,
) -> None:
    container = build_container({}, cache_dir=session_cache_dir)
    observed = _Observed(container.gtfn.compilation(), parties=2)
    with container.gtfn.compilation.override(providers.Object(observed)):
        toolchain = container.gtfn.toolchain()
    compiled = toolchain.compile_many(PROGRAMS[:2], jobs=2)  # a BrokenBarrierError if serial
    assert [c.name for c in compiled] == ["many_0", "many_1"]
    assert observed.events[0] == ("prepare", threading.get_ident())
    assert [e for e, _ in observed.events] == ["prepare", "build", "build"]
    assert toolchain.compile_many(PROGRAMS[:2]) == compiled  # from the pool: no set-up again
    assert len(observed.events) == 3


def test_jobs_must_be_a_positive_integer(session_cache_dir: Path) -> None:
    toolchain = _gtfn(session_cache_dir)
    with pytest.raises(ValueError, match="positive integer, got 0"):
        toolchain.compile_many(PROGRAMS, jobs=0)
    with pytest.raises(TypeError, match=r"sc\.program objects"):
        toolchain.compile_many(["many_0"])  # type: ignore[list-item]
    assert toolchain.compile_many([]) == []


def test_build_jobs_changes_no_pool_and_no_cache_key(session_cache_dir: Path) -> None:
    toolchain = _gtfn(session_cache_dir, build_jobs=1)
    other = dataclasses.replace(
        toolchain, config=dataclasses.replace(toolchain.config, build_jobs=7)
    )
    assert other.config.build_jobs == 7 and other.config == toolchain.config
    assert other.identity == toolchain.identity  # one pool: compiled programs are shared
    compiled = toolchain.compile(PROGRAMS[0])
    assert other.compile(PROGRAMS[0]) is compiled
    # the build parallelism compile_many gives each build is not part of the build key
    workflow = toolchain.workflow
    extension = workflow.bind(workflow.translate(PROGRAMS[0].ir))
    narrow = workflow.with_build_jobs(1).compilation
    assert narrow != workflow.compilation
    assert narrow.plan(extension).key == workflow.compilation.plan(extension).key  # type: ignore[attr-defined]


def test_build_jobs_setting() -> None:
    assert settings_from_environ({})["build_jobs"] == default_build_jobs() >= 1
    assert settings_from_environ({"STENCILCHAIN_BUILD_JOBS": " 3 "})["build_jobs"] == 3
    config = build_container({"STENCILCHAIN_BUILD_JOBS": "5"}).gtfn.toolchain_config()
    assert config.build_jobs == 5
    for bad in ("0", "-2", "two", "1.5"):
        with pytest.raises(sc.ConfigError) as caught:
            settings_from_environ({"STENCILCHAIN_BUILD_JOBS": bad})
        assert str(caught.value) == (
            f"STENCILCHAIN_BUILD_JOBS={bad!r} is not valid; accepted: a positive integer"
        )
    with pytest.raises(sc.ConfigError, match="build_jobs=0"):
        GTFNConfig(build_jobs=0)
    with pytest.raises(sc.ConfigError, match="build_jobs=True"):
        build_container({}, build_jobs=True)


def test_build_jobs_in_a_config_file(tmp_path: Path) -> None:
    file = tmp_path / "stencilchain.toml"
    file.write_text("build_jobs = 3\n")
    assert settings_from_environ({"STENCILCHAIN_CONFIG": str(file)})["build_jobs"] == 3
    file.write_text("build_jobs = 0\n")
    with pytest.raises(sc.ConfigError, match="build_jobs='0' is not valid"):
        settings_from_environ({"STENCILCHAIN_CONFIG": str(file)})


def test_dace_programs_compile_side_by_side(dace_cpu: Toolchain) -> None:
    programs = _programs((5.5, 6.5))
    compiled = dace_cpu.compile_many(programs, jobs=2)
    for program, result in zip(programs, compiled):
        _check_against_embedded(program, result)
        assert dace_cpu.compile(program) is result
    workflow = dace_cpu.workflow
    extension = workflow.bind(workflow.translate(programs[0].ir))
    narrow = workflow.with_build_jobs(1).compilation
    assert narrow.build_jobs == 1  # type: ignore[attr-defined]
    assert narrow.plan(extension).key == workflow.compilation.plan(extension).key  # type: ignore[attr-defined]
