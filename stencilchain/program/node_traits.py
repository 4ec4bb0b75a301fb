"""What each IR expression node is, as the passes that do not visit every node need to know
it: one row per class of `ir.EXPR_NODES` (tests/program/test_ir_coverage.py checks that
there is one), read by constant folding, the tile planner and the distributed refusals
instead of lists of classes of their own."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.ir_walk import nodes
from stencilchain.program.records import frozen


class Reach(enum.Enum):
    """Where a node reads its operands, relative to the point it is evaluated at."""

    NOTHING = "nothing"  # reads no operand (a literal, an index)
    POINT = "point"  # its operands at the same point
    OFFSET = "offset"  # its operand at a fixed Cartesian offset (a shift)
    NEIGHBORS = "neighbors"  # its operand at the neighbours a table lists
    LOCAL = "local"  # every slot of its operand's local dimension at the point
    REGION = "region"  # each operand only where the node's condition selects it
    CALLEE = "callee"  # as far as the called operator reaches
    COLUMN = "column"  # along a whole column (a scan)


@frozen
class NodeTraits:
    """The traits of one node class.

    `leaf`: has no sub-expression. `operation`: computes a value from its operands at the
    point (what a cost model counts as work). `foldable`: evaluated at translation time when
    every operand is a literal. `reads_position`: its value depends on the global index
    along its `dim` (so a split of `dim` over ranks changes it). `reads_table`: reads a
    connectivity table. `makes_tuple`: its value is a tuple. `changes_dims`: its value is
    over other dimensions than its operand's. `calls_math`: an operation that calls a math
    function (a cost model weighs it above arithmetic). `written`: how a message names the
    node, with `{dim}` for its `dim` (nodes that read a position)."""

    reach: Reach
    leaf: bool = False
    operation: bool = False
    foldable: bool = False
    reads_position: bool = False
    reads_table: bool = False
    makes_tuple: bool = False
    changes_dims: bool = False
    calls_math: bool = False
    written: str = ""


_OPERATION = NodeTraits(Reach.POINT, operation=True, foldable=True)

NODE_TRAITS: Mapping[type[ir.Expr], NodeTraits] = {
    ir.Literal: NodeTraits(Reach.NOTHING, leaf=True),
    ir.Ref: NodeTraits(Reach.POINT, leaf=True),
    ir.Shift: NodeTraits(Reach.OFFSET),
    ir.Unary: _OPERATION,
    ir.Binary: _OPERATION,
    ir.Where: _OPERATION,
    ir.MathCall: NodeTraits(Reach.POINT, operation=True, foldable=True, calls_math=True),
    ir.Cast: _OPERATION,
    ir.Call: NodeTraits(Reach.CALLEE),
    ir.ScanCall: NodeTraits(Reach.COLUMN),
    ir.Broadcast: NodeTraits(Reach.POINT, changes_dims=True),
    ir.Index: NodeTraits(Reach.NOTHING, leaf=True, reads_position=True, written="index({dim})"),
    ir.NeighborShift: NodeTraits(Reach.NEIGHBORS, reads_table=True, changes_dims=True),
    ir.NeighborReduce: NodeTraits(Reach.LOCAL, reads_table=True, changes_dims=True),
    ir.LocalSlot: NodeTraits(Reach.LOCAL, changes_dims=True),
    # reads its operand where an offset field points along `dim`, as a table points
    ir.DynamicShift: NodeTraits(Reach.NEIGHBORS, reads_position=True, written="as_offset({dim})"),
    ir.ConcatWhere: NodeTraits(
        Reach.REGION, reads_position=True, written="concat_where along {dim}"
    ),
    ir.MakeTuple: NodeTraits(Reach.POINT, makes_tuple=True),
    ir.TupleGet: NodeTraits(Reach.POINT),
}


def traits_of(expr: ir.Expr) -> NodeTraits:
    """The traits of `expr`'s node class."""
    return NODE_TRAITS[type(expr)]


def position_dim(expr: ir.Expr) -> Dimension:
    """The dimension along which a node whose traits say `reads_position` reads the global
    index (its `dim`)."""
    dim = getattr(expr, "dim", None)
    if not traits_of(expr).reads_position or not isinstance(dim, Dimension):
        raise TypeError(f"{type(expr).__name__} reads no position")
    return dim


def contains(expr: ir.Expr, has: Callable[[NodeTraits], bool]) -> bool:
    """Whether `expr` or any node below it has traits for which `has` is true (each shared
    sub-expression looked at once)."""
    return any(has(NODE_TRAITS[type(e)]) for e in nodes(expr))


__all__ = ["NODE_TRAITS", "NodeTraits", "Reach", "contains", "position_dim", "traits_of"]
