"""Helpers shared by the tests of several folders: random arrays, the same values in another
memory layout, read-only copies, a compiled run checked against the embedded one, and a
toolchain of a family on a cache of the test's own."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import stencilchain as sc


def random_array(shape: tuple[int, ...], dtype: Any, rng: np.random.Generator) -> np.ndarray:
    """Random values of `dtype`: floats in [-2, 2), ints in [-50, 50), bools."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "i":
        return rng.integers(-50, 50, size=shape).astype(dtype)
    return (rng.random(shape) * 4.0 - 2.0).astype(dtype)


def read_only(array: np.ndarray) -> np.ndarray:
    """A copy of `array` that cannot be written."""
    array = array.copy()
    array.flags.writeable = False
    return array


@dataclasses.dataclass
class Placed:
    """An array in some layout; for views, the buffer around it and its initial content."""

    array: np.ndarray
    parent: np.ndarray | None = None
    parent_before: np.ndarray | None = None
    where: tuple[slice, ...] = ()

    def assert_surroundings_untouched(self, what: str) -> None:
        if self.parent is None:
            return
        assert self.parent_before is not None
        outside = np.ones(self.parent.shape, dtype=bool)
        outside[self.where] = False
        np.testing.assert_array_equal(
            self.parent[outside], self.parent_before[outside], err_msg=f"{what}: outside the view"
        )


def place(base: np.ndarray, layout: str, rng: np.random.Generator) -> Placed:
    """A copy of `base`'s values in `layout`: C, F, a strided view of a bigger buffer of
    random values (`sliced`), or such a view with negative strides on every axis
    (`reversed`)."""
    if layout in ("C", "F"):
        array = np.array(base, order=layout)
        assert array.flags.c_contiguous if layout == "C" else array.flags.f_contiguous
        return Placed(array)
    steps = (2, 3, 2)[: base.ndim]
    offsets = (0, 1, 1)[: base.ndim]
    parent = random_array(
        tuple(o + n * s + 1 for o, n, s in zip(offsets, base.shape, steps)), base.dtype, rng
    )
    if layout == "sliced":
        where = tuple(slice(o, o + n * s, s) for o, n, s in zip(offsets, base.shape, steps))
    else:
        assert layout == "reversed", layout
        where = tuple(
            slice(o + (n - 1) * s, o - 1 if o > 0 else None, -s)
            for o, n, s in zip(offsets, base.shape, steps)
        )
    view = parent[where]
    assert view.shape == base.shape
    view[...] = base
    if base.size > 1:
        assert not view.flags.c_contiguous and not view.flags.f_contiguous
    return Placed(view, parent, parent.copy(), where)


# The tolerance of a comparison, per float dtype (relative and absolute alike).
Tolerance = Mapping[np.dtype[Any], float]


def assert_same(got: np.ndarray, want: np.ndarray, what: str, *, tolerance: Tolerance) -> None:
    """Exactly equal for ints and bools; close for floats (NaN matches NaN)."""
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    if want.dtype.kind == "f":
        tol = tolerance[want.dtype]
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what, strict=True)


def run_both(
    program: sc.Program,
    compiled: Callable[..., None],
    arguments: Mapping[str, Any] | Sequence[Any],
    layout: str,
    seed: int = 0,
    *,
    tolerance: Tolerance,
) -> dict[str, np.ndarray]:
    """Run `program` embedded on C-order copies of `arguments` (by parameter name, or in
    parameter order) and `compiled` on copies in `layout`; assert that every field ends up
    the same (floats within `tolerance`) and that nothing around a view changed. Returns
    the embedded results."""
    if not isinstance(arguments, Mapping):
        arguments = dict(zip((p.name for p in program.ir.params), arguments, strict=True))
    rng = np.random.default_rng(seed)
    expected = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in arguments.items()}
    program(*expected.values())
    placed = {k: place(v, layout, rng) for k, v in arguments.items() if isinstance(v, np.ndarray)}
    compiled(*(placed[k].array if k in placed else v for k, v in arguments.items()))
    for name, p in placed.items():
        what = f"{program.name}: field {name!r} ({layout})"
        assert_same(p.array, expected[name], what, tolerance=tolerance)
        p.assert_surroundings_untouched(what)
    return {k: v for k, v in expected.items() if isinstance(v, np.ndarray)}


def family_toolchain(family: str, cache_dir: Path, **settings: Any) -> Any:
    """A fresh toolchain of `family` ("gtfn" or "dace"), with a compiled-program pool of its
    own, from a container on the cache in `cache_dir` and the given settings (Any: the tests
    reach into the family's own steps)."""
    from stencilchain.containers import build_container

    return getattr(build_container({}, cache_dir=cache_dir, **settings), family).toolchain()
