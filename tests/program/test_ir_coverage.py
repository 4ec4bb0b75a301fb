"""Every IR node and every math function is covered by every backend.

The IR has one dispatch mechanism (`ir.ExprVisitor`): a backend handles a node class by a
`visit_<ClassName>` method. These tests name what a backend lacks, so that adding a node
to `ir.Expr` fails here until each backend has one method for it.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import pytest

import stencilchain as sc
from stencilchain.program import ir, ir_nodes, semantics
from stencilchain.steps.cpp import expressions

# The modules that define the visitors; every ExprVisitor subclass they hold is checked.
VISITOR_MODULES = (
    "stencilchain.program.embedded",
    "stencilchain.program.extents",
    "stencilchain.program.pretty",
    "stencilchain.program.table_reads",
    "stencilchain.steps.cpp.expressions",
    "stencilchain.steps.gtfn.translation",
    "stencilchain.steps.dace.translator",
)
# The backends' visitors by name: the embedded executor, the extents walker, the pretty
# printer, the C++ emitter of both families, and the walker of the table entries a call
# over fields' own ranges reads (program/table_reads.py).
EXPECTED_VISITORS = {
    "Evaluator",
    "ExtentsWalker",
    "ExprFormatter",
    "ExpressionEmitter",
    "ReadsWalker",
}
# The visitors that run while a program is traced, before the lowering of the nodes of
# ir.LOWERED_WHEN_TRACED (a scan called in a field operator becomes program calls in
# ProgramTrace.record_call): they handle those nodes too. No other visitor ever sees one,
# so the others are exempt from them; visiting one anyway is an internal error that says so.
TRACE_TIME_VISITORS = {"ExtentsWalker", "ExprFormatter"}


def visitor_classes() -> list[type[ir.ExprVisitor[Any]]]:
    for module in VISITOR_MODULES:
        importlib.import_module(module)
    found: list[type[ir.ExprVisitor[Any]]] = []
    pending = list(ir.ExprVisitor.__subclasses__())
    while pending:
        cls = pending.pop()
        pending += cls.__subclasses__()
        if cls.__module__.startswith("stencilchain."):
            found.append(cls)
    return sorted(found, key=lambda c: c.__name__)


def missing_nodes(visitor: type[ir.ExprVisitor[Any]]) -> str:
    """'' when `visitor` handles every node class it can meet, else what it lacks, by name."""
    lacking = visitor.unhandled()
    if visitor.__name__ not in TRACE_TIME_VISITORS:
        lacking = tuple(n for n in lacking if n not in ir.LOWERED_WHEN_TRACED)
    if not lacking:
        return ""
    return f"{visitor.__name__} does not handle {', '.join(n.__name__ for n in lacking)}"


def test_the_backends_visitors_are_found() -> None:
    names = {cls.__name__ for cls in visitor_classes()}
    assert names >= EXPECTED_VISITORS, f"visitors not found: {EXPECTED_VISITORS - names}"


@pytest.mark.parametrize("visitor", visitor_classes(), ids=lambda c: c.__name__)
def test_every_visitor_handles_every_node(visitor: type[ir.ExprVisitor[Any]]) -> None:
    assert missing_nodes(visitor) == "", missing_nodes(visitor)


def test_an_incomplete_visitor_is_flagged() -> None:
    class WithoutCast(expressions.ExpressionEmitter):
        visit_Cast = None  # type: ignore[assignment]

    class OnlyLiterals(ir.ExprVisitor[str]):
        def visit_Literal(self, expr: ir.Literal) -> str:
            return repr(expr.value)

    assert missing_nodes(WithoutCast) == "WithoutCast does not handle Cast"
    assert set(OnlyLiterals.unhandled()) == set(ir.EXPR_NODES) - {ir.Literal}
    assert OnlyLiterals().visit(ir.Literal(1.5, sc.float64)) == "1.5"
    scan_call = ir.ScanCall("s", (), I, True, ir.FieldType((I,), sc.float64))
    with pytest.raises(
        TypeError, match="internal error: OnlyLiterals was given an IR node ScanCall"
    ):
        OnlyLiterals().visit(scan_call)
    cast = ir.Cast(ir.Literal(1.5, sc.float64), sc.int32)
    emitter = WithoutCast(lambda name, pos: name, lambda name: name, cse=False)
    with pytest.raises(TypeError, match="WithoutCast does not handle the IR node Cast"):
        emitter.emit(cast, {})


# --- tables -------------------------------------------------------------------------------

MATH_TABLES = {
    "the meaning of the operations (semantics.MATH)": semantics.MATH,
    "the C++ emitter (cpp.expressions.MATH)": expressions.MATH,
}


@pytest.mark.parametrize("table", MATH_TABLES, ids=["semantics", "cpp"])
def test_every_math_function_has_an_entry(table: str) -> None:
    lacking = [fn for fn in ir.MATH_FUNCTIONS if fn not in MATH_TABLES[table]]
    assert not lacking, f"{table} has no entry for {', '.join(lacking)}"


def test_every_neighbour_reduction_has_an_entry() -> None:
    lacking = [op for op in ir.NEIGHBOR_REDUCTIONS if op not in semantics.REDUCTIONS]
    assert not lacking, f"program/semantics.py has no reduction for {', '.join(lacking)}"
    for op in ir.NEIGHBOR_REDUCTIONS:  # the value over no neighbour, which C++ also uses
        semantics.neighbor_identity(op, sc.float32.numpy)
        semantics.neighbor_identity(op, sc.int64.numpy)


def test_every_operator_has_an_entry() -> None:
    lacking = [op for op in ir.BINARY_OPS if op not in semantics.BINARY]
    lacking += [op for op in ir.UNARY_OPS if op not in semantics.UNARY]
    assert not lacking, f"program/semantics.py has no entry for {', '.join(lacking)}"
    # pow is a function call (or squarings), the integer operations guarded expressions,
    # every other binary operator one infix operator (bitwise too for the logical ones)
    lacking = [
        op
        for op in ir.BINARY_OPS
        if op != "pow" and op not in expressions.INFIX and op not in expressions.INTEGER_OPERATIONS
    ]
    lacking += [op for op in ir.INTEGER_OPS if op not in expressions.INTEGER_OPERATIONS]
    lacking += [op for op in ir.LOGICAL_OPS if op not in expressions.BITWISE]
    assert not lacking, f"the C++ emitter has no operator for {', '.join(lacking)}"


# --- children and map_children, generic over the node's fields --------------------------------

I = sc.Dimension("I")
F = sc.Field[[I], sc.float64]


@sc.field_operator
def halves(f: F):  # type: ignore[no-untyped-def]
    return f * 0.5, -f


J = sc.Dimension("J")
FIJ = sc.Field[[I, J], sc.float64]


@sc.scan_operator(axis=J, init=0.0)
def running_sum(total, g: FIJ):  # type: ignore[no-untyped-def]
    return total + g


@sc.field_operator
def every_node(f: F, a: sc.float64, g: FIJ, off: sc.Field[[I, J], sc.int32]) -> FIJ:
    first = halves(f(I + 1))[0]  # Call, TupleGet, Shift
    picked = sc.where(f > a, sc.math.sqrt(f), first)  # Where, MathCall, Binary, Ref
    cast = sc.astype(sc.astype(picked, sc.float32), sc.float64) + 2.0  # Cast, Literal
    edge = sc.concat_where(J == 0, g(J + 1), g) + g(sc.as_offset(J, off))  # ..., DynamicShift
    return cast * running_sum(edge) + sc.astype(
        sc.index(J), sc.float64
    )  # ScanCall, Broadcast, Index


Cell, Edge = sc.Dimension("Cell"), sc.Dimension("Edge")
C2EDim = sc.Dimension("C2EDim", kind=sc.LOCAL)
C2E = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=3)


@sc.field_operator
def mesh_nodes(e: sc.Field[[Edge], sc.float64]) -> sc.Field[[Cell], sc.float64]:
    # NeighborReduce, NeighborShift, LocalSlot
    return sc.neighbor_sum(e(C2E), axis=C2EDim) + e(C2E[0]) + e(C2E)[C2EDim(1)]


@sc.program
def mesh_nodes_program(
    e: sc.Field[[Edge], sc.float64], c2e: sc.Table[C2E], out: sc.Field[[Cell], sc.float64]
) -> None:
    mesh_nodes(e, out=out)


def all_nodes(expr: ir.Expr) -> list[ir.Expr]:
    return [expr, *(n for child in ir.children(expr) for n in all_nodes(child))]


def test_children_and_map_children_cover_every_node() -> None:
    nodes = [
        n
        for fop in (*every_node.definitions().values(), *mesh_nodes.definitions().values())
        for n in all_nodes(fop.body)
    ]
    seen = {type(n) for n in nodes}
    assert seen == set(ir.EXPR_NODES), f"not reached: {set(ir.EXPR_NODES) - seen}"
    tagged = ir.Literal(7, sc.int64)
    for node in nodes:
        assert ir.map_children(node, lambda e: e) == node
        replaced = ir.map_children(node, lambda e: tagged)
        assert ir.children(replaced) == tuple(tagged for _ in ir.children(node))
        assert type(replaced) is type(node)


def test_every_node_has_a_row_of_traits() -> None:
    """The node-traits table (program/node_traits.py) has exactly one row per IR node, so a
    new node cannot reach the tilers, folding or the distributed refusals without one."""
    from stencilchain.program.node_traits import NODE_TRAITS

    assert set(NODE_TRAITS) == set(ir.EXPR_NODES), (
        f"rows missing: {sorted(n.__name__ for n in set(ir.EXPR_NODES) - set(NODE_TRAITS))}; "
        f"rows for no node: {sorted(n.__name__ for n in set(NODE_TRAITS) - set(ir.EXPR_NODES))}"
    )


def test_the_traits_agree_with_the_nodes() -> None:
    """A leaf has no sub-expression field, and every other node has one; a node that reads
    a position names the dimension it reads."""
    from stencilchain.program.node_traits import NODE_TRAITS

    for node, traits in NODE_TRAITS.items():
        assert traits.leaf == (not ir_nodes._sub_expressions(node)), node.__name__
        if traits.reads_position:
            assert "dim" in {f.name for f in dataclasses.fields(node)}, node.__name__
            assert "{dim}" in traits.written, node.__name__  # what the refusals say
