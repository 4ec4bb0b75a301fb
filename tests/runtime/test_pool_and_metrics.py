"""The compiled-program pool of a toolchain, and the metrics registry."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

import stencilchain as sc
from stencilchain.containers import build_container

I, J = sc.Dimension("I"), sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]


@sc.field_operator
def scaled(f: F, a: sc.float64) -> F:
    return a * f(I + 1) - f


@sc.program
def scale(f: F, out: F, a: sc.float64) -> None:
    scaled(f, a, out=out)


def test_pool_compiles_a_program_once_per_toolchain(gtfn_cpu) -> None:  # type: ignore[no-untyped-def]
    first = gtfn_cpu.compile(scale)
    assert gtfn_cpu.compile(scale) is first
    assert gtfn_cpu.compile(scale.ir) is first  # keyed by the fingerprint, not the object
    bound_a = scale.with_backend(gtfn_cpu)
    bound_b = scale.with_backend(gtfn_cpu)
    f = np.arange(20.0).reshape(4, 5)
    out_a, out_b, expected = np.zeros_like(f), np.zeros_like(f), np.zeros_like(f)
    bound_a(f, out_a, 2.0)
    bound_b(f, out_b, 2.0)
    scale(f, expected, 2.0)
    assert bound_a.compile() is first and bound_b.compile() is first
    np.testing.assert_array_equal(out_a, expected)
    np.testing.assert_array_equal(out_b, expected)


def test_metrics_are_collected_when_enabled(private_cache_dir: Path) -> None:
    # a cache of its own: in the session's, an earlier test's build of `scale` would be a
    # load index hit (one "index" stage instead of the three steps)
    container = build_container({}, cache_dir=private_cache_dir, metrics=True)
    metrics = container.metrics()
    toolchain_name = "run_gtfn_cpu_metrics_test"
    container.gtfn.name.override(toolchain_name)
    toolchain = container.gtfn.toolchain()
    assert toolchain.metrics is metrics  # the container's registry, shared by its toolchains
    bound = scale.with_backend(toolchain)
    f = np.ones((6, 6))
    out = np.zeros_like(f)
    start = time.perf_counter()
    for _ in range(3):
        bound(f, out, 1.5)
    elapsed = time.perf_counter() - start
    entry = metrics.entry(toolchain_name, "scale")
    assert entry.call_count == 3
    assert entry.call_time > 0
    assert set(entry.steps) == {"translation", "bindings", "compilation"}
    # each time in seconds: positive, and all of them within the calls that ran them
    assert all(t > 0 for t in entry.steps.values())
    assert sum(entry.steps.values()) + entry.load_time + entry.call_time <= elapsed
    rows = json.loads(metrics.as_json())
    assert {"toolchain": toolchain_name, "program": "scale"}.items() <= rows[0].items()
    table = metrics.table()
    assert "scale" in table and toolchain_name in table and "mean call" in table


def test_metrics_are_off_by_default(gtfn_cpu) -> None:  # type: ignore[no-untyped-def]
    gtfn_cpu.metrics.clear()
    f = np.ones((6, 6))
    scale.with_backend(gtfn_cpu)(f, np.zeros_like(f), 1.0)
    assert json.loads(gtfn_cpu.metrics.as_json()) == []
