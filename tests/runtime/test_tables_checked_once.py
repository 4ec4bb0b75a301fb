"""Tables checked once (docs/adr/0030-tables-checked-once.md): `sc.frozen_table` records the
range of its entries when it is made and a call compares that range with the source size;
a writeable table is read entry by entry at every call. On every CPU toolchain, against
the embedded executor and a NumPy reference, with keyword calls and scalar bounds."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.program.tables import recorded_range

Cell = sc.Dimension("Cell")
K = sc.Dimension("K", kind=sc.VERTICAL)
C2CDim = sc.Dimension("C2CDim", kind=sc.LOCAL)
C2C = sc.Connectivity("C2C", source=Cell, target=(Cell, C2CDim), max_neighbors=3)
CellK = sc.Field[[Cell, K], sc.float64]

TOOLCHAINS = ["gtfn_cpu", "dace_cpu"]
N_CELLS, N_K = 12, 4


@sc.field_operator
def gathered(u: CellK, scale: sc.float64) -> CellK:
    return scale * sc.neighbor_sum(u(C2C), axis=C2CDim)


@sc.program
def neighbours(
    u: CellK,
    c2c: sc.Table[C2C],
    out: CellK,
    scale: sc.float64,
    horizontal_start: sc.int32,
    horizontal_end: sc.int32,
) -> None:
    gathered(u, scale, out=out, domain={Cell: (horizontal_start, horizontal_end)})


@pytest.fixture(scope="module", params=TOOLCHAINS)
def toolchain(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(request.param)


def table(rng: np.random.Generator, cells: int = N_CELLS) -> np.ndarray:
    return rng.integers(0, cells, size=(cells, 3)).astype(np.int32)


def reference(
    u: np.ndarray, c2c: np.ndarray, out: np.ndarray, scale: float, hs: int, he: int
) -> np.ndarray:
    expected = out.copy()
    expected[hs:he] = scale * u[c2c[hs:he]].sum(axis=1)
    return expected


def run_both(toolchain: Any, u: np.ndarray, c2c: np.ndarray, **bounds: int) -> np.ndarray:
    """The compiled result by keywords, asserted equal (bit for bit) to the embedded one."""
    hs, he = bounds.get("horizontal_start", 0), bounds.get("horizontal_end", u.shape[0])
    embedded, compiled = np.zeros_like(u), np.zeros_like(u)
    neighbours(u, c2c, embedded, 0.5, hs, he)
    neighbours.with_backend(toolchain)(
        horizontal_end=he, c2c=c2c, scale=0.5, out=compiled, u=u, horizontal_start=hs
    )
    np.testing.assert_array_equal(compiled, embedded)
    return compiled


# --- the frozen table itself --------------------------------------------------------------


def test_a_frozen_table_is_a_read_only_copy_that_cannot_be_made_writeable() -> None:
    source = table(np.random.default_rng(0))
    frozen = sc.frozen_table(source)
    before = int(source[0, 0])
    source[0, 0] = before + 1  # the copy does not follow its source
    assert frozen[0, 0] == before
    with pytest.raises(ValueError):
        frozen[0, 0] = 1
    with pytest.raises(ValueError):
        frozen.flags.writeable = True
    with pytest.raises(ValueError):
        frozen[1:].flags.writeable = True


def test_the_recorded_range_is_trusted_only_element_for_element() -> None:
    source = np.array([[0, 1, 2], [3, -1, 5]], np.int32)
    frozen = sc.frozen_table(source)
    assert recorded_range(frozen) == (-1, 5)
    assert recorded_range(frozen[1:]) == (-1, 5)  # a view: its elements are the table's
    assert recorded_range(frozen[:, ::-1]) == (-1, 5)
    assert recorded_range(source) is None  # writeable: read at every call
    assert recorded_range(np.array(frozen)) is None  # a copy is writeable again
    assert recorded_range(frozen.view(np.int16)) is None  # other entries
    shifted = frozen.ravel().view(np.uint8)[1:-3].view(np.int32)
    assert recorded_range(shifted) is None  # not at a whole entry
    retyped = sc.frozen_table(source)
    assert recorded_range(retyped) == (-1, 5)  # remembered while it lives ...
    retyped.dtype = np.dtype(np.uint32)  # ... with what can change in place
    assert recorded_range(retyped) is None
    assert recorded_range(sc.frozen_table(np.zeros((2, 3)))) is None  # floats: no range
    assert recorded_range(np.frombuffer(b"\0" * 64, np.int32)) is None  # bytes of its own


def test_a_frozen_table_can_be_validated_when_made() -> None:
    good = table(np.random.default_rng(1))
    assert recorded_range(sc.frozen_table(good, C2C, source_size=N_CELLS)) is not None
    bad = good.copy()
    bad[3, 2] = N_CELLS
    with pytest.raises(sc.ArgumentError, match=r"holds 12 at \(3, 2\), outside \[0, 12\)"):
        sc.frozen_table(bad, C2C, source_size=N_CELLS)
    with pytest.raises(sc.ArgumentError, match=r"shape \(n_Cell, 3\)"):
        sc.frozen_table(good[:, :2], C2C)
    with pytest.raises(sc.ArgumentError, match="int32 or int64"):
        sc.frozen_table(good.astype(np.float64), C2C)


# --- calls ---------------------------------------------------------------------------------


def test_frozen_and_writeable_tables_give_the_reference(toolchain: Any) -> None:
    rng = np.random.default_rng(2)
    u, c2c = rng.standard_normal((N_CELLS, N_K)), table(rng)
    for given in (c2c, sc.frozen_table(c2c), sc.frozen_table(np.asfortranarray(c2c))):
        got = run_both(toolchain, u, given, horizontal_start=2, horizontal_end=10)
        np.testing.assert_allclose(got, reference(u, c2c, np.zeros_like(u), 0.5, 2, 10))


def test_a_changed_writeable_table_is_checked_again(toolchain: Any) -> None:
    rng = np.random.default_rng(3)
    u, c2c = rng.standard_normal((N_CELLS, N_K)), table(rng)
    run = neighbours.with_backend(toolchain)
    out = np.zeros_like(u)
    run(u=u, c2c=c2c, out=out, scale=0.5, horizontal_start=0, horizontal_end=N_CELLS)
    c2c[7, 1] = N_CELLS
    out[:] = -1.0
    with pytest.raises(sc.ArgumentError, match=r"'c2c' of neighbours\(\).*holds 12 at \(7, 1\)"):
        run(u=u, c2c=c2c, out=out, scale=0.5, horizontal_start=0, horizontal_end=N_CELLS)
    assert (out == -1.0).all()  # nothing was written
    c2c[7, 1] = -1  # C2C has no skip values
    with pytest.raises(sc.ArgumentError, match="holds -1 at"):
        run(u, c2c, out, 0.5, 0, N_CELLS)


def test_a_view_of_a_frozen_table_out_of_range_as_a_whole_is_read(toolchain: Any) -> None:
    rng = np.random.default_rng(4)
    c2c = table(rng)
    c2c[:8] %= 8  # the first 8 cells' neighbours are among themselves
    frozen = sc.frozen_table(c2c)
    u = rng.standard_normal((8, N_K))
    got = run_both(toolchain, u, frozen[:8])  # its range (up to 11) is not that of the view
    np.testing.assert_allclose(got, reference(u, c2c[:8], np.zeros_like(u), 0.5, 0, 8))
    with pytest.raises(sc.ArgumentError, match="holds"):
        neighbours.with_backend(toolchain)(u, frozen[4:], np.zeros((8, N_K)), 0.5, 0, 8)


def test_a_reinterpreted_frozen_table_is_read_entry_by_entry(toolchain: Any) -> None:
    frozen = sc.frozen_table(table(np.random.default_rng(5)))
    shifted = frozen.ravel().view(np.uint8)[1:-11].view(np.int32).reshape(-1, 3)
    u = np.ones((shifted.shape[0], N_K))
    with pytest.raises(sc.ArgumentError, match="holds"):
        neighbours.with_backend(toolchain)(u, shifted, np.zeros_like(u), 0.5, 0, 1)


def test_a_frozen_table_is_trusted_after_it_is_made(toolchain: Any) -> None:
    """The recorded range is what a call checks: an entry written behind NumPy's back into
    the frozen memory (here N_CELLS, one past the last cell; `u` is a view of a larger
    array, so reading that row stays in memory) is not seen, where a writeable table's is."""
    rng = np.random.default_rng(6)
    rows = rng.standard_normal((N_CELLS + 1, N_K))
    u = rows[:-1]
    c2c = table(rng)
    frozen = sc.frozen_table(c2c)
    address = frozen.__array_interface__["data"][0] + frozen.strides[0] * 5  # frozen[5, 0]
    ctypes.memmove(address, np.array([N_CELLS], np.int32).ctypes.data, 4)
    assert frozen[5, 0] == N_CELLS
    out = np.zeros_like(u)
    neighbours.with_backend(toolchain)(u, frozen, out, 0.5, 5, 6)
    np.testing.assert_allclose(out[5], 0.5 * (rows[N_CELLS] + u[c2c[5, 1]] + u[c2c[5, 2]]))
    with pytest.raises(sc.ArgumentError, match="holds 12 at"):
        neighbours.with_backend(toolchain)(u, np.array(frozen), out, 0.5, 5, 6)


