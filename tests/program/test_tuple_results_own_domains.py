"""A tuple result whose fields are over different dimensions, written to out=(x, y), each
field over its own domain (given per field or inferred per field): embedded executor
against NumPy, and the misuse errors."""

from __future__ import annotations

import numpy as np
import pytest

import stencilchain as sc

Cell = sc.Dimension("Cell")
Edge = sc.Dimension("Edge")
K = sc.Dimension("K", kind=sc.VERTICAL)
N_CELL, N_EDGE, N_K = 5, 7, 6
CK = sc.Field[[Cell, K], sc.float64]
EK = sc.Field[[Edge, K], sc.float64]
E = sc.Field[[Edge], sc.float64]


@sc.field_operator
def cell_and_edge(a: CK, b: EK) -> tuple[CK, EK, CK]:
    return a(K + 1) - a, 2.0 * b(K - 1), a + 1.0


@sc.program
def inferred(a: CK, b: EK, x: CK, y: EK, z: CK) -> None:
    cell_and_edge(a, b, out=(x, y, z))


@sc.program
def given_per_field(a: CK, b: EK, x: CK, y: EK, z: CK) -> None:
    cell_and_edge(a, b, out=(x, y, z), domain=({K: (1, 4)}, {Edge: (2, 5), K: (2, -1)}, None))


@sc.program
def one_dict(a: CK, b: EK, x: CK, y: EK, z: CK) -> None:
    cell_and_edge(a, b, out=(x, y, z), domain={Cell: (1, 3), K: (1, 5)})


@sc.field_operator
def column_and_surface(a: CK, e: E) -> tuple[CK, E]:
    return a * 3.0, e - 1.0


@sc.program
def through_temporaries(a: CK, e: E, x: CK, y: E) -> None:
    t, s = column_and_surface(a, e)
    column_and_surface(t, s, out=(x, y))


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(21)
    return rng.random((N_CELL, N_K)), rng.random((N_EDGE, N_K))


def outputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.full((N_CELL, N_K), -9.0), np.full((N_EDGE, N_K), -9.0), np.full((N_CELL, N_K), -9.0)


