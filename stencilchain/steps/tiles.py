"""The one tile planner of both families: which intermediates of a call's inlined body are
computed once per point of a tile into a buffer (the stages, with their extents) instead of
at every offset they are read at. Each family supplies its cost function (ADR 0020)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.ir_walk import refs_in, rewrite
from stencilchain.program.node_traits import NodeTraits, Reach, contains, traits_of
from stencilchain.program.offsets import Offsets, evaluation_offsets


@dataclasses.dataclass(frozen=True)
class Stage:
    """An intermediate kept in the buffer `name`: `expr` (the stages before it read as Refs
    to their names) computed at the offsets [`low`, `high`], per dimension of the call,
    around each point of a tile. `positions`: the offsets its container evaluated it at;
    `cost`: one evaluation, as the family's cost function priced it."""

    name: str
    expr: ir.Expr
    low: Offsets
    high: Offsets
    positions: int
    cost: float

    @property
    def type(self) -> ir.FieldType:
        assert isinstance(self.expr.type, ir.FieldType)
        return self.expr.type


@dataclasses.dataclass(frozen=True)
class TilePlan:
    """The stages of one call over `dims`, producers first, and its result reading them."""

    dims: tuple[Dimension, ...]
    stages: tuple[Stage, ...]
    result: ir.Expr


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A sub-expression that its container (the result, or a stage kept before) evaluates
    at two or more `positions`."""

    expr: ir.Expr
    positions: frozenset[Offsets]


@dataclasses.dataclass(frozen=True)
class Choice:
    """A cost function's decision in one round: the candidates to keep, each with its cost
    (the stages are named in this order); the expressions it found not worth keeping (never
    offered again); `final`: decide no further round."""

    keep: tuple[tuple[Candidate, float], ...] = ()
    rejected: frozenset[ir.Expr] = frozenset()
    final: bool = False


class CostFunction(Protocol):
    """What a family supplies to `plan_tiles`."""

    @property
    def prefix(self) -> str:
        """Stage k is named `prefix` + k."""
        ...

    @property
    def holds_tile(self) -> bool:
        """Whether each stage's box holds the tile itself (offset 0) even along a dimension
        where its readers read it only elsewhere."""
        ...

    def tiles(self, traits: NodeTraits) -> bool:
        """Whether the family's tiled emitter handles a node with these traits."""
        ...

    def choose(self, candidates: Sequence[Candidate], dims: tuple[Dimension, ...]) -> Choice:
        """Which of `candidates` (the result's, then each kept stage's) to keep now."""
        ...


def plan_tiles(body: ir.Expr, dims: tuple[Dimension, ...], cost: CostFunction) -> TilePlan | None:
    """The stages that `cost` keeps of `body` (a call's inlined body over `dims`), or None
    when it keeps none or the body has a node that the family does not tile. Round by
    round the cost function chooses among the candidates of the result and the stages kept
    so far, each chosen expression is replaced by a Ref to its stage, until it keeps none."""
    if contains(body, lambda traits: not cost.tiles(traits)):
        return None
    result = body
    kept: dict[str, ir.Expr] = {}  # stage name -> its expression, in the order kept
    info: dict[str, tuple[int, float]] = {}  # stage name -> (positions, cost)
    rejected: set[ir.Expr] = set()
    while True:
        offered = [
            c
            for container in (result, *kept.values())
            for c in candidates(container, dims)
            if c.expr not in rejected
        ]
        choice = cost.choose(offered, dims)
        rejected |= choice.rejected
        names: dict[ir.Expr, str] = {}
        for candidate, price in choice.keep:
            if candidate.expr not in names:
                name = f"{cost.prefix}{len(kept) + len(names)}"
                names[candidate.expr] = name
                info[name] = (len(candidate.positions), price)
        if names:
            replace = functools.partial(_replaced, names=names)
            result = replace(result)
            kept = {name: replace(e) for name, e in kept.items()}
            for e, name in names.items():
                kept[name] = ir.map_children(e, replace)
        if choice.final or not names:
            break
    if not kept:
        return None
    order = dependency_order(kept)
    boxes = extents(result, kept, order, dims, holds_tile=cost.holds_tile)
    stages = tuple(Stage(name, kept[name], *boxes[name], *info[name]) for name in order)
    return TilePlan(dims, stages, result)


