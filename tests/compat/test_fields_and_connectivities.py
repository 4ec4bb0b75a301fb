"""gt4py's field and connectivity constructors: as_field with dims or a domain and origin=,
zeros/ones/full/empty (also under constructors.), asnumpy/ndarray/domain; as_connectivity
in both spellings, immutable and checked once when made."""

from __future__ import annotations

import re

import numpy as np
import pytest

import stencilchain as sc
import stencilchain.compat.gt4py as gtx

Cell = gtx.Dimension("Cell")
Edge = gtx.Dimension("Edge")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
C2EDim = gtx.Dimension("C2EDim", kind=gtx.DimensionKind.LOCAL)


def test_dimension_kinds_are_stencilchains() -> None:
    assert K.kind == sc.VERTICAL and C2EDim.is_local and Cell.kind == sc.HORIZONTAL
    assert isinstance(K, sc.Dimension)


def test_as_field_keeps_the_array_and_gives_its_domain() -> None:
    a = np.arange(12.0).reshape(3, 4)
    f = gtx.as_field([Cell, K], a)
    assert isinstance(f, sc.FieldValue)
    assert f.ndarray is a and f.asnumpy() is a
    assert f.domain == {Cell: (0, 3), K: (0, 4)}
    with_origin = gtx.as_field((Cell, K), a, origin={K: 1})
    assert with_origin.domain == {Cell: (0, 3), K: (-1, 3)}  # gt4py's origin: start = -origin
    ranged = gtx.as_field({Cell: (0, 3), K: (-1, 3)}, a)
    assert ranged.start == (0, -1)
    converted = gtx.as_field([Cell, K], a, dtype=gtx.float32)
    assert converted.dtype == np.float32 and converted.ndarray is not a


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: gtx.as_field([Cell], np.zeros((2, 2))), "1 dimension(s) for an array of shape"),
        (lambda: gtx.as_field({Cell: 3}, np.zeros(2)), "the domain gives Cell 3 points"),
        (lambda: gtx.as_field([Cell], np.zeros(2), origin={K: 1}), "origin= names K"),
        (lambda: gtx.as_field([Cell], np.zeros(2, np.int8)), None),
        (lambda: gtx.zeros([Cell]), "the domain needs sizes"),
        (lambda: gtx.zeros({Cell: 2}, dtype=gtx.uint8), "dtype uint8 is not supported"),
    ],
)
def test_bad_fields(call: object, words: str | None) -> None:
    if words is None:  # an int8 array is kept as it is; a program refuses it at the call
        call()  # type: ignore[operator]
        return
    with pytest.raises(sc.StencilchainError, match=re.escape(words)):
        call()  # type: ignore[operator]


def test_constructors() -> None:
    for module in (gtx, gtx.constructors):
        z = module.zeros({Cell: 3, K: 2}, dtype=gtx.float32)
        assert z.dtype == np.float32 and not z.asnumpy().any() and z.shape == (3, 2)
        o = module.ones({Cell: 3}, dtype=gtx.int32)
        assert o.dtype == np.int32 and (o.asnumpy() == 1).all()
        f = module.full({Cell: 2, K: (-1, 3)}, 2.5)
        assert f.dtype == np.float64 and (f.asnumpy() == 2.5).all() and f.start == (0, -1)
        e = module.empty({K: 4})
        assert e.shape == (4,) and e.dtype == np.float64


def test_fields_are_program_arguments() -> None:
    @gtx.field_operator
    def twice(
        a: gtx.Field[gtx.Dims[Cell, K], gtx.float64],
    ) -> gtx.Field[gtx.Dims[Cell, K], gtx.float64]:
        return 2.0 * a

    a = gtx.as_field([Cell, K], np.arange(6.0).reshape(2, 3))
    out = gtx.zeros({Cell: 2, K: 3})
    twice(a, out=out, offset_provider={})
    np.testing.assert_array_equal(out.asnumpy(), 2.0 * a.asnumpy())


def test_as_connectivity_both_spellings() -> None:
    table = np.array([[0, 1, 2], [2, -1, 1]], np.int32)
    first = gtx.as_connectivity([Cell, C2EDim], Edge, table, skip_value=-1)
    second = gtx.as_connectivity(
        domain={Cell: 2, C2EDim: 3}, codomain=Edge, data=table, skip_value=-1
    )
    for conn in (first, second):
        assert conn.max_neighbors == 3 and conn.skip_value == -1 and conn.codomain == Edge
        np.testing.assert_array_equal(conn.asnumpy(), table)
        assert conn.spec.skip_values and conn.spec.dtype == "int32"


def test_a_connectivity_is_immutable_and_checked_once() -> None:
    table = np.array([[0, 1], [1, 0]], np.int64)
    conn = gtx.as_connectivity([Cell, C2EDim], Edge, table)
    table[0, 0] = 99  # the caller's array is not the connectivity's
    assert conn.ndarray[0, 0] == 0
    with pytest.raises(ValueError):
        conn.ndarray[0, 0] = 5
    with pytest.raises(AttributeError):
        conn.skip_value = -1  # type: ignore[misc]
    assert not conn.spec.skip_values and conn.spec.dtype == "int64"


@pytest.mark.parametrize(
    ("args", "kwargs", "words"),
    [
        (([Cell, C2EDim], Edge, np.array([[0, -1]], np.int32)), {}, "give skip_value=-1"),
        (([Cell, C2EDim], Edge, np.array([[0, -2]], np.int32)), {"skip_value": -1}, "is -2"),
        (([Cell, C2EDim], Edge, np.zeros((2, 2))), {}, "int32 or int64"),
        (([Cell, C2EDim], Edge, np.zeros(3, np.int32)), {}, "must be 2-D"),
        (([Cell, K], Edge, np.zeros((2, 2), np.int32)), {}, "LOCAL"),
        (({Cell: 3, C2EDim: 2}, Edge, np.zeros((2, 2), np.int32)), {}, "domain= says"),
        (([Cell, C2EDim], Edge, np.zeros((2, 2), np.int32)), {"skip_value": 7}, "-1 or None"),
    ],
)
def test_bad_connectivities(
    args: tuple[object, ...], kwargs: dict[str, object], words: str
) -> None:
    with pytest.raises(sc.ArgumentError, match=words):
        gtx.as_connectivity(*args, **kwargs)  # type: ignore[arg-type]


def test_an_input_with_an_origin_is_read_and_an_output_with_one_refused_by_name() -> None:
    @gtx.field_operator
    def same(
        a: gtx.Field[gtx.Dims[Cell, K], gtx.float64],
    ) -> gtx.Field[gtx.Dims[Cell, K], gtx.float64]:
        return a

    data = np.arange(8.0).reshape(2, 4)
    a = gtx.as_field([Cell, K], data, origin={K: 1})  # over K [-1, 3)
    out = np.full((2, 4), -7.0)
    same(a, out=out, offset_provider={})  # the inferred domain: K [0, 3)
    np.testing.assert_array_equal(out, np.concatenate([data[:, 1:], np.full((2, 1), -7.0)], 1))
    with_origin = gtx.as_field([Cell, K], np.zeros((2, 4)), origin={K: 1})
    with pytest.raises(sc.ArgumentError, match=r"'out'.*below 0, for an output"):
        same(gtx.as_field([Cell, K], data), out=with_origin, offset_provider={})
