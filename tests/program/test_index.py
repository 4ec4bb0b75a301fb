"""`sc.index(dim)` at definition: its type, its printout, and its misuses at the user's line."""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program import ir

from ._support import assert_error_at

I, K = sc.Dimension("I"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]
FK = sc.Field[[K], sc.float64]
HERE = os.path.abspath(__file__)


assert_at = functools.partial(assert_error_at, path=HERE)


def test_index_is_broadcast_and_printed() -> None:
    @sc.field_operator
    def boundary(a: F, b: F) -> F:
        return sc.where(sc.index(K) == 0, a, b)

    @sc.field_operator
    def level(w: FK) -> FK:
        return w * sc.astype(sc.index(K), sc.float64)

    @sc.program
    def p(a: F, b: F, out: F, w: FK, wk: FK) -> None:
        boundary(a, b, out=out)
        level(w, out=wk)

    assert "where(broadcast((index(K) == 0:int64), (I, K)), a, b)" in str(p.ir)
    a, b = np.ones((2, 3)), np.zeros((2, 3))
    out, w, wk = np.empty((2, 3)), np.full(3, 2.0), np.empty(3)
    p(a, b, out, w, wk)
    np.testing.assert_array_equal(out, [[1.0, 0.0, 0.0]] * 2)
    np.testing.assert_array_equal(wk, [0.0, 2.0, 4.0])


def test_index_of_something_else_than_a_dimension_is_refused() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def f(a: F) -> F:
            return a + sc.index("K")  # L:name

    assert_at(info.value, "name", "sc.index takes a sc.Dimension", "'K'")


def test_index_along_a_dimension_the_result_lacks_is_refused() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.field_operator
        def f(w: FK) -> FK:
            return w + sc.astype(sc.index(I), sc.float64)  # L:other

    assert_at(info.value, "other", "dimensions")


def test_index_inside_a_scan_is_refused() -> None:
    with pytest.raises(sc.DefinitionError) as info:

        @sc.scan_operator(axis=K, init=0.0)
        def s(total, a: F):  # type: ignore[no-untyped-def]
            return total + a * sc.astype(sc.index(K), sc.float64)  # L:scan

    assert_at(info.value, "scan", "sc.index inside scan operator s", "as an argument")


def test_the_node() -> None:
    assert sc.index(K).expr == ir.Index(K, ir.FieldType((K,), sc.int64))