def candidates(container: ir.Expr, dims: tuple[Dimension, ...]) -> list[Candidate]:
    """The sub-expressions that `container` evaluates at two or more offsets and that
    compute a field over `dims` (a leaf, a shift or a change of dimensions only reads:
    keeping one saves nothing), in the order of `evaluation_offsets`."""
    return [
        Candidate(e, frozenset(at))
        for e, at in evaluation_offsets(container, dims).items()
        if len(at) >= 2
        and computes(traits_of(e))
        and isinstance(e.type, ir.FieldType)
        and set(e.type.dims) == set(dims)
    ]


def computes(traits: NodeTraits) -> bool:
    """Whether a node with these traits does work of its own at the point: not a leaf, a
    shift or a change of dimensions."""
    return not traits.leaf and traits.reach is not Reach.OFFSET and not traits.changes_dims


def is_field_read(expr: ir.Expr) -> bool:
    """Whether `expr` reads a field at the point (a leaf reaching the point, field-valued)."""
    traits = traits_of(expr)
    return traits.leaf and traits.reach is Reach.POINT and isinstance(expr.type, ir.FieldType)


def operation_count(expr: ir.Expr) -> int:
    """The operations of `expr` as a tree (a shared sub-expression counted where it occurs),
    each object's count computed once (docs/adr/0056)."""
    counts: dict[int, tuple[ir.Expr, int]] = {}

    def count(e: ir.Expr) -> int:
        known = counts.get(id(e))
        if known is None:
            own = 1 if traits_of(e).operation else 0
            known = counts[id(e)] = (e, own + sum(count(c) for c in ir.children(e)))
        return known[1]

    return count(expr)


def dependency_order(kept: Mapping[str, ir.Expr]) -> list[str]:
    """The stage names, each after the stages its expression reads (depth first, in the
    order they were kept)."""
    order: list[str] = []
    done: set[str] = set()

    def visit(name: str) -> None:
        if name in done:
            return
        done.add(name)
        reads = {r.name for r in refs_in(kept[name])}
        for dep in kept:
            if dep in reads:
                visit(dep)
        order.append(name)

    for name in kept:
        visit(name)
    return order


def extents(
    result: ir.Expr,
    kept: Mapping[str, ir.Expr],
    order: Sequence[str],
    dims: tuple[Dimension, ...],
    *,
    holds_tile: bool,
) -> dict[str, tuple[Offsets, Offsets]]:
    """Each stage's box of offsets around a tile point, from the result backwards: a stage
    is needed wherever its readers (over their own boxes) read it, and at offset 0 too
    where `holds_tile`."""
    zero = (0,) * len(dims)
    boxes: dict[str, tuple[Offsets, Offsets]] = {}
    readers: list[tuple[ir.Expr, Offsets, Offsets]] = [(result, zero, zero)]
    for name in reversed(order):
        reached = [
            tuple(r + off for r, off in zip(side, offsets))
            for reader, r_low, r_high in readers
            for offsets in reads_of(reader, name, dims)
            for side in (r_low, r_high)
        ]
        if holds_tile or not reached:
            reached.append(zero)
        low = tuple(min(p[k] for p in reached) for k in range(len(dims)))
        high = tuple(max(p[k] for p in reached) for k in range(len(dims)))
        boxes[name] = (low, high)
        readers.append((kept[name], *boxes[name]))
    return boxes


def reads_of(expr: ir.Expr, name: str, dims: tuple[Dimension, ...]) -> set[Offsets]:
    """The offsets at which `expr` (evaluated at offset 0) reads the Ref `name`."""
    return {
        pos
        for e, positions in evaluation_offsets(expr, dims).items()
        if isinstance(e, ir.Ref) and e.name == name
        for pos in positions
    }


def _replaced(expr: ir.Expr, names: Mapping[ir.Expr, str]) -> ir.Expr:
    """`expr` with each sub-expression that `names` holds replaced by a Ref to its name
    (outermost first)."""

    def step(e: ir.Expr, again: Callable[[ir.Expr], ir.Expr]) -> ir.Expr:
        name = names.get(e)
        if name is not None:
            assert isinstance(e.type, ir.FieldType)
            return ir.Ref(name, e.type)
        return ir.map_children(e, again)

    return rewrite(expr, step)


__all__ = [
    "Candidate",
    "Choice",
    "CostFunction",
    "Stage",
    "TilePlan",
    "candidates",
    "computes",
    "dependency_order",
    "extents",
    "is_field_read",
    "operation_count",
    "plan_tiles",
    "reads_of",
]