def expected_inferred(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    x, y, z = outputs()
    x[:, :-1] = a[:, 1:] - a[:, :-1]  # reads K+1: K in [0, n-1)
    y[:, 1:] = 2.0 * b[:, :-1]  # reads K-1: K in [1, n), over all edges
    z[:] = a + 1.0
    return x, y, z


def test_each_field_over_its_own_inferred_domain() -> None:
    a, b = inputs()
    got = outputs()
    inferred(a, b, *got)
    for g, e in zip(got, expected_inferred(a, b), strict=True):
        np.testing.assert_array_equal(g, e)


def expected_given(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    x, y, z = outputs()
    x[:, 1:4] = a[:, 2:5] - a[:, 1:4]
    y[2:5, 2 : N_K - 1] = 2.0 * b[2:5, 1 : N_K - 2]
    z[:] = a + 1.0  # None: inferred
    return x, y, z


def test_a_domain_per_field() -> None:
    a, b = inputs()
    got = outputs()
    given_per_field(a, b, *got)
    for g, e in zip(got, expected_given(a, b), strict=True):
        np.testing.assert_array_equal(g, e)


def expected_one_dict(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    x, y, z = outputs()
    x[1:3, 1:5] = a[1:3, 2:6] - a[1:3, 1:5]  # reads K+1 up to 5 < N_K
    y[:, 1:5] = 2.0 * b[:, 0:4]  # K from the dict, Edge inferred
    z[1:3, 1:5] = a[1:3, 1:5] + 1.0
    return x, y, z


def test_one_domain_dict_gives_each_field_its_dimensions() -> None:
    a, b = inputs()
    got = outputs()
    one_dict(a, b, *got)
    for g, e in zip(got, expected_one_dict(a, b), strict=True):
        np.testing.assert_array_equal(g, e)


def test_temporaries_over_different_dimensions() -> None:
    a, _ = inputs()
    e = np.random.default_rng(2).random(N_EDGE)
    x, y = np.zeros((N_CELL, N_K)), np.zeros(N_EDGE)
    through_temporaries(a, e, x, y)
    np.testing.assert_array_equal(x, (a * 3.0) * 3.0)
    np.testing.assert_array_equal(y, e - 2.0)


def test_each_field_is_its_own_call() -> None:
    calls = inferred.ir.calls
    assert [c.outs for c in calls] == [("x",), ("y",), ("z",)]
    assert [dd.dim for dd in calls[1].domain.dims] == [Edge, K]


def test_a_domain_tuple_of_the_wrong_length() -> None:
    with pytest.raises(sc.DefinitionError, match="tuple of 2 domains, but the call writes 3"):

        @sc.program
        def bad(a: CK, b: EK, x: CK, y: EK, z: CK) -> None:
            cell_and_edge(a, b, out=(x, y, z), domain=({K: (1, 4)}, None))


def test_a_dimension_of_no_field() -> None:
    Vertex = sc.Dimension("Vertex")
    with pytest.raises(sc.DefinitionError, match="Vertex, which is not a dimension of any"):

        @sc.program
        def bad(a: CK, b: EK, x: CK, y: EK, z: CK) -> None:
            cell_and_edge(a, b, out=(x, y, z), domain={Vertex: (0, 2)})


def test_a_domain_of_a_field_that_is_not_a_dict() -> None:
    with pytest.raises(sc.DefinitionError, match="must be a dict"):

        @sc.program
        def bad(a: CK, b: EK, x: CK, y: EK, z: CK) -> None:
            cell_and_edge(a, b, out=(x, y, z), domain=({K: (1, 4)}, [1, 2], None))


def test_a_domain_that_reads_outside_names_the_field_call() -> None:
    with pytest.raises(sc.DefinitionError, match="domain of K starts at 0 but the call reads K-1"):

        @sc.program
        def bad(a: CK, b: EK, x: CK, y: EK, z: CK) -> None:
            cell_and_edge(a, b, out=(x, y, z), domain=(None, {K: (0, 3)}, None))


def test_out_of_the_wrong_type() -> None:
    with pytest.raises(sc.DefinitionError, match=r"out\[1\] needs a program field"):

        @sc.program
        def bad(a: CK, b: EK, x: CK, y: EK, z: CK) -> None:
            cell_and_edge(a, b, out=(x, z, y))


def test_used_inside_a_field_operator_is_a_definition_error() -> None:
    with pytest.raises(sc.DefinitionError, match="written by a @program's call"):

        @sc.field_operator
        def inner(a: CK, b: EK) -> CK:
            return cell_and_edge(a, b)[0]  # type: ignore[no-any-return]


@sc.field_operator
def nested_result(a: CK, b: EK) -> tuple[tuple[CK, EK], CK]:
    return (a * 2.0, b + 1.0), a - 1.0


def test_a_domain_nested_as_out_is() -> None:
    """gt4py's `domain=(({...}, {...}), {...})` for `out=((x, y), z)`: one domain per field,
    nested as out= is; a dict in place of a nested tuple is the domain of each field under it."""

    @sc.program
    def nested(a: CK, b: EK, x: CK, y: EK, z: CK, stop: sc.int32) -> None:
        nested_result(
            a, b, out=((x, y), z), domain=(({K: (1, stop)}, {Edge: (2, 5)}), {Cell: (0, 2)})
        )

    @sc.program
    def shared(a: CK, b: EK, x: CK, y: EK, z: CK) -> None:
        nested_result(a, b, out=((x, y), z), domain=({K: (2, 4)}, None))

    a, b = inputs()
    x, y, z = outputs()
    nested(a, b, x, y, z, np.int32(4))
    want_x, want_y, want_z = outputs()
    want_x[:, 1:4] = 2.0 * a[:, 1:4]
    want_y[2:5] = b[2:5] + 1.0
    want_z[0:2] = a[0:2] - 1.0
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(z, want_z)
    x, y, z = outputs()
    shared(a, b, x, y, z)
    want_x, want_y, _ = outputs()
    want_x[:, 2:4], want_y[:, 2:4] = 2.0 * a[:, 2:4], b[:, 2:4] + 1.0
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(z, a - 1.0)


def test_a_domain_nested_otherwise_than_out_is_an_error() -> None:
    with pytest.raises(sc.DefinitionError, match=r"domain= nests 3 domains where out= nests 2"):

        @sc.program
        def bad(a: CK, b: EK, x: CK, y: EK, z: CK) -> None:
            nested_result(a, b, out=((x, y), z), domain=(({K: (1, 4)}, None, None), None))
