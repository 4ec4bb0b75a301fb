"""sc.FieldValue wherever an array is, on every CPU toolchain, against the embedded executor
and NumPy: the BoundEntry path (a rejected native check retried with the arrays), the
Python paths of programs with neighbour tables and with sc.as_offset fields, keyword
arguments, and the misuse errors, which name the argument as on the embedded executor."""

from __future__ import annotations

import numpy as np
import pytest

import stencilchain as sc
from tests.program import test_dynamic_offsets as offsets
from tests.program import test_field_values_calls as cases
from tests.program import test_meshes_embedded as mesh

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]
I, K = cases.I, cases.K


@pytest.mark.parametrize("kind", ["C", "F"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_field_values_on_the_bound_entry(
    fixture: str, kind: str, request: pytest.FixtureRequest
) -> None:
    run = cases.diff.with_backend(request.getfixturevalue(fixture))
    a, b = (np.asarray(v, order=kind) for v in cases.inputs())  # type: ignore[call-overload]
    out = np.zeros_like(a)
    run(sc.as_field((I, K), a), b, out=sc.as_field((I, K), out))
    embedded = np.zeros_like(a)
    cases.diff(a, b, embedded)
    np.testing.assert_array_equal(out, embedded)
    np.testing.assert_array_equal(out, cases.reference(a, b))
    again = np.zeros_like(a)
    run(a, b, again)  # plain arrays after field values: the native path, unchanged
    np.testing.assert_array_equal(again, embedded)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_field_value_misuse(fixture: str, request: pytest.FixtureRequest) -> None:
    run = cases.diff.with_backend(request.getfixturevalue(fixture))
    a, b = cases.inputs()
    out = np.zeros_like(a)
    with pytest.raises(sc.ArgumentError, match=r"argument 'out' .*starts at K -1, below 0"):
        run(a, b, sc.as_field((I, K), out, start={K: -1}))
    with pytest.raises(sc.ArgumentError, match=r"argument 'a' .*over \(K, I\)"):
        run(sc.as_field((K, I), a.T), b, out)
    with pytest.raises(sc.ArgumentError, match=r"argument 'b' .*expected dtype float64"):
        run(a, sc.as_field((I, K), b.astype(np.float32)), out)
    assert not out.any()


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_field_values_with_a_table(fixture: str, request: pytest.FixtureRequest) -> None:
    run = mesh.mesh_column.with_backend(request.getfixturevalue(fixture))
    rng = np.random.default_rng(2)
    c2e, _ = mesh.tables(rng)
    f = rng.standard_normal((mesh.N_EDGES, mesh.N_K))
    shape = (mesh.N_CELLS, mesh.N_K)
    expected = [np.full(shape, np.nan), np.full(shape, np.nan)]
    mesh.mesh_column(f, c2e, *expected)
    got = [np.full(shape, np.nan), np.full(shape, np.nan)]
    run(
        sc.as_field((mesh.Edge, mesh.K), f),
        sc.as_field((mesh.Cell, mesh.C2EDim), c2e),
        got[0],
        sc.as_field((mesh.Cell, mesh.K), got[1]),
    )
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=1e-14)
    bad = c2e.copy()
    bad[0, 0] = mesh.N_EDGES
    with pytest.raises(sc.ArgumentError, match="table of C2E holds"):
        run(f, sc.as_field((mesh.Cell, mesh.C2EDim), bad), *got)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_field_values_with_an_offset_field(fixture: str, request: pytest.FixtureRequest) -> None:
    run = offsets.steep_points.with_backend(request.getfixturevalue(fixture))
    theta, off, off64 = offsets.inputs(1)
    shape = (offsets.N_CELLS, offsets.N_K)
    got = [np.full(shape, np.nan), np.full(shape, np.nan)]
    dims = (offsets.Cell, offsets.K)
    run(theta, sc.as_field(dims, off), sc.as_field(dims, off64), *got)
    for g, want in zip(got, offsets.references(theta, off, off64), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-14, atol=1e-15)
    off[3, 2] = offsets.N_K
    with pytest.raises(sc.ArgumentError, match=r"argument 'off' .*offset"):
        run(theta, sc.as_field(dims, off), off64, *got)
