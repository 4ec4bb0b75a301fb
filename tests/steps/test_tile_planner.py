"""The one tile planner (stencilchain.steps.tiles) on small hand-written IR, with each
family's cost function: which stages it keeps, their extents, producers first, and that a
body with a node the family does not tile gets no plan."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import bool_, float64
from stencilchain.program.ir_walk import replace
from stencilchain.program.node_traits import NODE_TRAITS, NodeTraits
from stencilchain.steps import tiles
from stencilchain.steps.dace.tiling import DaCeCost
from stencilchain.steps.dace.tiling import plan_tiles as dace_plan
from stencilchain.steps.gtfn.tiling import GTFNCost, Materialization
from stencilchain.steps.gtfn.tiling import plan_tiles as gtfn_plan
from stencilchain.steps.tiles import Candidate, Choice, TilePlan

I = Dimension("I")
J = Dimension("J")
DIMS = (I, J)
F = ir.FieldType(DIMS, float64)
f = ir.Ref("f", F)


def shift(e: ir.Expr, **offsets: int) -> ir.Expr:
    by_name = {d.name: d for d in DIMS}
    return ir.Shift(e, tuple((by_name[d], k) for d, k in offsets.items()), F)


def add(*terms: ir.Expr) -> ir.Expr:
    total = terms[0]
    for t in terms[1:]:
        total = ir.Binary("+", total, t, F)
    return total


def sub(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.Binary("-", a, b, F)


def lap(e: ir.Expr) -> ir.Expr:
    four = ir.Binary("*", ir.Literal(-4.0, float64), e, F)
    return add(four, shift(e, I=1), shift(e, I=-1), shift(e, J=1), shift(e, J=-1))


def flux(e: ir.Expr) -> ir.Expr:
    """hdiff's limited flux along I of the Laplacian of `e`."""
    d = sub(shift(lap(e), I=1), lap(e))
    limit = ir.Binary(
        ">",
        ir.Binary("*", d, sub(shift(e, I=1), e), F),
        ir.Literal(0.0, float64),
        ir.FieldType(DIMS, bool_),
    )
    return ir.Where(limit, ir.Literal(0.0, float64), d, F)


def hdiff_x(e: ir.Expr) -> ir.Expr:
    """hdiff along I only: the input minus the divergence of the limited flux."""
    return sub(e, sub(flux(e), shift(flux(e), I=-1)))


def boxes(plan: TilePlan | None) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    assert plan is not None
    return [(s.low, s.high) for s in plan.stages]


def reads(expr: ir.Expr) -> set[str]:
    found: set[str] = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, ir.Ref):
            found.add(e.name)
        stack.extend(ir.children(e))
    return found


def assert_producers_first(plan: TilePlan) -> None:
    names = [s.name for s in plan.stages]
    for k, stage in enumerate(plan.stages):
        assert all(names.index(r) < k for r in reads(stage.expr) if r in names), names
    assert set(names) <= reads(plan.result) | {r for s in plan.stages for r in reads(s.expr)}


# --- a Laplacian of a Laplacian ---------------------------------------------------------------


def test_laplacian_of_laplacian_keeps_the_inner_one_in_both_families() -> None:
    body = lap(lap(f))
    for plan in (
        gtfn_plan(body, DIMS, Materialization.ALWAYS),
        dace_plan(body, DIMS, "p_", keep_all=True),
    ):
        assert plan is not None and len(plan.stages) == 1
        (stage,) = plan.stages
        assert stage.expr == lap(f)
        assert (stage.low, stage.high) == ((-1, -1), (1, 1))  # read at the five points
        assert stage.positions == 5
        assert plan.result == lap(ir.Ref(stage.name, F))
    names = [
        [s.name for s in p.stages]
        for p in (
            gtfn_plan(body, DIMS, Materialization.ALWAYS),
            dace_plan(body, DIMS, "p_", keep_all=True),
        )
        if p is not None
    ]
    assert names == [["sc_stage0"], ["p_buf0"]]


