"""The memlets around maps, computed when the maps are built instead of by DaCe's memlet
propagation: those of a tiled call (`stencilchain.steps.dace.tiled_maps`), and those
around every other map the translator builds (`add_mapped_tasklet`, `through_map`).

DaCe propagates a memlet through a map by matching patterns and simplifying the result
(and the memlet's volume) with sympy; over the tile-clipped ranges of a tiled call
(`Min(tile + size - 1, last)`) or the blocks of a scan's columns that simplification
costs seconds per memlet. The maps the translator builds are simple enough to propagate
by substitution alone: every index of a tasklet's memlet is nondecreasing in the map's
parameters (`i + c`, a clamped `Min(Max(i + c, 0), n - 1)`, minus a buffer's origin, or
free of them), so the image of a range of parameters is the index at the first point to
the index at the last. An index that is not of that kind spans its whole axis, as DaCe's
propagation does when no pattern matches.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import dace

__all__ = [
    "Box",
    "add_mapped_tasklet",
    "at",
    "box_of",
    "image",
    "memlet_of",
    "through_map",
    "union",
    "whole_of",
]

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


def _points(ranges: Sequence[tuple[Any, Any, Any]]) -> Any:
    """The number of points of a map's range (a product, not simplified)."""
    import dace

    sympy = dace.symbolic.sympy
    count = sympy.Integer(1)
    for begin, end, step in ranges:
        extent = end - begin + 1
        count *= extent if step == 1 else sympy.ceiling(extent / step)
    return count


def add_mapped_tasklet(
    state: Any,
    name: str,
    map_ranges: Sequence[tuple[str, Any]],
    inputs: Mapping[str, dace.Memlet],
    code: str,
    outputs: Mapping[str, dace.Memlet],
    *,
    schedule: Any = None,
) -> tuple[Any, Any, Any]:
    """DaCe's `state.add_mapped_tasklet` of a C++ tasklet with external access nodes,
    the memlets between them and the map (unit steps) its images (`image`, `union`)
    with the volume of the inner memlets times the map's points: (tasklet, entry, exit)."""
    import dace

    tasklet, entry, exit_ = state.add_mapped_tasklet(
        name,
        list(map_ranges),
        dict(inputs),
        code,
        dict(outputs),
        schedule=dace.ScheduleType.Default if schedule is None else schedule,
        language=dace.Language.CPP,
        external_edges=True,
        propagate=False,
    )
    ranges = entry.map.range.ranges
    if any(step != 1 for _, _, step in ranges):
        raise ValueError(f"the map of {name!r} has a step: {entry.map.range}")
    first = {p: begin for p, (begin, _, _) in zip(entry.map.params, ranges)}
    last = {p: end for p, (_, end, _) in zip(entry.map.params, ranges)}
    points = _points(ranges)
    sdfg = state.sdfg
    for edge in state.in_edges(entry):
        inner = [e.data for e in state.out_edges(entry) if e.data.data == edge.data.data]
        edge.data = _around(sdfg.arrays[edge.data.data], edge.data.data, inner, first, last, points)
    for edge in state.out_edges(exit_):
        inner = [e.data for e in state.in_edges(exit_) if e.data.data == edge.data.data]
        edge.data = _around(sdfg.arrays[edge.data.data], edge.data.data, inner, first, last, points)
    return tasklet, entry, exit_


def _around(
    desc: Any,
    data: str,
    inner: Sequence[dace.Memlet],
    first: Mapping[str, Any],
    last: Mapping[str, Any],
    points: Any,
) -> dace.Memlet:
    """The memlet of `data` around a map: the bounding box of the images of `inner`."""
    whole = whole_of(desc)
    box = union([image(box_of(m), first, last, whole) for m in inner], whole)
    volume = sum((m.volume for m in inner), 0) * points
    return memlet_of(data, box, volume, any(m.dynamic for m in inner))


def through_map(state: Any, access: Any, entry: Any, node: Any, memlet: dace.Memlet) -> None:
    """`memlet` (all of its array) from `access` through the map `entry` to the
    connector of its name on `node` (DaCe's `add_memlet_path`), or from `node` through
    the map's exit to `access` when `entry` is a MapExit; the memlet outside is the same
    subset, with its volume times the map's points."""
    import dace

    data = memlet.data
    points = _points(entry.map.range.ranges)
    outside = memlet_of(data, box_of(memlet), memlet.volume * points, memlet.dynamic)
    entry.add_in_connector(f"IN_{data}")
    entry.add_out_connector(f"OUT_{data}")
    if isinstance(entry, dace.nodes.MapExit):
        state.add_edge(node, data, entry, f"IN_{data}", memlet)
        state.add_edge(entry, f"OUT_{data}", access, None, outside)
    else:
        state.add_edge(access, None, entry, f"IN_{data}", outside)
        state.add_edge(entry, f"OUT_{data}", node, data, memlet)
