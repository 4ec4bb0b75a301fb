"""The memlets around the maps of a tiled call (`stencilchain.steps.dace.tiled_maps`),
computed when they are built instead of by DaCe's memlet propagation.

DaCe propagates a memlet through a map by matching patterns and simplifying the result
with sympy; over the tile-clipped ranges of a tiled call (`Min(tile + size - 1, last)`)
that simplification costs seconds per memlet. The maps of a tiled call are simple enough
to propagate by substitution alone: every index of a tasklet's memlet is nondecreasing in
the map's parameters (`i + c`, a clamped `Min(Max(i + c, 0), n - 1)`, minus a buffer's
origin, or free of them), so the image of a range of parameters is the index at the
first point to the index at the last. An index that is not of that kind spans its whole
axis, as DaCe's propagation does when no pattern matches.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import dace

__all__ = ["Box", "at", "box_of", "image", "memlet_of", "union", "whole_of"]

# A subset as (first, last) per axis, inclusive, in sympy expressions.
Box = tuple[tuple[Any, Any], ...]


def box_of(memlet: dace.Memlet) -> Box:
    """The subset of a tasklet's memlet (unit steps) as a Box."""
    import dace

    sympify = dace.symbolic.sympy.sympify
    return tuple((sympify(begin), sympify(end)) for begin, end, _ in memlet.subset.ranges)


def whole_of(desc: dace.data.Data) -> Box:
    """All of an array, as a Box (from below 0 for an array with an offset: an input
    starting below 0, program_sdfg)."""
    import dace

    sympify = dace.symbolic.sympy.sympify
    offset = getattr(desc, "offset", None) or [0] * len(desc.shape)
    return tuple((sympify(-o), sympify(extent) - 1 - o) for extent, o in zip(desc.shape, offset))


def _nondecreasing(expr: Any, params: frozenset[str]) -> bool:
    """Whether `expr` is built from the parameters named `params` by sums, Min, Max and
    positive factors (so it does not decrease when one of them grows)."""
    import dace

    sympy = dace.symbolic.sympy
    if not any(s.name in params for s in expr.free_symbols):
        return True
    if isinstance(expr, sympy.Symbol):
        return True
    if isinstance(expr, (sympy.Add, sympy.Min, sympy.Max)):
        return all(_nondecreasing(a, params) for a in expr.args)
    if isinstance(expr, sympy.Mul):
        numbers = [a for a in expr.args if a.is_Number]
        rest = [a for a in expr.args if not a.is_Number]
        return len(rest) == 1 and all(n > 0 for n in numbers) and _nondecreasing(rest[0], params)
    return False


def at(expr: Any, values: Mapping[str, Any]) -> Any:
    """`expr` with the symbols named in `values` replaced by their values (symbols are
    matched by name: DaCe's symbols of one name may differ in their dtype)."""
    pairs = {s: values[s.name] for s in expr.free_symbols if s.name in values}
    return expr.xreplace(pairs) if pairs else expr


def image(
    box: Box,
    first: Mapping[str, Any],
    last: Mapping[str, Any],
    whole: Sequence[tuple[Any, Any]],
) -> Box:
    """The points of `box` over the parameters from `first` to `last` (each a map of
    parameter names to expressions); an axis whose bounds may decrease with a
    parameter spans `whole` (the array's axis)."""
    params = frozenset(first)
    result = []
    for (begin, end), axis in zip(box, whole):
        if _nondecreasing(begin, params) and _nondecreasing(end, params):
            result.append((at(begin, first), at(end, last)))
        else:
            result.append(axis)
    return tuple(result)


def _least(values: Iterable[Any], *, greatest: bool = False) -> Any:
    """The least (or greatest) of expressions that differ by integers, or None if two of
    them do not."""
    values = list(values)
    best = values[0]
    for value in values[1:]:
        difference = value - best
        if not difference.is_Integer:
            return None
        if (difference > 0) == greatest and difference != 0:
            best = value
    return best


def union(boxes: Sequence[Box], whole: Sequence[tuple[Any, Any]]) -> Box:
    """The bounding box of `boxes`; along an axis whose bounds are not comparable (they
    differ by more than an integer), the array's whole axis."""
    result = []
    for k, axis in enumerate(whole):
        begin = _least(b[k][0] for b in boxes)
        end = _least((b[k][1] for b in boxes), greatest=True)
        result.append(axis if begin is None or end is None else (begin, end))
    return tuple(result)


def memlet_of(data: str, box: Box, volume: Any, dynamic: bool) -> dace.Memlet:
    """A memlet of `data` over `box`, with its volume (0 and dynamic: unknown)."""
    import dace

    subset = dace.subsets.Range([(begin, end, 1) for begin, end in box])
    return dace.Memlet(data=data, subset=subset, volume=volume, dynamic=dynamic)