def test_both_families_recompute_cheap_arithmetic() -> None:
    """A Laplacian read at five points costs less recomputed than kept (GTFN's keep cost
    and DaCe's are both 30); DaCe's `keep_all` keeps it (a store and a load cost 2)."""
    assert gtfn_plan(lap(lap(f)), DIMS, Materialization.AUTO) is None
    assert gtfn_plan(lap(lap(f)), DIMS, Materialization.RECOMPUTE) is None
    assert dace_plan(lap(lap(f)), DIMS, "p_") is None
    assert dace_plan(hdiff_x(f), DIMS, "p_") is None
    assert dace_plan(lap(lap(f)), DIMS, "p_", keep_all=True) is not None


def test_dace_keeps_math_read_at_several_points() -> None:
    """Two math functions read at five points cost more recomputed: DaCe keeps them on the
    tile and its halo."""
    e = ir.MathCall("sqrt", (ir.MathCall("exp", (f,), F),), F)
    plan = dace_plan(lap(e), DIMS, "p_")
    assert plan is not None
    assert [s.expr for s in plan.stages] == [e]
    assert boxes(plan) == [((-1, -1), (1, 1))]


def test_math_inside_the_laplacians_two_cost_functions_two_plans() -> None:
    """GTFN keeps the largest candidate first (the inner Laplacian of exp), then finds exp
    read at five points inside it not worth a buffer; DaCe keeps, in one pass, exp too:
    evaluated at thirteen points of the whole body, more than the Laplacian's five."""
    e = ir.MathCall("exp", (f,), F)
    body = lap(lap(e))
    gtfn = gtfn_plan(body, DIMS, Materialization.AUTO)
    assert gtfn is not None
    assert [s.expr for s in gtfn.stages] == [lap(e)]
    assert boxes(gtfn) == [((-1, -1), (1, 1))]
    dace = dace_plan(body, DIMS, "p_", keep_all=True)
    assert dace is not None
    assert [s.name for s in dace.stages] == ["p_buf0", "p_buf1"]
    assert dace.stages[0].expr == e and dace.stages[0].positions == 13
    assert dace.stages[1].expr == lap(ir.Ref("p_buf0", F))
    assert boxes(dace) == [((-2, -2), (2, 2)), ((-1, -1), (1, 1))]
    assert_producers_first(dace)


# --- hdiff's flux -----------------------------------------------------------------------------


def test_hdiff_flux_keeps_the_flux_and_its_laplacian_producers_first() -> None:
    body = hdiff_x(f)
    for plan, names in (
        (gtfn_plan(body, DIMS, Materialization.ALWAYS), ["sc_stage1", "sc_stage0"]),
        (dace_plan(body, DIMS, "p_", keep_all=True), ["p_buf0", "p_buf1"]),
    ):
        assert plan is not None
        assert [s.name for s in plan.stages] == names
        laplacian, flx = plan.stages
        assert laplacian.expr == lap(f)
        assert flx.expr == replace(flux(f), lap(f), ir.Ref(laplacian.name, F))
        assert_producers_first(plan)
        # the flux is read at I-1 and I; the Laplacian at I and I+1 of each flux point
        assert (flx.low, flx.high) == ((-1, 0), (0, 0))
        assert (laplacian.low, laplacian.high) == ((-1, 0), (1, 0))
        assert plan.result == sub(f, sub(ir.Ref(flx.name, F), shift(ir.Ref(flx.name, F), I=-1)))


def test_gtfn_boxes_hold_the_tile_dace_boxes_only_what_is_read() -> None:
    """A stage read only at I+1 and I+2: GTFN computes it over the tile widened to there,
    DaCe only where it is read."""
    e = ir.MathCall("exp", (ir.MathCall("sin", (f,), F),), F)
    body = shift(add(e, shift(e, I=1), shift(e, J=1), shift(e, J=-1)), I=1)
    assert boxes(gtfn_plan(body, DIMS, Materialization.AUTO)) == [((0, -1), (2, 1))]
    assert boxes(dace_plan(body, DIMS, "p_", keep_all=True)) == [((1, -1), (2, 1))]


