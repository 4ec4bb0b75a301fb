"""Tuples as values on the compiled toolchains against the embedded executor:
`sc.astype` of a (nested) tuple, tuples as branches of `sc.where` and `sc.concat_where`,
tuple arguments and nested results, dataclasses and NamedTuples, a nested scan state, scans
spelled as gt4py writes them, on every CPU toolchain (with and without transforms and
auto-optimization), in C, Fortran and sliced layouts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from tests.program import test_named_collections as records
from tests.program import test_scan_annotations as annotated
from tests.program import test_scan_nested_state as scans
from tests.program import test_tuple_values as cases

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


def runner(fixture: str, request: pytest.FixtureRequest) -> Callable[[Any], Any]:
    toolchain = request.getfixturevalue(fixture)
    return lambda prog: prog.with_backend(toolchain)


def _layout(array: np.ndarray, kind: str) -> np.ndarray:
    if kind == "sliced":  # every other point along the first axis of a larger array
        big = np.zeros((array.shape[0] * 2, *array.shape[1:]), array.dtype)
        big[::2] = array
        return big[::2]
    return np.ascontiguousarray(array) if kind == "C" else np.asfortranarray(array)


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_astype_of_tuples(fixture: str, kind: str, request: pytest.FixtureRequest) -> None:
    a, b, c = (_layout(v, kind) for v in cases._inputs())
    expected = [np.zeros(cases.SHAPE, np.float32) for _ in range(3)]
    got = [_layout(np.zeros(cases.SHAPE, np.float32), kind) for _ in range(3)]
    cases.astype_program(a, b, c, *expected)
    runner(fixture, request)(cases.astype_program)(a, b, c, *got)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6)


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_tuple_branches(fixture: str, kind: str, request: pytest.FixtureRequest) -> None:
    a, b, c = (_layout(v, kind) for v in cases._inputs())
    top = np.random.default_rng(3).random(cases.SHAPE[1])
    expected = [np.full(cases.SHAPE, np.nan) for _ in range(6)]
    got = [_layout(np.full(cases.SHAPE, np.nan), kind) for _ in range(6)]
    cases.branches_program(a, b, c, top, *expected)
    runner(fixture, request)(cases.branches_program)(a, b, c, top, *got)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=1e-14)
        assert not np.isnan(e).any()


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_tuple_arguments_and_nested_results(
    fixture: str, kind: str, request: pytest.FixtureRequest
) -> None:
    a, b, y = (_layout(v, kind) for v in cases._inputs())
    expected = [np.full(cases.SHAPE, np.nan) for _ in range(4)]
    got = [_layout(np.full(cases.SHAPE, np.nan), kind) for _ in range(4)]
    cases.tuple_program((a, (b, 0.5)), y, *expected)
    run = runner(fixture, request)(cases.tuple_program)
    run((a, (b, 0.5)), y, *got)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=1e-14)
    reference = cases._tuple_reference(a, b, 0.5, y)
    np.testing.assert_allclose(got[3], reference[3], rtol=1e-14)
    again = [_layout(np.full(cases.SHAPE, np.nan), kind) for _ in range(4)]
    run(y=y, x=(a, (b, 0.5)), o1=again[0], o2=again[1], o3=again[2], o4=again[3])
    np.testing.assert_allclose(again[3], expected[3], rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_a_wrong_tuple_element_is_named(fixture: str, request: pytest.FixtureRequest) -> None:
    a, b, y = cases._inputs()
    outs = [np.zeros(cases.SHAPE) for _ in range(4)]
    run = runner(fixture, request)(cases.tuple_program)
    with pytest.raises(sc.errors.ArgumentError, match=r"'x\[1\]\[0\]'"):
        run((a, (b.astype(np.float32), 0.5)), y, *outs)
    with pytest.raises(sc.errors.ArgumentError, match=r"'x\[1\]' must be a tuple"):
        run((a, b), y, *outs)


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_named_collections(fixture: str, kind: str, request: pytest.FixtureRequest) -> None:
    u, v, q = (_layout(a, kind) for a in records._arrays())
    state = records.State(records.Wind(u, v), records.Tracers(q, 0.5))
    expected = records._outs()
    new, out, out2, o3, o4 = records._outs()
    got = (
        records.Wind(_layout(new.u, kind), _layout(new.v, kind)),
        records.Pair(*(_layout(a, kind) for a in out)),
        *(_layout(a, kind) for a in (out2, o3, o4)),
    )
    records.records(state, 0.1, *expected)
    runner(fixture, request)(records.records)(state, 0.1, *got)
    flat_expected = [expected[0].u, expected[0].v, *expected[1], *expected[2:]]
    flat_got = [got[0].u, got[0].v, *got[1], *got[2:]]
    for g, e in zip(flat_got, flat_expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=1e-14)
        assert not np.isnan(e).any()
    with pytest.raises(sc.errors.ArgumentError, match=r"'state\.tracers\.scale'"):
        bad = records.State(records.Wind(u, v), records.Tracers(q, "half"))  # type: ignore[arg-type]
        runner(fixture, request)(records.records)(bad, 0.1, *got)


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_a_nested_scan_state(fixture: str, kind: str, request: pytest.FixtureRequest) -> None:
    a = _layout(np.random.default_rng(5).random(scans.SHAPE), kind)
    expected = scans._outs()
    got = [_layout(o, kind) for o in scans._outs()]
    scans.nested_scan(a, *expected)
    runner(fixture, request)(scans.nested_scan)(a, *got)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-14)


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_gt4py_spelled_scans(fixture: str, kind: str, request: pytest.FixtureRequest) -> None:
    expected = [*annotated.inputs(), *annotated.outputs()]
    got = [_layout(a, kind) for a in (*annotated.inputs(), *annotated.outputs())]
    annotated.gt4py_scans(*expected[:5], 0.25, *expected[5:])
    runner(fixture, request)(annotated.gt4py_scans)(*got[:5], 0.25, *got[5:])
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-13)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_records_as_branches(fixture: str, request: pytest.FixtureRequest) -> None:
    u, v, _ = (_layout(a, "F") for a in records._arrays())
    expected, got = (
        records.Wind32(*(np.zeros(records.SHAPE, np.float32) for _ in range(2))) for _ in range(2)
    )
    records.calming(records.Wind(u, v), 0.5, expected)
    runner(fixture, request)(records.calming)(records.Wind(u, v), 0.5, got)
    np.testing.assert_array_equal(got.u, expected.u)
    np.testing.assert_array_equal(got.v, expected.v)
