"""The stride dispatch of `steps/cpp/loop_order`: the C++ text is read back (compiling
nothing) to check that each dimension is innermost in exactly one branch, that the choice
compares the strides' magnitudes, and that it picks the first of smallest magnitude."""

from __future__ import annotations

import itertools
import re

import pytest

import stencilchain as sc
from stencilchain.steps.cpp.loop_order import innermost_conditions, loop_order, stride_dispatch

DIMS = [sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")]
_CANDIDATE = re.compile(
    r"if \(std::abs\((\w+)\) < sc_best\) \{ sc_inner = (\d+); sc_best = std::abs\(\1\); \}"
)


def _strides(n: int) -> list[str]:
    return [f"s{k}" for k in range(n)]


def _branches(n: int) -> list[list[str]]:
    return [[f"run_{DIMS[k].name}_innermost();"] for k in range(n)]


def _chosen(lines: list[str], values: dict[str, int]) -> str:
    """What the dispatch runs for stride `values`: the statement of the branch taken,
    interpreting the choice's C++ (declarations, then one `if` per candidate)."""
    inner = int(re.fullmatch(r"int sc_inner = (-?\d+);.*", lines[0]).group(1))  # type: ignore[union-attr]
    first = re.fullmatch(r"std::int64_t sc_best = std::abs\((\w+)\);", lines[1])
    assert first is not None, lines[1]
    best = abs(values[first.group(1)])
    for line in lines[2:]:
        candidate = _CANDIDATE.fullmatch(line)
        if candidate is None:
            continue
        if abs(values[candidate.group(1)]) < best:
            inner, best = int(candidate.group(2)), abs(values[candidate.group(1)])
    condition = "if (sc_inner < 0) {" if inner < 0 else f"(sc_inner == {inner}) {{"
    opening = next(k for k, line in enumerate(lines) if line.endswith(condition))
    return lines[opening + 1].strip()


@pytest.mark.parametrize("n", [2, 3])
def test_each_dimension_is_innermost_in_exactly_one_branch(n: int) -> None:
    lines = stride_dispatch(_strides(n), _branches(n))
    for k in range(n):
        taken = [
            i for i, line in enumerate(lines) if line == f"    run_{DIMS[k].name}_innermost();"
        ]
        assert len(taken) == 1
        assert lines[taken[0] - 1].endswith(f"if (sc_inner == {k}) {{")
    assert lines[-1] == "}"


@pytest.mark.parametrize("n", [2, 3])
def test_the_choice_compares_every_stride_magnitude(n: int) -> None:
    lines = stride_dispatch(_strides(n), _branches(n))
    assert lines[1] == "std::int64_t sc_best = std::abs(s0);"
    compared = [m.group(1) for line in lines if (m := _CANDIDATE.fullmatch(line))]
    assert compared == _strides(n)[1:]


@pytest.mark.parametrize("n", [2, 3])
def test_the_first_stride_of_smallest_magnitude_picks_the_branch(n: int) -> None:
    lines = stride_dispatch(_strides(n), _branches(n))
    for values in itertools.product([1, -1, 8, -64, 512], repeat=n):
        magnitudes = [abs(v) for v in values]
        expected = magnitudes.index(min(magnitudes))
        got = _chosen(lines, dict(zip(_strides(n), values)))
        assert got == f"run_{DIMS[expected].name}_innermost();", values


def test_a_fallback_runs_where_its_stride_is_smaller_than_all() -> None:
    lines = stride_dispatch(
        _strides(2), _branches(2), fallback=("axis", ["per_column();"]), comment="why"
    )
    assert lines[0] == "int sc_inner = -1;  // why"
    assert _chosen(lines, {"axis": 1, "s0": 8, "s1": 64}) == "per_column();"
    assert _chosen(lines, {"axis": 8, "s0": 8, "s1": 64}) == "per_column();"  # a tie
    assert _chosen(lines, {"axis": 8, "s0": 4, "s1": 64}) == "run_I_innermost();"
    assert _chosen(lines, {"axis": 8, "s0": 64, "s1": -1}) == "run_J_innermost();"


def test_setup_comes_between_the_choice_and_the_branches() -> None:
    lines = stride_dispatch(_strides(2), _branches(2), setup=["const int sc_width = 4;"])
    at = lines.index("const int sc_width = 4;")
    assert at > max(i for i, line in enumerate(lines) if _CANDIDATE.fullmatch(line))
    assert at < lines.index("if (sc_inner == 0) {")


def test_one_branch_per_stride() -> None:
    with pytest.raises(ValueError, match="one branch per stride"):
        stride_dispatch(_strides(3), _branches(2))


@pytest.mark.parametrize("n", [2, 3])
def test_exactly_one_condition_holds_the_first_smallest(n: int) -> None:
    names = _strides(n)
    conditions = innermost_conditions(names, conjunction=" and ")
    for values in itertools.product([1, 2, 3], repeat=n):
        held = [k for k, c in enumerate(conditions) if eval(c, {}, dict(zip(names, values)))]
        assert held == [list(values).index(min(values))], values
    assert all(" && " in c for c in innermost_conditions(names)) == (n > 2)


@pytest.mark.parametrize("n", [2, 3])
def test_loop_order_puts_the_chosen_dimension_innermost(n: int) -> None:
    dims = DIMS[:n]
    for inner in range(n):
        order = loop_order(dims, inner)
        assert sorted(d.name for d in order) == sorted(d.name for d in dims)
        assert order[-1] == dims[inner]
    # Fortran order (the first innermost) runs the others from the last: both layouts stream
    assert loop_order(dims, 0) == [*reversed(dims[1:]), dims[0]]
    assert loop_order(dims, n - 1) == dims