# --- what a family does not tile --------------------------------------------------------------


def test_a_node_the_family_does_not_tile_gives_no_plan() -> None:
    flx = hdiff_x(f)
    region = ir.ConcatWhere(
        I,
        (ir.Interval((ir.Bound(0, False),), (ir.Bound(1, False),)),),
        flx,
        f,
        F,
    )
    assert gtfn_plan(region, DIMS, Materialization.ALWAYS) is None  # a region is no box
    assert dace_plan(region, DIMS, "p_", keep_all=True) is None
    # an index: GTFN tiles it, the tiled SDFG does not
    index = add(flx, ir.Cast(ir.Index(J, ir.FieldType((J,), float64)), F))
    assert gtfn_plan(index, DIMS, Materialization.ALWAYS) is not None
    assert dace_plan(index, DIMS, "p_", keep_all=True) is None
    # a tuple: the tiled SDFG writes both outputs, GTFN tiles only one result
    pair = ir.MakeTuple((flx, f), ir.TupleType((F, F)))
    assert gtfn_plan(pair, DIMS, Materialization.ALWAYS) is None
    assert dace_plan(pair, DIMS, "p_", keep_all=True) is not None
    # a field over fewer dimensions than the call, and a call over one dimension: DaCe only
    assert (
        dace_plan(add(flx, ir.Ref("g", ir.FieldType((I,), float64))), DIMS, "p_", keep_all=True)
        is None
    )
    line = ir.FieldType((I,), float64)
    g = ir.Ref("g", line)
    one_d = ir.Binary("+", ir.Shift(g, ((I, 1),), line), ir.Shift(g, ((I, -1),), line), line)
    assert dace_plan(one_d, (I,), "p_", keep_all=True) is None


@pytest.mark.parametrize(
    "cost", [GTFNCost(Materialization.ALWAYS), DaCeCost("p_")], ids=["gtfn", "dace"]
)
def test_the_families_refuse_by_traits(cost: tiles.CostFunction) -> None:
    untiled = ir.NeighborShift.__name__, ir.NeighborReduce.__name__, ir.Call.__name__
    for node, traits in NODE_TRAITS.items():
        if node.__name__ in untiled:
            assert not cost.tiles(traits), node.__name__
        if node in (ir.Binary, ir.Shift, ir.Ref, ir.Literal, ir.MathCall):
            assert cost.tiles(traits), node.__name__


# --- the protocol -----------------------------------------------------------------------------


class KeepEverythingOnce:
    """A cost function of this test's own: every candidate of the whole body, one pass."""

    prefix = "t"
    holds_tile = False

    def tiles(self, traits: NodeTraits) -> bool:
        return not traits.calls_math

    def choose(self, candidates: Sequence[Candidate], dims: tuple[Dimension, ...]) -> Choice:
        ordered = sorted(candidates, key=lambda c: len(str(c.expr)))
        return Choice(tuple((c, 0.0) for c in ordered), final=True)


def test_a_cost_function_of_ones_own() -> None:
    plan = tiles.plan_tiles(hdiff_x(f), DIMS, KeepEverythingOnce())
    assert plan is not None and len(plan.stages) > 2
    assert {s.name for s in plan.stages} == {f"t{k}" for k in range(len(plan.stages))}
    assert_producers_first(plan)
    assert tiles.plan_tiles(lap(ir.MathCall("exp", (f,), F)), DIMS, KeepEverythingOnce()) is None


def test_candidates_are_what_a_container_evaluates_at_several_offsets() -> None:
    found = {c.expr: c.positions for c in tiles.candidates(lap(lap(f)), DIMS)}
    assert found[lap(f)] == frozenset({(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)})
    assert f not in found  # a read
    assert shift(f, I=1) not in found  # a shift
    assert tiles.operation_count(lap(f)) == 5
