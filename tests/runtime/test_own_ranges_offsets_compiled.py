"""Data-dependent offsets over fields over their own ranges on every CPU toolchain, in C,
Fortran and sliced layouts, equal to the embedded executor (which
tests/program/test_own_ranges_offsets.py checks against NumPy): half levels read up to
the top one, a shorter field and one starting after 0 read only through the offsets, and
an offset leaving a field's range: the embedded executor's ArgumentError, the output
untouched."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.errors import ArgumentError
from tests.program import test_own_ranges_offsets as cases
from tests.runtime.test_own_ranges_compiled import TOOLCHAINS, _both, _layout

Cell, K = cases.Cell, cases.K
N_CELLS, NLEV = cases.N_CELLS, cases.NLEV


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_offsets_over_own_ranges(fixture: str, kind: str, request: pytest.FixtureRequest) -> None:
    toolchain = request.getfixturevalue(fixture)
    rng = np.random.default_rng(11)
    w = rng.random((N_CELLS, NLEV + 1))
    to_top = cases.offsets(rng, NLEV, 0, NLEV + 1)

    def out() -> np.ndarray:
        return _layout(np.full((N_CELLS, NLEV), -7.0), kind)

    _both(
        cases.half_level_offsets.with_backend(toolchain),
        cases.half_level_offsets,
        lambda: (_layout(w, kind), _layout(to_top, kind), out()),
        (2,),
    )
    wk = rng.random((N_CELLS, NLEV))
    for start in (0, 2, -1):  # a shorter field, one starting after 0, one below 0
        theta = rng.random((N_CELLS, NLEV - 1 - start))
        off = cases.offsets(rng, NLEV, max(start, 0), NLEV - 1)

        def shorter(theta: np.ndarray = theta, start: int = start, off: Any = off) -> Any:
            field = sc.as_field((Cell, K), _layout(theta, kind), start={K: start})
            return field, _layout(off, kind), _layout(wk, kind), out()

        _both(
            cases.shorter_through_offsets.with_backend(toolchain),
            cases.shorter_through_offsets,
            shorter,
            (3,),
        )


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_an_offset_outside_a_fields_range(fixture: str, request: pytest.FixtureRequest) -> None:
    toolchain = request.getfixturevalue(fixture)
    rng = np.random.default_rng(12)
    theta = rng.random((N_CELLS, NLEV - 3))
    off = cases.offsets(rng, NLEV, 2, NLEV - 1)
    off[3, 4] = 1 - 4
    w = rng.random((N_CELLS, NLEV))
    # a good call of the same shapes first: the bad one is checked all the same
    good = cases.offsets(rng, NLEV, 2, NLEV - 1)
    compiled = cases.shorter_through_offsets.with_backend(toolchain)
    compiled(sc.as_field((Cell, K), theta, start={K: 2}), good, w, np.zeros((N_CELLS, NLEV)))
    messages = []
    for run in (
        cases.shorter_through_offsets,
        cases.shorter_through_offsets.with_backend(toolchain),
    ):
        out = np.full((N_CELLS, NLEV), -7.0)
        with pytest.raises(ArgumentError) as info:
            run(sc.as_field((Cell, K), theta, start={K: 2}), off, w, out)
        np.testing.assert_array_equal(out, -7.0)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "outside [2, 5), the range of 'theta'" in messages[0]
    half = rng.random((N_CELLS, NLEV + 1))
    past = cases.offsets(rng, NLEV, 0, NLEV + 1)
    past[0, 0] = NLEV + 1
    out = np.full((N_CELLS, NLEV), -7.0)
    with pytest.raises(ArgumentError, match=f"reads index {NLEV + 1} along K, outside"):
        cases.half_level_offsets.with_backend(toolchain)(half, past, out)
    np.testing.assert_array_equal(out, -7.0)
