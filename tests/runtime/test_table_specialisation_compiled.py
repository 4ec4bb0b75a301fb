"""Tables of any width for one program on the GTFN toolchains (with and without
transforms) and the DaCe ones (auto-optimized or not): the program of
tests/program/test_table_specialisation.py called with tables of 3, 4 and 6 columns, with
and without -1 entries, in C, Fortran and sliced layouts, against the embedded executor and the
NumPy reference; one compiled specialisation per (width, skip values)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.program import test_table_specialisation as m
from tests.runtime.test_own_ranges_compiled import _layout

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


@pytest.fixture(scope="module", params=TOOLCHAINS)
def run(request: pytest.FixtureRequest) -> Any:
    return m.mesh_sums.with_backend(request.getfixturevalue(request.param))


@pytest.mark.parametrize("layout", ["C", "F", "sliced"])
@pytest.mark.parametrize(("width", "skips"), [(3, False), (4, True), (6, True)])
def test_tables_of_each_width(run: Any, layout: str, width: int, skips: bool) -> None:
    e, w, table = m.inputs(width, skips, seed=width)
    e, w, table = (_layout(np.asarray(a), layout) for a in (e, w, table))
    outs = [_layout(np.full((9, 4), np.nan), layout) for _ in range(2)]
    embedded = [_layout(np.full((9, 4), np.nan), layout) for _ in range(2)]
    run(e, w, table, *outs)
    m.mesh_sums(e, w, table, *embedded)
    for got, want, reference in zip(outs, embedded, m.reference(e, w, table)):
        np.testing.assert_allclose(got, want, rtol=1e-14)
        np.testing.assert_allclose(got, reference, rtol=1e-14)


def test_one_compiled_specialisation_per_key(run: Any) -> None:
    widths = [(3, False), (4, True), (3, False), (3, True), (4, True)]
    before = set(run.executors)  # the module's run may have made some already
    for width, skips in widths:
        e, w, table = m.inputs(width, skips, seed=7 + width)
        outs = [np.zeros((9, 4)) for _ in range(2)]
        run(e, w, c2e=table, total=outs[0], spread=outs[1])
        for got, reference in zip(outs, m.reference(e, w, table)):
            np.testing.assert_allclose(got, reference, rtol=1e-14)
    made = {((3, False),), ((3, True),), ((4, True),)}
    assert set(run.executors) == before | made


def test_bad_table_leaves_outputs_alone(run: Any) -> None:
    e, w, table = m.inputs(3, True)
    outs = [np.zeros((9, 4)) for _ in range(2)]
    with pytest.raises(m.ArgumentError, match="field operator gather reads slot C2E"):
        run(e, w[:, :1].copy(), table[:, :1].copy(), *outs)
    bad = table.copy()
    bad[4, 2] = 13
    with pytest.raises(m.ArgumentError, match=r"argument 'c2e' of mesh_sums\(\): table of C2E holds 13 at \(4, 2\)"):  # fmt: skip
        run(e, w, bad, *outs)
    assert all((o == 0).all() for o in outs)


@pytest.mark.parametrize("fixture", ["gtfn_cpu", "dace_cpu"])
def test_compiled_ahead_without_jit(request: pytest.FixtureRequest, fixture: str) -> None:
    run = m.mesh_sums.with_backend(request.getfixturevalue(fixture), jit=False)
    run.compile(c2e=[(4, True), (3, False)])
    for width, skips in [(4, True), (3, False)]:
        e, w, table = m.inputs(width, skips, seed=20 + width)
        outs = [np.zeros((9, 4)) for _ in range(2)]
        run(e, w, table, *outs)
        for got, reference in zip(outs, m.reference(e, w, table)):
            np.testing.assert_allclose(got, reference, rtol=1e-14)
    e, w, table = m.inputs(6, True)
    with pytest.raises(m.ArgumentError, match=r"no specialisation for the tables c2e=\(6, True\)"):
        run(e, w, table, np.zeros((9, 4)), np.zeros((9, 4)))
