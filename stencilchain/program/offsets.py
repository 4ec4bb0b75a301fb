"""Where an inlined expression evaluates each of its sub-expressions: the offsets from the
current point, per node. The tile planner of both CPU translations (steps/tiles.py) finds
with it the intermediates read at several offsets."""

from __future__ import annotations

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension

Offsets = tuple[int, ...]  # one offset per dimension of `dims`, in its order


def evaluation_offsets(expr: ir.Expr, dims: tuple[Dimension, ...]) -> dict[ir.Expr, set[Offsets]]:
    """Each sub-expression of `expr` (by value) and the offsets, per dimension of `dims`,
    at which evaluating `expr` at offset 0 evaluates it. A broadcast value does not
    depend on the position along the dimensions it lacks: those offsets count as 0."""
    at: dict[ir.Expr, set[Offsets]] = {}
    visited: set[tuple[int, Offsets]] = set()
    index = {d: k for k, d in enumerate(dims)}
    stack: list[tuple[ir.Expr, Offsets]] = [(expr, (0,) * len(dims))]
    while stack:
        node, pos = stack.pop()
        if (id(node), pos) in visited:
            continue
        visited.add((id(node), pos))
        at.setdefault(node, set()).add(pos)
        if isinstance(node, ir.Shift):
            moved = list(pos)
            for dim, amount in node.offsets:
                moved[index[dim]] += amount
            stack.append((node.expr, tuple(moved)))
        elif isinstance(node, ir.Broadcast):
            inner = node.expr.type
            kept = set(inner.dims) if isinstance(inner, ir.FieldType) else set()
            stack.append((node.expr, tuple(p if d in kept else 0 for d, p in zip(dims, pos))))
        else:
            # reversed: the walk meets the children left to right (the order of the keys)
            stack.extend((child, pos) for child in reversed(ir.children(node)))
    return at


__all__ = ["Offsets", "evaluation_offsets"]
