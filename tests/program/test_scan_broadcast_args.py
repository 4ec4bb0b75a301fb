"""A scan argument over fewer dimensions than the scan, broadcast along the others: a `Cell`
field in a `(Cell, K)` scan (read at every level), an `(I, J)` field and a `K` field in an
`(I, J, K)` scan; called from a program and from a field operator (computed arguments of
each set of dimensions computed over those dimensions only). The embedded executor
against NumPy loops over the levels; a field over other dimensions is a DefinitionError at
the scan's line."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.errors import DefinitionError

from ._support import assert_located

Cell, Edge = sc.Dimension("Cell"), sc.Dimension("Edge")
I, J = sc.Dimension("I"), sc.Dimension("J")
K = sc.Dimension("K", kind=sc.VERTICAL)
HERE = os.path.abspath(__file__)

CellF = sc.Field[[Cell], sc.float64]
CellK = sc.Field[[Cell, K], sc.float64]
IJ = sc.Field[[I, J], sc.float64]
KF = sc.Field[[K], sc.float64]
IJK = sc.Field[[I, J, K], sc.float64]


@sc.scan_operator(axis=K, forward=True, init=0.0)
def decay(state, rate: CellF, source: CellK):  # type: ignore[no-untyped-def]
    return state * rate + source


@sc.scan_operator(axis=K, forward=False, init=0.0)
def decay_down(state, rate: CellF, source: CellK):  # type: ignore[no-untyped-def]
    return state * rate + source


@sc.program
def column_decay(rate: CellF, source: CellK, up: CellK, down: CellK) -> None:
    decay(rate, source, out=up)
    decay_down(rate, source, out=down)


def decay_reference(rate: np.ndarray, source: np.ndarray, forward: bool = True) -> np.ndarray:
    out = np.zeros_like(source)
    levels = range(source.shape[1]) if forward else range(source.shape[1] - 1, -1, -1)
    for c in range(source.shape[0]):
        state = 0.0
        for k in levels:
            state = state * rate[c] + source[c, k]
            out[c, k] = state
    return out


@sc.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def mixed(state, surface: IJ, profile: KF, f: IJK):  # type: ignore[no-untyped-def]
    total, weighted = state
    return total + f, weighted + surface * profile * f


@sc.field_operator
def mixed_terms(surface: IJ, profile: KF, f: IJK) -> tuple[IJK, IJK]:
    # computed arguments of three sets of dimensions, and a program field passed as it is
    total, weighted = mixed(2.0 * surface, profile + 1.0, f(K + 1))
    return total, weighted - mixed(surface, profile, f)[1]


@sc.program
def mixed_program(surface: IJ, profile: KF, f: IJK, total: IJK, weighted: IJK) -> None:
    mixed_terms(surface, profile, f, out=(total, weighted))


def mixed_reference(
    surface: np.ndarray, profile: np.ndarray, f: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Over levels [0, nk - 1) (f is read at K + 1)."""
    ni, nj, _ = f.shape

    def scan(s: np.ndarray, p: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        total, weighted = np.zeros(g.shape), np.zeros(g.shape)
        for i in range(ni):
            for j in range(nj):
                t = w = 0.0
                for k in range(g.shape[2]):
                    t, w = t + g[i, j, k], w + s[i, j] * p[k] * g[i, j, k]
                    total[i, j, k], weighted[i, j, k] = t, w
        return total, weighted

    shifted_total, shifted_weighted = scan(2.0 * surface, profile[:-1] + 1.0, f[:, :, 1:])
    _, plain_weighted = scan(surface, profile[:-1], f[:, :, :-1])
    return shifted_total, shifted_weighted - plain_weighted


def test_a_cell_field_in_a_cell_k_scan() -> None:
    rng = np.random.default_rng(1)
    rate, source = rng.random(7), rng.random((7, 5))
    up, down = np.full((7, 5), np.nan), np.full((7, 5), np.nan)
    column_decay(rate, source, up, down)
    np.testing.assert_allclose(up, decay_reference(rate, source), rtol=1e-14)
    np.testing.assert_allclose(down, decay_reference(rate, source, forward=False), rtol=1e-14)


def test_surface_and_profile_fields_in_an_ijk_scan() -> None:
    rng = np.random.default_rng(2)
    surface, profile, f = rng.random((4, 3)), rng.random(6), rng.random((4, 3, 6))
    total, weighted = np.full(f.shape, np.nan), np.full(f.shape, np.nan)
    mixed_program(surface, profile, f, total, weighted)
    want = mixed_reference(surface, profile, f)
    np.testing.assert_allclose(total[:, :, :-1], want[0], rtol=1e-13)
    np.testing.assert_allclose(weighted[:, :, :-1], want[1], rtol=1e-13)
    assert np.isnan(total[:, :, -1]).all()


def test_computed_arguments_are_computed_over_their_own_dimensions() -> None:
    text = str(mixed_program.ir)
    assert "mixed_terms__mixed_args0(f) over {I: [0, end), J: [0, end), K: [0, end-1)}" in text
    assert "mixed_terms__mixed_args0_I_J(surface) over {I: [0, end), J: [0, end)}" in text
    assert "mixed_terms__mixed_args0_K(profile) over {K: [0, end-1)}" in text
    temporaries = {p.name: p.type.dims for p in mixed_program.ir.temporaries}  # type: ignore[union-attr]
    assert sorted(temporaries.values(), key=len)[:2] == [(K,), (I, J)]


@sc.scan_operator(axis=K, forward=True, init=0.0)
def gt4py_style(state: float, rate: float, source: float) -> float:
    return state * rate + source


@sc.field_operator
def gt4py_call(rate: CellF, source: CellK) -> CellK:
    return gt4py_style(rate, source)


@sc.program
def gt4py_program(rate: CellF, source: CellK, up: CellK) -> None:
    gt4py_call(rate, source, out=up)


@sc.program
def gt4py_direct(rate: CellF, source: CellK, up: CellK) -> None:
    gt4py_style(rate, source, out=up)


@pytest.mark.parametrize("program", [gt4py_program, gt4py_direct])
def test_values_annotated_float_take_the_dimensions_of_their_argument(program: Any) -> None:
    """As gt4py writes a scan (`rate: float`), a Cell argument of a (Cell, K) call."""
    rng = np.random.default_rng(3)
    rate, source = rng.random(7), rng.random((7, 5))
    up = np.full((7, 5), np.nan)
    program(rate, source, up)
    np.testing.assert_allclose(up, decay_reference(rate, source), rtol=1e-14)


def test_a_field_over_other_dimensions_is_a_definition_error() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.scan_operator(axis=K, init=0.0)
        def bad(state, e: sc.Field[[Edge], sc.float64], f: CellK):  # type: ignore[no-untyped-def]  # L:bad
            return state + f

    assert_located(info.value, "bad", -1, path=HERE)
    assert "'f' and 'e' are over different dimensions" in str(info.value)
    assert "or a subset of them (broadcast)" in str(info.value)
