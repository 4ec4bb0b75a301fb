"""The load index in a toolchain (docs/adr/0039-load-index.md): a program compiled once is
found by a toolchain with an empty pool (another container, as a fresh process has) through
the index alone: one `index` stage, and neither the translation, the bindings nor the build
plan runs. A corrupt entry, an entry naming an unfinished build, another program's build or
a build of another context, and a changed build context are each a miss: every step runs,
the program computes what the embedded executor does, and the index holds a good entry
again. A workflow whose stage a subclass customizes, or without a translation cache, does
not use the index; the job count of a build does not change its key."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.containers import build_container
from stencilchain.runtime.toolchain import Toolchain
from stencilchain.steps.build.compiler_step import CompilerStep
from stencilchain.steps.caches.build_cache import MARKER_NAME
from stencilchain.steps.caches.load_index import context_digest
from stencilchain.steps.workflow import (
    BINDINGS,
    COMPILATION,
    INDEX,
    TRANSLATION,
    CompileWorkflow,
    StageReport,
)

I, J = sc.Dimension("I"), sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]


@sc.field_operator
def _smooth(f: F) -> F:
    return 0.5 * f + 0.125 * (f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1))


@sc.program
def indexed_smooth(f: F, out: F) -> None:
    _smooth(f, out=out)


@sc.field_operator
def _scaled(f: F) -> F:
    return 3.0 * f


@sc.program
def indexed_scaled(f: F, out: F) -> None:
    _scaled(f, out=out)


def toolchain(family: str, cache: Path, **settings: Any) -> Toolchain:
    """A toolchain of a new container (an empty pool, as in a fresh process)."""
    if family == "dace":
        pytest.importorskip("dace", reason="the DaCe toolchains need the `dace` extra")
    tc: Toolchain = getattr(build_container({}, cache_dir=cache, **settings), family).toolchain()
    return tc


def stages(tc: Toolchain, program: Any = indexed_smooth) -> list[tuple[str, bool | None]]:
    """The stages (and cache answers) of compiling `program` with `tc`, checking that the
    compiled program computes what the embedded executor does."""
    seen: list[StageReport] = []
    compiled = tc.compile(program, hook=seen.append)
    f = np.random.default_rng(3).random((10, 8))
    out, expected = np.zeros_like(f), np.zeros_like(f)
    compiled(f, out)
    program.with_backend(sc.backends.run_embedded)(f, expected)
    np.testing.assert_array_equal(out, expected)
    return [(r.stage, r.cached) for r in seen]


MISS = [(TRANSLATION, True), (BINDINGS, None), (COMPILATION, True)]  # both caches hit


def entry_of(tc: Toolchain, program: Any = indexed_smooth) -> Path:
    indexed = tc.workflow.indexed_load
    assert indexed is not None
    return indexed.index.path(indexed.key(program.ir))


@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_an_index_hit_runs_no_translation_bindings_nor_plan(
    family: str, private_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = stages(toolchain(family, private_cache_dir))
    assert first == [(TRANSLATION, False), (BINDINGS, None), (COMPILATION, False)]
    tc = toolchain(family, private_cache_dir)
    assert entry_of(tc).is_file()

    def must_not_run(*args: Any) -> Any:
        raise AssertionError("a load index hit ran a step")

    workflow = tc.workflow
    for step in (workflow.translation, workflow.bindings):
        monkeypatch.setattr(type(step), "__call__", must_not_run)
    monkeypatch.setattr(type(workflow.compilation), "plan", must_not_run)
    assert stages(tc) == [(INDEX, True)]


def test_a_corrupt_entry_is_a_miss_and_is_written_again(private_cache_dir: Path) -> None:
    stages(toolchain("gtfn", private_cache_dir))
    tc = toolchain("gtfn", private_cache_dir)
    entry = entry_of(tc)
    good = entry.read_bytes()
    entry.write_bytes(good[: len(good) // 3])
    assert stages(tc) == MISS
    assert entry.read_bytes() == good
    assert stages(toolchain("gtfn", private_cache_dir)) == [(INDEX, True)]


def test_an_entry_naming_an_unfinished_build_is_a_miss(private_cache_dir: Path) -> None:
    stages(toolchain("gtfn", private_cache_dir))
    tc = toolchain("gtfn", private_cache_dir)
    build = tc.compile(indexed_smooth).artifact.build_dir
    (build / MARKER_NAME).unlink()  # as a build killed before its marker leaves it
    tc = toolchain("gtfn", private_cache_dir)
    assert stages(tc) == [(TRANSLATION, True), (BINDINGS, None), (COMPILATION, False)]
    assert stages(toolchain("gtfn", private_cache_dir)) == [(INDEX, True)]


def test_an_entry_naming_another_program_or_context_is_a_miss(private_cache_dir: Path) -> None:
    stages(toolchain("gtfn", private_cache_dir), indexed_scaled)
    stages(toolchain("gtfn", private_cache_dir))
    tc = toolchain("gtfn", private_cache_dir)
    indexed = tc.workflow.indexed_load
    assert indexed is not None
    key, other = indexed.key(indexed_smooth.ir), indexed.key(indexed_scaled.ir)
    own = indexed.index.get(key)
    assert own is not None
    foreign = indexed.index.get(other)
    assert foreign is not None
    indexed.index.put(key, foreign)  # a valid entry, of another program's build
    assert stages(tc) == MISS
    assert indexed.index.get(key) == own
    indexed.index.put(key, dataclasses.replace(own, context=context_digest("another context")))
    assert stages(toolchain("gtfn", private_cache_dir)) == MISS
    indexed.index.put(key, dataclasses.replace(own, module_name="_sc_indexed_smooth_000000000000"))
    assert stages(toolchain("gtfn", private_cache_dir)) == MISS
    assert stages(toolchain("gtfn", private_cache_dir)) == [(INDEX, True)]


def test_a_changed_build_context_is_a_miss(
    private_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tc = toolchain("gtfn", private_cache_dir)
    stages(tc)
    before = entry_of(tc)
    # another host CPU (the build is for -march=native): another index key and build key
    monkeypatch.setattr(
        "stencilchain.steps.build.compiler_step.host_cpu_identity", lambda: "another CPU"
    )
    monkeypatch.setattr("stencilchain.steps.gtfn.compiler.host_cpu_identity", lambda: "another CPU")
    other = toolchain("gtfn", private_cache_dir)
    assert entry_of(other) != before
    assert stages(other) == [(TRANSLATION, True), (BINDINGS, None), (COMPILATION, False)]
    # other compiler settings: another index key
    flags = toolchain("gtfn", private_cache_dir).workflow
    compilation = flags.compilation
    assert isinstance(compilation, CompilerStep)
    changed = dataclasses.replace(
        flags,
        compilation=dataclasses.replace(compilation, extra_flags=("-DANOTHER",)),  # type: ignore[type-var]
    )
    assert changed.indexed_load is not None and flags.indexed_load is not None
    assert changed.indexed_load.key(indexed_smooth.ir) != flags.indexed_load.key(indexed_smooth.ir)


def test_the_job_count_is_not_in_the_key(private_cache_dir: Path) -> None:
    workflow = toolchain("gtfn", private_cache_dir).workflow
    fewer = workflow.with_build_jobs(1)
    assert fewer.compilation != workflow.compilation
    assert fewer.indexed_load is not None and workflow.indexed_load is not None
    assert fewer.indexed_load.key(indexed_smooth.ir) == workflow.indexed_load.key(indexed_smooth.ir)


@dataclasses.dataclass(frozen=True)
class CountingWorkflow(CompileWorkflow):
    """A workflow whose subclass customizes a stage: the index must not skip it."""

    runs: list[str] = dataclasses.field(default_factory=list, compare=False, repr=False)

    def bind(self, source: Any, hook: Any = None) -> Any:
        self.runs.append(source.entry_point)
        return super().bind(source, hook)


def test_no_index_where_it_would_skip_a_customization(private_cache_dir: Path) -> None:
    stages(toolchain("gtfn", private_cache_dir))
    default = toolchain("gtfn", private_cache_dir).workflow
    mine = CountingWorkflow(
        default.translation,
        default.bindings,
        default.compilation,
        default.translation_cache,
        default.load_index,
    )
    assert mine.indexed_load is None
    mine(indexed_smooth.ir)
    assert mine.runs == ["indexed_smooth"]

    class Opaque:  # a step whose settings are no value: its repr differs in every process
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def __call__(self, source: Any) -> Any:
            return self.inner(source)

    opaque = dataclasses.replace(default, bindings=Opaque(default.bindings))
    assert opaque.indexed_load is None
    off = toolchain("gtfn", private_cache_dir, cached_translation=False).workflow
    assert off.load_index is None and off.indexed_load is None