def test_keywords_by_value_and_in_any_order(toolchain: Any) -> None:
    rng = np.random.default_rng(7)
    u, c2c = rng.standard_normal((N_CELLS, N_K)), sc.frozen_table(table(rng))
    run = neighbours.with_backend(toolchain)
    expected = np.zeros_like(u)
    run(u, c2c, expected, 0.5, 1, 9)
    names = ["".join(part) for part in (("u",), ("c2", "c"), ("ou", "t"), ("sca", "le"))]
    values = [u, c2c, None, 0.5]
    for positional in range(5):
        out = np.zeros_like(u)
        given = dict(zip(names, [*values[:2], out, values[3]]))  # names that are not interned
        args = [given.pop(name) for name in names[:positional]]
        run(*args, horizontal_end=9, **given, horizontal_start=1)
        np.testing.assert_array_equal(out, expected)
    with pytest.raises(sc.ArgumentError, match="got 'u' twice"):
        run(u, u=u, c2c=c2c, out=expected, scale=0.5, horizontal_start=0, horizontal_end=1)
    with pytest.raises(sc.ArgumentError, match="missing: 'horizontal_end'"):
        run(u, c2c=c2c, out=expected, scale=0.5, horizontal_start=0)
    with pytest.raises(sc.ArgumentError, match="did you mean 'horizontal_end'"):
        run(u, c2c, expected, 0.5, horizontal_start=0, horizontal_edn=1)
