"""gt4py's calling convention: field operators called directly with out=, domain= and
offset_provider=; with_backend and backend=; one specialization per table width and
skip-value property; what offset_provider must hold."""

from __future__ import annotations

import numpy as np
import pytest

import stencilchain as sc
import stencilchain.compat.gt4py as gtx
from stencilchain.compat.gt4py import Dims, Field, float64, neighbor_sum
from tests.compat._support import LAYOUTS, TOOLCHAINS, laid_out, toolchain

I = gtx.Dimension("I")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Cell = gtx.Dimension("Cell")
Edge = gtx.Dimension("Edge")
C2EDim = gtx.Dimension("C2EDim", kind=gtx.DimensionKind.LOCAL)
C2E = gtx.FieldOffset("C2E", source=Edge, target=(Cell, C2EDim))
Koff = gtx.FieldOffset("Koff", source=K, target=(K,))


@gtx.field_operator
def k_difference(f: Field[Dims[I, K], float64]) -> Field[Dims[I, K], float64]:
    return f(Koff[1]) - f(K - 1)


@gtx.field_operator
def cell_sum(e: Field[Dims[Edge, K], float64]) -> Field[Dims[Cell, K], float64]:
    return neighbor_sum(e(C2E), axis=C2EDim)


@gtx.program
def cell_sum_program(e: Field[Dims[Edge, K], float64], out: Field[Dims[Cell, K], float64]) -> None:
    cell_sum(e, out=out)


@pytest.mark.parametrize("order", LAYOUTS)
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_direct_call_with_domain(name: str, order: str, request: pytest.FixtureRequest) -> None:
    """gt4py's test-harness call: the domain's bounds are arguments of one program, so
    another domain runs the same build."""
    backend = toolchain(request, name)
    op = k_difference if backend is None else k_difference.with_backend(backend)
    f = laid_out(np.random.default_rng(0).random((5, 7)), order)
    for lo, hi in ((1, 6), (2, 4)):
        out = gtx.as_field([I, K], laid_out(np.zeros((5, 7)), order))
        op(
            gtx.as_field([I, K], f),
            out=out,
            offset_provider={"Koff": K},
            domain={I: (0, 5), K: (lo, hi)},
        )
        want = np.zeros((5, 7))
        want[:, lo:hi] = f[:, lo + 1 : hi + 1] - f[:, lo - 1 : hi - 1]
        np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-15)
    assert len(op._direct._runs) == 1  # type: ignore[union-attr]


def test_direct_call_without_domain_writes_where_it_can_read() -> None:
    f = np.random.default_rng(1).random((3, 6))
    out = np.zeros_like(f)
    k_difference(f, out=out, offset_provider={"Koff": K})
    np.testing.assert_allclose(out[:, 1:-1], f[:, 2:] - f[:, :-2])
    with pytest.raises(sc.ArgumentError, match="needs out="):
        k_difference(f, offset_provider={"Koff": K})


def test_backend_given_to_the_decorator_and_by_gt4py_name(request: pytest.FixtureRequest) -> None:
    gtfn = request.getfixturevalue("gtfn_cpu")

    @gtx.program(backend=gtfn, grid_type=gtx.GridType.UNSTRUCTURED)
    def on_gtfn(e: Field[Dims[Edge, K], float64], out: Field[Dims[Cell, K], float64]) -> None:
        cell_sum(e, out=out)

    e, out = np.ones((4, 2)), np.zeros((3, 2))
    on_gtfn(e, out, offset_provider={"C2E": np.array([[0, 1], [2, 3], [1, -1]], np.int32)})
    np.testing.assert_array_equal(out, [[2, 2], [2, 2], [1, 1]])
    assert gtx.gtfn_cpu is sc.backends.run_gtfn_cpu
    assert gtx.itir_python is sc.backends.run_embedded


@pytest.mark.parametrize("name", TOOLCHAINS)
def test_one_specialization_per_width_and_skip_values(
    name: str, request: pytest.FixtureRequest
) -> None:
    backend = toolchain(request, name)
    program = cell_sum_program if backend is None else cell_sum_program.with_backend(backend)
    rng = np.random.default_rng(2)
    e = rng.random((9, 3))
    tables = [
        rng.integers(0, 9, (5, 3)).astype(np.int32),  # width 3, no skips
        rng.integers(0, 9, (5, 4)).astype(np.int32),  # width 4
        np.array([[0, -1, 2], [3, 4, -1], [-1, -1, -1], [1, 2, 3], [5, 6, 7]], np.int32),
        rng.integers(0, 9, (5, 3)).astype(np.int64),
    ]
    programs = set()
    for table in tables:
        out = np.zeros((5, 3))
        program(e, out, offset_provider={"C2E": table})
        want = np.zeros((5, 3))
        for c in range(5):
            for j in range(table.shape[1]):
                if table[c, j] >= 0:
                    want[c] += e[table[c, j]]
        np.testing.assert_allclose(out, want, rtol=1e-15)
        made, reads = program.stencilchain_program({"C2E": table})
        assert reads == ("C2E",)
        programs.add(made.fingerprint())
    assert len(programs) == 4


def test_offset_provider_must_hold_the_tables() -> None:
    e, out = np.ones((4, 2)), np.zeros((3, 2))
    with pytest.raises(sc.DefinitionError, match="offset_provider has no entry 'C2E'"):
        cell_sum_program(e, out, offset_provider={})
    with pytest.raises(sc.ArgumentError, match="is the dimension Edge"):
        cell_sum_program(e, out, offset_provider={"C2E": Edge})
    with pytest.raises(sc.ArgumentError, match="2-D integer array"):
        cell_sum_program(e, out, offset_provider={"C2E": np.zeros(3, np.int32)})
    with pytest.raises(sc.ArgumentError, match="int32 or int64"):
        cell_sum_program(e, out, offset_provider={"C2E": np.zeros((3, 2))})
    with pytest.raises(sc.ArgumentError):  # an entry out of range: checked by the program
        cell_sum_program(e, out, offset_provider={"C2E": np.full((3, 2), 7, np.int32)})


def test_keyword_arguments_and_old_offset_provider() -> None:
    e, out = np.ones((4, 2)), np.zeros((3, 2))
    table = np.array([[0, 1], [2, 3], [1, 0]], np.int32)
    provider = {"C2E": gtx.NeighborTableOffsetProvider(table, Cell, Edge, 2, has_skip_values=False)}
    cell_sum_program(out=out, e=e, offset_provider=provider)
    np.testing.assert_array_equal(out, 2.0)


@gtx.field_operator
def scaled(
    f: Field[Dims[I, K], float64], a: Field[Dims[()], float64]
) -> Field[Dims[I, K], float64]:
    return f * a


@gtx.program
def scaled_program(
    f: Field[Dims[I, K], float64], a: Field[Dims[()], float64], out: Field[Dims[I, K], float64]
) -> None:
    scaled(f, a, out=out)


@pytest.mark.parametrize("order", LAYOUTS)
@pytest.mark.parametrize("name", TOOLCHAINS)
def test_zero_dimensional_fields(name: str, order: str, request: pytest.FixtureRequest) -> None:
    backend = toolchain(request, name)
    program = scaled_program if backend is None else scaled_program.with_backend(backend)
    f = laid_out(np.random.default_rng(3).random((4, 3)), order)
    out = gtx.as_field([I, K], laid_out(np.zeros((4, 3)), order))
    program(gtx.as_field([I, K], f), gtx.as_field([], np.array(2.5)), out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), 2.5 * f, rtol=1e-15)
