"""The call path of a compiled program: after the first call, a bound program calls the
module's BoundEntry (checks in C, no Python frame), which binds keyword arguments and
explains a rejected call with the shared checker's message; the module's own entry point
keeps raising its ArgumentMismatch. Small and large domains (below and above the OpenMP
threshold) give the embedded executor's results."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.runtime.toolchain import BoundProgram, Toolchain

I, J = sc.Dimension("I"), sc.Dimension("J")
F64 = sc.Field[[I, J], sc.float64]


@sc.field_operator
def blend(f: F64, g: F64, alpha: sc.float64) -> F64:
    return alpha * f(I + 1) + (1.0 - alpha) * g(J - 1)


@sc.program
def mix(f: F64, g: F64, out: F64, alpha: sc.float64) -> None:
    blend(f, g, alpha, out=out)


@sc.field_operator
def twice(f: F64) -> tuple[F64, F64]:
    return f, 2.0 * f


@sc.program
def split(f: F64, a: F64, b: F64) -> None:
    twice(f, out=(a, b))


TOOLCHAINS = ["gtfn_cpu", "dace_cpu"]


def _toolchain(fixture: str, request: pytest.FixtureRequest) -> Toolchain:
    toolchain: Toolchain = request.getfixturevalue(fixture)
    return toolchain


@pytest.mark.parametrize("fixture", TOOLCHAINS)
@pytest.mark.parametrize("shape", [(4, 3), (300, 260)])  # below and above openmp_threshold
def test_results_equal_embedded(
    fixture: str, shape: tuple[int, int], request: pytest.FixtureRequest
) -> None:
    rng = np.random.default_rng(1)
    f, g = rng.random(shape), rng.random(shape)
    expected, out = np.zeros(shape), np.zeros(shape)
    mix(f, g, expected, 0.25)
    run = mix.with_backend(_toolchain(fixture, request))
    run(f, g, out, 0.25)
    np.testing.assert_array_equal(out, expected)
    out[:] = 0.0
    run(f, g=g, alpha=0.25, out=out)  # keywords, through the BoundEntry
    np.testing.assert_array_equal(out, expected)
    fortran = [np.asfortranarray(a) for a in (f, g)]
    out_f = np.zeros(shape, order="F")
    run(*fortran, out_f, 0.25)
    np.testing.assert_array_equal(out_f, expected)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_a_compiled_bound_program_calls_the_bound_entry(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    toolchain = _toolchain(fixture, request)
    run = mix.with_backend(toolchain)
    assert isinstance(run, BoundProgram)
    assert run.func == run._first_call  # compiles on the first call
    f = np.ones((5, 4))
    run(f, f.copy(), np.zeros_like(f), 0.5)
    assert type(run.func).__name__ == "BoundEntry"
    assert run.compile() is toolchain.compile(mix)
    assert "mix" in repr(run) and toolchain.name in repr(run)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
@pytest.mark.parametrize(
    "bad",
    [
        lambda f, g, out: (f, g, out),  # a missing argument
        lambda f, g, out: (f, g, out, 0.5, 1.0),  # one too many
        lambda f, g, out: (f.astype(np.float32), g, out, 0.5),  # a dtype
        # an output starting below 0 (other starts and sizes: test_own_ranges*)
        lambda f, g, out: (f, g, sc.as_field((I, J), out, start={J: -1}), 0.5),
        lambda f, g, out: (f, g, out[np.newaxis], 0.5),  # an ndim
        lambda f, g, out: (f, g, f, 0.5),  # an output that is an input
        lambda f, g, out: (f, g, out, "0.5"),  # a scalar
        lambda f, g, out: (f.tolist(), g, out, 0.5),  # not an array
    ],
)
def test_rejected_calls_say_what_the_embedded_executor_says(
    fixture: str, bad: object, request: pytest.FixtureRequest
) -> None:
    toolchain = _toolchain(fixture, request)
    f, g, out = np.ones((5, 4)), np.ones((5, 4)), np.zeros((5, 4))
    run = mix.with_backend(toolchain)
    run(f, g, out, 0.5)  # compiled: the BoundEntry's path
    args = bad(f, g, out)  # type: ignore[operator]
    with pytest.raises(sc.ArgumentError) as embedded:
        mix(*args)
    with pytest.raises(sc.ArgumentError) as compiled:
        run(*args)
    assert str(compiled.value) == str(embedded.value)
    # the module's own entry point: its ArgumentMismatch (a TypeError), unexplained
    entry = toolchain.compile(mix)
    mismatch = sys.modules[entry.artifact.module_name].ArgumentMismatch
    with pytest.raises(mismatch):
        entry.entry(*args)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_keyword_mistakes_through_the_bound_entry(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    run = mix.with_backend(_toolchain(fixture, request))
    f, g, out = np.ones((5, 4)), np.ones((5, 4)), np.zeros((5, 4))
    run(f, g, out, 0.5)
    with pytest.raises(sc.ArgumentError, match="unknown keyword argument 'outt'"):
        run(f, g, outt=out, alpha=0.5)
    with pytest.raises(sc.ArgumentError, match="got 'f' twice"):
        run(f, g, out, 0.5, f=f)
    with pytest.raises(sc.ArgumentError, match="dtype"):  # bound, then checked
        run(f, g, out=out.astype(np.float32), alpha=0.5)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_overlapping_outputs_are_rejected_and_disjoint_views_are_not(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    run = split.with_backend(_toolchain(fixture, request))
    f = np.arange(20.0).reshape(5, 4)
    both = np.zeros((10, 4))
    run(f, both[:5], both[5:])  # disjoint halves of one array
    np.testing.assert_array_equal(both[:5], f)
    np.testing.assert_array_equal(both[5:], 2.0 * f)
    with pytest.raises(sc.ArgumentError, match="shares memory"):
        run(f, both[:5], both[4:9])
    empty = np.zeros((0, 4))
    run(empty, empty, empty.copy())  # empty arrays touch no memory


def test_outlined_array_checks_reject_as_the_inlined_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A program of many fields checks each array in a call (OUTLINED_FIELDS): it runs and
    rejects as the inlined checks do, with the embedded executor's messages."""
    from stencilchain.containers import build_container
    from stencilchain.steps.cpp import extension_module

    monkeypatch.setattr(extension_module, "OUTLINED_FIELDS", 1)
    run = mix.with_backend(build_container({}, cache_dir=tmp_path).gtfn.toolchain())
    f, g, out = np.ones((5, 4)), np.ones((5, 4)), np.zeros((5, 4))
    run(f, g, out, 0.5)
    expected = np.zeros((5, 4))
    mix(f, g, expected, 0.5)
    np.testing.assert_array_equal(out, expected)
    for args in [(f, g, out.astype(np.float32), 0.5), (f, np.ones(5), out, 0.5)]:
        with pytest.raises(sc.ArgumentError) as embedded:
            mix(*args)
        with pytest.raises(sc.ArgumentError) as compiled:
            run(*args)
        assert str(compiled.value) == str(embedded.value)
