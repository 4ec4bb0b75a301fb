"""The compile workflow is the one place that runs the steps: whatever the container
provides (a step, a workflow, pools, metrics) is what a toolchain uses, and builds of
different programs run side by side."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dependency_injector import providers

import stencilchain as sc
from stencilchain.containers import build_container
from stencilchain.runtime.metrics import MetricsRegistry
from stencilchain.runtime.pools import CompiledProgramPools
from stencilchain.steps.workflow import (
    BINDINGS,
    COMPILATION,
    INDEX,
    STAGES,
    TRANSLATION,
    CompileWorkflow,
    StageReport,
)

I, J = sc.Dimension("I"), sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]


@sc.field_operator
def plus_one(f: F) -> F:
    return f + 1.0


@sc.field_operator
def doubled(f: F) -> F:
    return 2.0 * f


@sc.program
def add_one(f: F, out: F) -> None:
    plus_one(f, out=out)


@sc.program
def double(f: F, out: F) -> None:
    doubled(f, out=out)


def family_container(family: str, cache: Path) -> Any:
    if family == "dace":
        pytest.importorskip("dace", reason="the DaCe toolchains need the `dace` extra")
    return getattr(build_container({}, cache_dir=cache), family)


@dataclasses.dataclass(frozen=True)
class MarkedWorkflow(CompileWorkflow):
    """A workflow of the user's: it says that it ran."""

    runs: list[str] = dataclasses.field(default_factory=list, compare=False, repr=False)

    def translate(self, program: Any, hook: Any = None) -> Any:
        self.runs.append(program.name)
        return super().translate(program, hook)


@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_an_override_of_compile_workflow_lands_in_the_toolchain(
    family: str, session_cache_dir: Path
) -> None:
    c = family_container(family, session_cache_dir)
    default = c.compile_workflow()
    mine = MarkedWorkflow(
        default.translation, default.bindings, default.compilation, default.translation_cache
    )
    with c.compile_workflow.override(providers.Object(mine)):
        toolchain = c.toolchain()
    assert toolchain.workflow is mine
    toolchain.compile(add_one)
    assert mine.runs == ["add_one"]
    f = np.arange(12.0).reshape(3, 4)
    out = np.zeros_like(f)
    add_one.with_backend(toolchain)(f, out)
    np.testing.assert_array_equal(out, f + 1.0)


@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_a_workflow_that_is_not_one_is_refused(family: str, session_cache_dir: Path) -> None:
    c = family_container(family, session_cache_dir)
    with (
        c.compile_workflow.override(providers.Object(lambda program: None)),
        pytest.raises(TypeError, match="not a CompileWorkflow"),
    ):
        c.toolchain()


def test_the_hook_sees_every_stage_and_its_cache(tmp_path: Path) -> None:
    toolchain = family_container("gtfn", tmp_path).toolchain()
    cold: list[StageReport] = []
    start = time.perf_counter()
    toolchain.workflow(add_one.ir, cold.append)
    elapsed = time.perf_counter() - start
    assert [r.stage for r in cold] == list(STAGES)
    assert [r.cached for r in cold] == [False, None, False]
    # each stage's own time, in seconds: positive, and together within the run's
    assert all(r.seconds > 0 for r in cold)
    assert sum(r.seconds for r in cold) <= elapsed
    indexed: list[StageReport] = []
    artifact = toolchain.workflow(add_one.ir, indexed.append)
    assert [(r.stage, r.cached) for r in indexed] == [(INDEX, True)]  # the load index's hit
    assert indexed[0].output == artifact and not artifact.built
    assert indexed[0].seconds < cold[-1].seconds  # loading a finished build is not building it
    warm: list[StageReport] = []
    unindexed = dataclasses.replace(toolchain.workflow, load_index=None)
    assert unindexed(add_one.ir, warm.append) == artifact
    assert warm[-1].seconds < cold[-1].seconds
    assert [r.cached for r in warm] == [True, None, True]
    assert warm[-1].output == artifact and not artifact.built
    assert warm[0].output == cold[0].output  # the same ProgramSource, from the cache
    assert {r.stage for r in warm} == {TRANSLATION, BINDINGS, COMPILATION}


