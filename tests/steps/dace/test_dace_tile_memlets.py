"""The memlets of a tiled call's maps (steps/dace/tile_memlets.py): the image of a box over a
range of parameters, by substitution where every bound is nondecreasing in them and the
whole axis where one is not; the union of boxes, the whole axis where two bounds are not
comparable. Checked against the points enumerated by brute force; and the memlets around
the plain maps the translator builds (`add_mapped_tasklet`) against DaCe's propagation."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

pytest.importorskip("dace", reason="the DaCe toolchains need the `dace` extra")

import dace

from stencilchain.steps.dace.tile_memlets import box_of, image, union, whole_of

sympy = dace.symbolic.sympy
N = 9  # the array's extent along each axis


def _by_name(expr: object, values: dict[str, int]) -> int:
    expr = sympy.sympify(expr)
    return int(expr.xreplace({s: values[s.name] for s in expr.free_symbols}))


@pytest.mark.parametrize(
    "text",
    ["a[i + 1, j - 2]", "a[Min(Max(i - 1, 0), 8), j]", "a[i, 3]", "a[0:9, j + 1]"],
)
def test_the_image_of_a_monotone_box_is_every_point_it_reaches(text: str) -> None:
    sdfg = dace.SDFG("images")
    sdfg.add_array("a", [N, N], dace.float64)
    memlet = dace.Memlet(text)
    lo = {"i": 2, "j": 3}
    hi = {"i": 5, "j": 6}
    got = image(box_of(memlet), lo, hi, whole_of(sdfg.arrays["a"]))
    reached = [
        [(_by_name(b, {"i": i, "j": j}), _by_name(e, {"i": i, "j": j})) for b, e in box_of(memlet)]
        for i, j in itertools.product(range(lo["i"], hi["i"] + 1), range(lo["j"], hi["j"] + 1))
    ]
    for axis, (begin, end) in enumerate(got):
        assert int(begin) == min(r[axis][0] for r in reached)
        assert int(end) == max(r[axis][1] for r in reached)


def test_a_decreasing_index_spans_its_whole_axis() -> None:
    sdfg = dace.SDFG("decreasing")
    sdfg.add_array("a", [N, N], dace.float64)
    got = image(box_of(dace.Memlet("a[8 - i, j]")), {"i": 2, "j": 3}, {"i": 5, "j": 6},
                whole_of(sdfg.arrays["a"]))  # fmt: skip
    assert [(int(b), int(e)) for b, e in got] == [(0, N - 1), (3, 6)]


def test_a_union_is_the_bounding_box_or_the_whole_axis() -> None:
    t, n = sympy.Symbol("t"), sympy.Symbol("n")
    whole = ((sympy.Integer(0), n - 1), (sympy.Integer(0), n - 1))
    boxes = [((t - 1, t + 2), (t, t)), ((t + 1, t + 4), (sympy.Min(t, n - 2), t))]
    got = union(boxes, whole)
    assert got[0] == (t - 1, t + 4)
    assert got[1] == whole[1]  # t and Min(t, n - 2) are not comparable


def _outer_ranges(state: Any, entry: Any, exit_: Any) -> dict[str, list[tuple[Any, Any, Any]]]:
    """The subsets of the memlets between a map and its access nodes, by array."""
    edges = [*state.in_edges(entry), *state.out_edges(exit_)]
    return {e.data.data: e.data.subset.ranges for e in edges}


@pytest.mark.parametrize(
    ("ranges", "inputs", "output"),
    [
        # a plain call's map: shifts, a clamped read, a gather along a whole axis
        ({"i": "1:n - 1", "j": "0:n"}, ["a[i - 1, j]", "a[i + 1, j]", "a[Min(Max(i + 2, 0), n - 1), j]",
                                        "b[0:n, j]"], "c[i, j]"),
        # a block of a scan's columns at one level
        ({"i": "f:min(f + 4, s, s + k)"}, ["a[i, k]", "st[i - f]"], "c[i, k]"),
    ],
)  # fmt: skip
def test_mapped_tasklet_memlets_are_what_dace_propagates(
    ranges: dict[str, str], inputs: list[str], output: str
) -> None:
    """`add_mapped_tasklet` builds DaCe's map and sets the memlets outside it to the images
    of those inside; at every value of the symbols they cover what DaCe's propagation
    computes, and no more."""
    from stencilchain.steps.dace.tile_memlets import add_mapped_tasklet

    def build(ours: bool) -> dict[str, list[tuple[Any, Any, Any]]]:
        sdfg = dace.SDFG("mapped_ours" if ours else "mapped_dace")
        for name in ("n", "f", "s", "k"):
            sdfg.add_symbol(name, dace.int64)
        for name in ("a", "b", "c"):
            sdfg.add_array(name, ["n", "n"], dace.float64)
        sdfg.add_array("st", [4], dace.float64)
        state = sdfg.add_state()
        reads = {f"in{k}": dace.Memlet(text) for k, text in enumerate(inputs)}
        writes = {"out": dace.Memlet(output)}
        map_ranges = [(p, dace.subsets.Range.from_string(r)) for p, r in ranges.items()]
        if ours:
            _, entry, exit_ = add_mapped_tasklet(state, "t", map_ranges, reads, "", writes)
        else:
            _, entry, exit_ = state.add_mapped_tasklet(
                "t", map_ranges, reads, "", writes, language=dace.Language.CPP,
                external_edges=True,
            )  # fmt: skip
        return _outer_ranges(state, entry, exit_)

    ours, theirs = build(True), build(False)
    assert ours.keys() == theirs.keys()
    for values in ({"n": 9, "f": 2, "s": 7, "k": 3}, {"n": 20, "f": 8, "s": 10, "k": 0}):
        for data in ours:
            got = [(_by_name(b, values), _by_name(e, values)) for b, e, _ in ours[data]]
            want = [(_by_name(b, values), _by_name(e, values)) for b, e, _ in theirs[data]]
            assert got == want, (data, values)
