"""Helpers shared by the DSL tests: run one field operator through a @program."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

import stencilchain as sc
from stencilchain.program import ir
from tests._support import random_array

RNG_SEED = 20240601


class RecordingArray(np.ndarray):
    """An output array that remembers the dtype of every value assigned into it.

    `out[box] = result` casts silently, so the exact dtype of what the executor
    computed is only visible here.
    """

    assigned: list[np.dtype[Any]]

    def __array_finalize__(self, obj: object) -> None:
        self.assigned = []

    def __setitem__(self, key: Any, value: Any) -> None:
        self.assigned.append(np.asarray(value).dtype)
        super().__setitem__(key, value)


def recording(array: np.ndarray) -> RecordingArray:
    rec = array.view(RecordingArray)
    rec.assigned = []
    return rec


def make_program(
    name: str,
    params: Mapping[str, ir.FieldType | sc.ScalarType],
    body: Callable[..., None],
) -> sc.Program:
    """A @program named `name` whose parameters are `params`; `body(*params)` makes the calls."""
    names = list(params)

    def fn(*args: Any) -> None:
        body(*args)

    fn.__name__ = fn.__qualname__ = name
    fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    )
    fn.__annotations__ = dict(params)
    return sc.program(fn)


def apply_program(
    fop: sc.FieldOperator, domain: Mapping[sc.Dimension, Any] | None = None
) -> sc.Program:
    """The program `out = fop(*params)` (over `domain`, or the inferred one)."""
    params: dict[str, ir.FieldType | sc.ScalarType] = {
        p.name: p.type for p in fop.definition.params
    }
    rtype = fop.return_type
    out_types = rtype.elems if isinstance(rtype, ir.TupleType) else (rtype,)
    out_names = [f"out{i}" for i in range(len(out_types))]
    assert not set(out_names) & set(params)
    params.update(zip(out_names, out_types))
    n_in = len(fop.definition.params)
    tuple_out = isinstance(rtype, ir.TupleType)

    def body(*args: Any) -> None:
        outs = args[n_in:]
        out = tuple(outs) if tuple_out else outs[0]
        if domain is None:
            fop(*args[:n_in], out=out)
        else:
            fop(*args[:n_in], out=out, domain=dict(domain))

    return make_program(f"apply_{fop.name}", params, body)


def run_fop(
    fop: sc.FieldOperator,
    *args: Any,
    domain: Mapping[sc.Dimension, Any] | None = None,
    seed: int = 7,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Run `fop` on `args` through a program; return (outputs, outputs before the call).

    Outputs start as random values of their dtype (so that untouched points are
    detectable); the dtype of the value the executor assigned must be the output's
    dtype exactly.
    """
    rng = np.random.default_rng(seed)
    shape = next(a.shape for a in args if isinstance(a, np.ndarray))
    rtype = fop.return_type
    out_types = rtype.elems if isinstance(rtype, ir.TupleType) else (rtype,)
    outs = [recording(random_array(shape, t.dtype.numpy, rng)) for t in out_types]
    before = [np.array(o, copy=True).view(np.ndarray) for o in outs]
    apply_program(fop, domain)(*args, *outs)
    for out, t in zip(outs, out_types):
        assert out.assigned, "the executor wrote nothing"
        assert all(d == t.dtype.numpy for d in out.assigned), (
            f"computed {out.assigned}, declared {t.dtype}"
        )
    return [o.view(np.ndarray) for o in outs], before


def assert_written(
    out: np.ndarray,
    before: np.ndarray,
    region: tuple[slice, ...],
    expected: Any,
    *,
    exact: bool = True,
) -> None:
    """`out[region]` equals `expected` (values and dtype); every other point is unchanged."""
    got = out[region]
    expected = np.asarray(expected)
    assert expected.dtype == out.dtype, f"hand-written NumPy gave {expected.dtype}"
    if exact:
        np.testing.assert_array_equal(got, expected, strict=True)
    else:
        np.testing.assert_allclose(got, expected, rtol=4 * np.finfo(out.dtype).eps, atol=0)
    mask = np.ones(out.shape, dtype=bool)
    mask[region] = False
    np.testing.assert_array_equal(out[mask], before[mask])


def full(ndim: int) -> tuple[slice, ...]:
    return (slice(None),) * ndim


def marked_line(path: str, marker: str) -> int:
    """The line of the file `path` that ends with `# L:<marker>` (exactly one)."""
    with open(path) as source:
        found = [n for n, text in enumerate(source, 1) if text.rstrip().endswith(f"# L:{marker}")]
    assert len(found) == 1, f"marker {marker!r} found {len(found)} times in {path}"
    return found[0]


def assert_located(err: BaseException, marker: str, *lines_after: int, path: str) -> None:
    """`err` (a DefinitionError) points at the line of the file `path` that is marked
    `# L:<marker>` (or one of `lines_after` lines below it), and its message starts with
    that place."""
    line = marked_line(path, marker)
    allowed = {line, *(line + d for d in lines_after)}
    location = getattr(err, "location", None)
    assert location is not None, f"no location in {err}"
    where, lineno = location
    assert os.path.abspath(where) == path, f"error in {where}: {err}"
    assert lineno in allowed, f"error at line {lineno}, expected {sorted(allowed)}: {err}"
    assert str(err).startswith(f"{where}:{lineno}: "), err


def assert_error_at(err: BaseException, marker: str, *words: str, path: str) -> None:
    """`err` (a DefinitionError) points at the line of the file `path` that is marked
    `# L:<marker>`, and its message holds each of `words`."""
    location = getattr(err, "location", None)
    assert location is not None, f"no location in {err}"
    assert os.path.abspath(location[0]) == path, f"error in {location[0]}: {err}"
    assert location[1] == marked_line(path, marker), f"error at line {location[1]}: {err}"
    for word in words:
        assert word in str(err), f"{word!r} not in {err}"
