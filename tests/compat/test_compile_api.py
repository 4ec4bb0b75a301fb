"""gt4py's compile API in compat beyond gt4py's own tests (those are ported in
test_gt4py_feature_ports.py): its errors at the user's line or naming the argument, the
embedded executor, tables of another dtype without JIT, a bound field, and that a
specialisation is built once, counted through the toolchain's executors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stencilchain.compat.gt4py as gtx
from tests.compat._support import toolchain

I = gtx.Dimension("I")
Vertex = gtx.Dimension("Vertex")
Edge = gtx.Dimension("Edge")
V2EDim = gtx.Dimension("V2E", kind=gtx.DimensionKind.LOCAL)
V2E = gtx.FieldOffset("V2E", source=Edge, target=(Vertex, V2EDim))
IField = gtx.Field[[I], gtx.float64]
N = 8


@gtx.field_operator
def shifted_scale(a: IField, k: gtx.int32, flag: bool) -> IField:
    return a * gtx.astype(k, gtx.float64) if flag else a


def _scaled(backend: Any, **options: Any) -> Any:
    @gtx.program(backend=backend, **options)
    def scaled(a: IField, k: gtx.int32, flag: bool, out: IField):
        shifted_scale(a, k, flag, out=out)

    return scaled


class _Counting:
    """A toolchain whose executors are counted: one per specialisation built."""

    def __init__(self, chain: Any) -> None:
        self.chain = chain
        self.name = chain.name
        self.made = 0

    def executor(self, program: Any) -> Any:
        self.made += 1
        return self.chain.executor(program)


def test_an_unknown_static_parameter_is_a_definition_error_at_the_program() -> None:
    with pytest.raises(gtx.DefinitionError, match="static parameter 'kk' is not one") as info:

        @gtx.program(static_params=("kk",))
        def scaled(a: IField, k: gtx.int32, flag: bool, out: IField):
            shifted_scale(a, k, flag, out=out)

    assert info.value.location is not None
    assert info.value.location[0] == __file__


def test_a_field_declared_static_is_a_definition_error_at_the_first_call() -> None:
    scaled = _scaled(None, static_params=("a",))
    a = np.ones(N)
    with pytest.raises(gtx.DefinitionError, match="invalid static argument 'a': it is a field"):
        scaled(a, 2, True, np.zeros(N), offset_provider={})


def test_compile_errors_name_what_was_wrong() -> None:
    scaled = _scaled(None)
    with pytest.raises(gtx.ArgumentError, match=r"give the values of 'k' as a list \(k=\[...\]\)"):
        scaled.compile(k=(1, 2), offset_provider={})
    scaled.compile(k=[1], flag=[True], offset_provider={})
    with pytest.raises(gtx.ArgumentError, match=r"every static parameter \(k, flag\), got k"):
        scaled.compile(k=[2], offset_provider={})
    with pytest.raises(gtx.ArgumentError, match="no option"):
        scaled.with_compilation_options(jit=False)
    with pytest.raises(gtx.DefinitionError, match="static_dims"):
        _scaled(None, static_dims=True)


def test_embedded_compiles_its_value_sets_and_refuses_others_without_jit() -> None:
    scaled = _scaled(None, enable_jit=False).compile(k=[2, 3], flag=[True], offset_provider={})
    a, out = np.arange(N, dtype=np.float64), np.zeros(N)
    scaled(a, 3, True, out, offset_provider={})
    np.testing.assert_allclose(out, 3 * a)
    with pytest.raises(gtx.ArgumentError, match=r"k=4, flag=True .*compiled: k=2, flag=True"):
        scaled(a, 4, True, out, offset_provider={})
    with pytest.raises(gtx.ArgumentError, match=r"static argument 'k' expected .*int32"):
        scaled(a, 2.5, True, out, offset_provider={})


@pytest.mark.parametrize("name", ["embedded", "gtfn_cpu"])
def test_each_specialisation_is_built_once(name: str, request: pytest.FixtureRequest) -> None:
    chain = toolchain(request, name)
    counting = _Counting(chain if chain is not None else _embedded())
    scaled = _scaled(counting, static_params=("k", "flag"))
    a = np.arange(N, dtype=np.float64)
    for k, flag in [(2, True), (2, True), (3, True), (2, False), (3, True)]:
        out = np.zeros(N)
        scaled(a, np.int32(k), flag, out, offset_provider={})
        np.testing.assert_allclose(out, k * a if flag else a)
    assert counting.made == 3
    scaled.compile(k=[5], flag=[False], offset_provider={})
    assert counting.made == 4


def _embedded() -> Any:
    from stencilchain.program.embedded import run_embedded

    return run_embedded


@gtx.field_operator
def gathered(e: gtx.Field[[Edge], gtx.float64]) -> gtx.Field[[Vertex], gtx.float64]:
    return gtx.neighbor_sum(e(V2E), axis=V2EDim)


@gtx.program
def gather(e: gtx.Field[[Edge], gtx.float64], out: gtx.Field[[Vertex], gtx.float64]):
    gathered(e, out=out)


def test_tables_of_another_dtype_are_refused_without_jit() -> None:
    table = np.array([[0, 1], [1, 2], [2, 0]], np.int32)
    provider = {"V2E": gtx.as_connectivity([Vertex, V2EDim], Edge, table)}
    no_jit = gather.with_compilation_options(enable_jit=False).compile(offset_provider=provider)
    e, out = np.arange(3.0), np.zeros(3)
    no_jit(e, out, offset_provider=provider)
    np.testing.assert_allclose(out, e[table].sum(axis=1))
    wide = {"V2E": gtx.as_connectivity([Vertex, V2EDim], Edge, table.astype(np.int64))}
    with pytest.raises(gtx.ArgumentError, match=r"V2E=.*int64.*enable_jit is False"):
        no_jit(e, out, offset_provider=wide)
    with pytest.raises(ValueError, match=r"compiled for .* already"):
        no_jit.compile(offset_provider=[wide, provider])


def test_a_bound_field_is_passed_at_each_call() -> None:
    scaled = _scaled(None)
    a = np.arange(N, dtype=np.float64)
    bound = scaled.with_bound_args(a=a, k=np.int32(4))
    out = np.zeros(N)
    bound(flag=True, out=out, offset_provider={})
    np.testing.assert_allclose(out, 4 * a)
    a[:] = 1.0  # the field bound is the caller's array, read at each call
    bound(True, out, offset_provider={})
    np.testing.assert_allclose(out, 4.0)
    assert bound.program.compilation_options.static_params == ("k",)
    with pytest.raises(gtx.ArgumentError, match="given twice"):
        bound(True, out, flag=True, offset_provider={})