def test_the_workflow_knows_its_bare_translation_and_its_cache(tmp_path: Path) -> None:
    c = family_container("gtfn", tmp_path)
    workflow = c.compile_workflow()
    assert workflow.translation == c.translation()
    assert workflow.translation_cache is not None
    assert workflow.translation_cache.root == c.cache_location().translations
    assert workflow.cached_source(add_one.ir) is None  # a lookup writes nothing
    assert workflow.cached_source(add_one.ir) is None
    source = workflow.translate(add_one.ir)
    assert workflow.cached_source(add_one.ir) == source
    key = workflow.translation_key(add_one.ir)
    assert key is not None and workflow.translation_cache.get(key) is not None
    off = build_container({}, cache_dir=tmp_path, cached_translation=False).gtfn
    assert off.compile_workflow().translation_key(add_one.ir) is None


class Rendezvous:
    """A compilation step that waits, inside the build, until `parties` builds are inside
    at the same time (a deadline turns a serialized build into a failure, not a hang)."""

    def __init__(self, inner: Any, parties: int) -> None:
        self.inner = inner
        self.barrier = threading.Barrier(parties, timeout=120)

    def __call__(self, extension: Any, /) -> Any:
        self.barrier.wait()
        return self.inner(extension)


def test_two_programs_build_at_the_same_time_in_one_process(tmp_path: Path) -> None:
    c = family_container("gtfn", tmp_path)
    rendezvous = Rendezvous(c.compilation(), parties=2)
    with c.compilation.override(providers.Object(rendezvous)):
        toolchain = c.toolchain()
    errors: list[BaseException] = []

    def compile_one(program: Any) -> None:
        try:
            toolchain.compile(program)
        except BaseException as error:  # threading.BrokenBarrierError when serialized
            errors.append(error)

    threads = [threading.Thread(target=compile_one, args=(p,)) for p in (add_one, double)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert set(toolchain.pool) == {add_one.fingerprint(), double.fingerprint()}


def test_one_program_is_built_once_by_concurrent_callers(tmp_path: Path) -> None:
    c = family_container("gtfn", tmp_path)
    calls: list[str] = []
    inner = c.compilation()

    def counting(extension: Any, /) -> Any:
        calls.append(extension.entry_point)
        return inner(extension)

    with c.compilation.override(providers.Object(counting)):
        toolchain = c.toolchain()
    results: list[Any] = []
    threads = [
        threading.Thread(target=lambda: results.append(toolchain.compile(add_one)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == ["add_one"]
    assert len(results) == 4 and all(r is results[0] for r in results)


def test_pools_and_metrics_are_the_containers(tmp_path: Path) -> None:
    c = build_container({}, cache_dir=tmp_path, metrics=True)
    gtfn = c.gtfn.toolchain()
    assert gtfn.pools is c.pools() and gtfn.metrics is c.metrics()
    assert c.gtfn.toolchain().pools is gtfn.pools  # shared by the toolchains it builds
    mine_pools: CompiledProgramPools[Any] = CompiledProgramPools()
    mine_metrics = MetricsRegistry()
    with (
        c.pools.override(providers.Object(mine_pools)),
        c.metrics.override(providers.Object(mine_metrics)),
    ):
        hosted = c.gtfn.toolchain()
    assert hosted.pools is mine_pools and hosted.metrics is mine_metrics
    f = np.ones((4, 4))
    add_one.with_backend(hosted)(f, np.zeros_like(f))
    assert mine_metrics.entry(hosted.name, "add_one").call_count == 1
    assert add_one.fingerprint() in mine_pools.pool(hosted.identity)
    assert add_one.fingerprint() not in gtfn.pool  # the other registry saw nothing


def test_the_prebuilt_backends_share_one_metrics_registry() -> None:
    from stencilchain import backends

    assert backends.run_gtfn_cpu.metrics is backends.METRICS
    assert backends.run_gtfn_cpu_no_transforms.metrics is backends.METRICS
    assert backends.run_gtfn_cpu.pools is backends.run_gtfn_cpu_no_transforms.pools
