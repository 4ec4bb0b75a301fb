"""Where gt4py's rules differ from stencilchain's, the compatible front end follows
gt4py (literal dtypes, no implicit promotion) and stencilchain's own DSL keeps its rules;
what stencilchain cannot run is a DefinitionError at the user's line."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import Dims, Field, float32, float64, int32, int64
from tests.program._support import assert_error_at

HERE = os.path.abspath(__file__)
at = functools.partial(assert_error_at, path=HERE)

I = gtx.Dimension("I")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Edge = gtx.Dimension("Edge")
C2EDim = gtx.Dimension("C2EDim", kind=gtx.DimensionKind.LOCAL)
C2E = gtx.FieldOffset("C2E", source=Edge, target=(I, C2EDim))
Koff = gtx.FieldOffset("Koff", source=K, target=(K,))


def _run(op: Any, *arrays: np.ndarray, out_dtype: Any = np.float64) -> np.ndarray:
    out = np.zeros(arrays[0].shape, out_dtype)
    op(*arrays, out=out, offset_provider={"Koff": K})
    return out


def _error(op: Any, *arrays: np.ndarray) -> sc.DefinitionError:
    with pytest.raises(sc.DefinitionError) as info:
        _run(op, *arrays)
    return info.value


def test_an_int_literal_is_int32() -> None:
    @gtx.field_operator
    def plus_one(n: Field[Dims[I], int32]) -> Field[Dims[I], int32]:
        return n + 1

    @gtx.field_operator
    def plus_one_64(n: Field[Dims[I], int64]) -> Field[Dims[I], int64]:
        return n + 1  # L:int64

    n = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(_run(plus_one, n, out_dtype=np.int32), n + 1)
    err = _error(plus_one_64, n.astype(np.int64))
    at(err, "int64", "int64 and int32", "a Python int literal is int32")


def test_no_implicit_promotion_of_literals() -> None:
    @gtx.field_operator
    def times_two(f: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
        return f * 2  # L:int-float

    @gtx.field_operator
    def halve(f: Field[Dims[I], float32]) -> Field[Dims[I], float32]:
        return f * 0.5  # L:f32

    @gtx.field_operator
    def halve_typed(f: Field[Dims[I], float32]) -> Field[Dims[I], float32]:
        return f * float32(0.5) + float32("0.25")

    f = np.arange(3.0)
    at(_error(times_two, f), "int-float", "float64 and int32")
    at(_error(halve, f.astype(np.float32)), "f32", "float32 and float64")
    got = _run(halve_typed, f.astype(np.float32), out_dtype=np.float32)
    np.testing.assert_array_equal(got, f.astype(np.float32) * 0.5 + 0.25)


J = sc.Dimension("J")


def test_stencilchains_own_dsl_keeps_its_rules() -> None:
    @sc.field_operator
    def times_two(f: sc.Field[[J], sc.float32]) -> sc.Field[[J], sc.float32]:
        return f * 2 + 0.5  # literals adopt the field's dtype in stencilchain's DSL

    @sc.program
    def run(f: sc.Field[[J], sc.float32], out: sc.Field[[J], sc.float32]) -> None:
        times_two(f, out=out)

    f = np.arange(3, dtype=np.float32)
    out = np.zeros_like(f)
    run(f, out)
    np.testing.assert_array_equal(out, f * 2 + 0.5)


def test_no_mixed_dtypes_and_integer_division() -> None:
    @gtx.field_operator
    def mixed(a: Field[Dims[I], float64], b: Field[Dims[I], float32]) -> Field[Dims[I], float64]:
        return a + b  # L:mixed

    @gtx.field_operator
    def divide(a: Field[Dims[I], int32]) -> Field[Dims[I], int32]:
        return a / a  # L:div

    @gtx.field_operator
    def floor_divide(a: Field[Dims[I], int32]) -> Field[Dims[I], int32]:
        return a // 2 + a % 3

    f = np.arange(1.0, 4.0)
    at(_error(mixed, f, f.astype(np.float32)), "mixed", "float64 and float32")
    n = np.arange(1, 7, dtype=np.int32)
    at(_error(divide, n), "div")
    np.testing.assert_array_equal(_run(floor_divide, n, out_dtype=np.int32), n // 2 + n % 3)


BAD: list[tuple[str, Callable[[], Any], tuple[str, ...]]] = []


def _bad_cast() -> Any:
    @gtx.field_operator
    def cast(f: Field[Dims[I], float64]) -> Field[Dims[I], float32]:
        return float32(f)  # L:cast

    return _error(cast, np.zeros(2))


def _bad_dtype() -> Any:
    @gtx.field_operator  # L:int8
    def small(f: Field[Dims[I], gtx.int8]) -> Field[Dims[I], gtx.int8]:
        return f

    return _error(small, np.zeros(2, np.int8))


def _cartesian_without_amount() -> Any:
    @gtx.field_operator
    def read(f: Field[Dims[I, K], float64]) -> Field[Dims[I, K], float64]:
        return f(Koff)  # L:koff

    return _error(read, np.zeros((2, 3)))


def _as_offset_of_connectivity() -> Any:
    @gtx.field_operator
    def read(
        f: Field[Dims[I, K], float64], o: Field[Dims[I, K], int32]
    ) -> Field[Dims[I, K], float64]:
        return f(gtx.experimental.as_offset(C2E, o))  # L:as-offset

    return _error(read, np.zeros((2, 3)), np.zeros((2, 3), np.int32))


def _unknown_dimension() -> Any:
    @gtx.field_operator
    def read(f: Field[Dims[I], float64]) -> Field[Dims[I], float64]:
        return f(Koff[1])  # L:unknown

    return _error(read, np.zeros(3))


@pytest.mark.parametrize(
    ("marker", "make", "words"),
    [
        ("cast", _bad_cast, ("float(x), np.float64(x)", "astype")),
        ("int8", _bad_dtype, ("int8 is not supported",)),
        ("koff", _cartesian_without_amount, ("Cartesian offset needs an amount", "Koff[1]")),
        ("as-offset", _as_offset_of_connectivity, ("Cartesian FieldOffset",)),
        ("unknown", _unknown_dimension, ("unknown dimension K",)),
    ],
)
def test_unsupported_constructs_fail_at_the_users_line(
    marker: str, make: Callable[[], Any], words: tuple[str, ...]
) -> None:
    at(make(), marker, *words)


def test_bad_declarations() -> None:
    with pytest.raises(sc.DefinitionError, match="Cartesian offset shifts along one dimension"):
        gtx.FieldOffset("Bad", source=I, target=(K,))
    with pytest.raises(sc.DefinitionError, match=r"kind=DimensionKind\.LOCAL"):
        gtx.FieldOffset("Bad", source=Edge, target=(I, K))
    with pytest.raises(sc.DefinitionError, match="options bogus are not supported"):
        gtx.program(bogus=True)
    with pytest.raises(sc.DefinitionError, match="expected Dims"):
        gtx.Field["I", float64]


@pytest.mark.parametrize(
    "name", ["domain", "Domain", "unit_range", "CartesianConnectivity", "FieldConstructor"]
)
def test_unsupported_names_import_and_fail_when_used(name: str) -> None:
    value = getattr(gtx, name)
    with pytest.raises(sc.DefinitionError, match=f"gt4py's {name} is not supported"):
        value({})
    gtx.wait_for_compilation()  # stencilchain compiles at the first call: nothing to wait for


@pytest.mark.parametrize("name", ["int8", "int16", "uint8", "uint16", "uint32", "uint64"])
def test_every_dtype_stencilchain_lacks_is_refused_in_a_field(name: str) -> None:
    """gt4py's other integer dtypes are importable (code naming them imports unchanged) and
    refused where a Field names one, at that line, naming it and the dtypes there are."""
    dtype = getattr(gtx, name)
    assert np.dtype(dtype) == np.dtype(name)
    with pytest.raises(sc.DefinitionError) as info:
        Field[Dims[I], dtype]  # L:field
    words = (f"dtype {name} is not supported by stencilchain", "float32, float64, int32, int64")
    assert_error_at(info.value, "field", *words, path=os.path.abspath(__file__))
