"""DaCe's side of the tile planner (`steps/tiles.py`): its cost function, which keeps in one
pass over the whole body every candidate whose recomputation costs more than computing it
once per point of the tile and its halo, storing and loading it, that no candidate evaluated
at as many offsets holds, and the fusion of a program's temporaries into the calls that read
them (the tiles then hold them). The SDFG of the tiles is `DaCeTranslator`'s (ADRs 0013, 0053).

Pure IR analysis: importing this module does not import DaCe.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.ir_walk import node_count, nodes
from stencilchain.program.node_traits import NodeTraits, Reach, traits_of
from stencilchain.program.offsets import evaluation_offsets
from stencilchain.program.transforms import substitute
from stencilchain.steps import tiles
from stencilchain.steps.tiles import (
    Candidate,
    Choice,
    Stage,
    TilePlan,
    is_field_read,
    operation_count,
)

__all__ = [
    "KEEP_COST",
    "MAX_FUSED_NODES",
    "STORE_LOAD",
    "DaCeCost",
    "Stage",
    "TilePlan",
    "cost",
    "fuse_temporaries",
    "plan_tiles",
    "tileable",
]

# What a value costs per evaluation (`cost`): a field read, a math function call; any other
# operation costs 1.
READ_COST = 0.5
MATH_COST = 8.0
# What keeping a value costs per point beyond its own cost: its store, the stage's loop and
# its inputs, and the loads of its readers; and the tile's halo that a stage computes too.
# Calibrated on the vectorized loops of a 2-core AVX-512 machine (ADR 0053): hdiff's
# Laplacian (5 offsets) and fluxes (2) run faster recomputed, a value of two math
# functions read at five offsets faster kept.
KEEP_COST = 30.0
TILE_HALO_FACTOR = 1.3
# With `keep_all`: the cost, in operations, of storing a value and loading it back.
STORE_LOAD = 2
# The largest body (in nodes, shared sub-expressions counted each time) that fusing a
# program's temporaries into their readers may make.
MAX_FUSED_NODES = 4000


@dataclasses.dataclass(frozen=True)
class DaCeCost:
    """Keeps, in one pass, each candidate evaluated at `n` offsets of the whole body with
    `n * c > TILE_HALO_FACTOR * c + KEEP_COST + n * READ_COST` (`c`: its `cost`) unless a
    larger such candidate holds it and is evaluated at as many offsets; smallest first.
    hdiff keeps nothing: its Laplacian and fluxes are recomputed where they are read.
    `keep_all` keeps instead every candidate whose `n - 1` recomputations cost more
    operations than a store and a load (STORE_LOAD): the tiled structure on small bodies,
    for tests."""

    prefix: str
    holds_tile: bool = False
    keep_all: bool = False

    def tiles(self, traits: NodeTraits) -> bool:
        return _tiled(traits)

    def choose(self, candidates: Sequence[Candidate], dims: tuple[Dimension, ...]) -> Choice:
        worth = [
            c
            for c in candidates
            if (
                (len(c.positions) - 1) * operation_count(c.expr) > STORE_LOAD
                if self.keep_all
                else _worth_keeping(len(c.positions), cost(c.expr, dims))
            )
        ]
        kept = [
            c
            for c in worth
            if not any(
                p is not c and len(c.positions) <= len(p.positions) and _inside(p.expr, c.expr)
                for p in worth
            )
        ]
        # a sub-expression is smaller than its container: producers first
        kept.sort(key=lambda c: node_count(c.expr))
        return Choice(tuple((c, cost(c.expr, dims)) for c in kept), final=True)


def _worth_keeping(n: int, c: float) -> bool:
    """Whether a value of cost `c` evaluated at `n` offsets costs more recomputed."""
    return n * c > TILE_HALO_FACTOR * c + KEEP_COST + n * READ_COST


def cost(expr: ir.Expr, dims: tuple[Dimension, ...]) -> float:
    """Operations and reads of one evaluation of `expr`, each distinct sub-expression once
    per offset at which it is evaluated (as the tasklet's code shares them)."""
    total = 0.0
    for e, at in evaluation_offsets(expr, dims).items():
        traits = traits_of(e)
        if is_field_read(e):
            total += READ_COST * len(at)
        elif traits.calls_math:
            total += MATH_COST * len(at)
        elif traits.operation:
            total += len(at)
    return total


def plan_tiles(
    body: ir.Expr, dims: tuple[Dimension, ...], prefix: str, *, keep_all: bool = False
) -> TilePlan | None:
    """The stages materializing `body`'s intermediates (buffers named `<prefix>buf<k>`),
    or None when the body is not tiled (nothing worth materializing, or a node or a field
    that the tiled translation does not handle); `keep_all` as for `DaCeCost`."""
    if len(dims) < 2 or not tileable(body, dims):
        return None
    return tiles.plan_tiles(body, dims, DaCeCost(f"{prefix}buf", keep_all=keep_all))


def fuse_temporaries(
    program: ir.Program, bodies: Mapping[int, ir.Expr]
) -> dict[int, ir.Expr] | None:
    """The bodies of the calls that write parameters, with every temporary they read
    replaced by the expression that made it (`bodies`: each call's inlined body, by
    index), or None where the program is not fused.

    A temporary is written once, and every read of it stays inside what its call wrote
    (both checked at definition), so the fused expression has its value wherever it is
    read. Fused only when every call is a field-operator call, no call writes a
    parameter that a call reads (the fused reads would see the new values), and every
    fused body is one the tiling handles and stays under MAX_FUSED_NODES: the stages of
    its tiles then hold in per-tile buffers what the temporaries held in whole arrays.
    """
    if not program.temporaries:
        return None
    fops = {f.name for f in program.field_operators}
    if any(call.callee not in fops for call in program.calls):
        return None
    written = {o for call in program.calls for o in call.outs if not program.is_temporary(o)}
    read = {a.name for call in program.calls for a in call.args if isinstance(a, ir.Ref)}
    if written & read:
        return None
    made: dict[str, ir.Expr] = {}
    fused: dict[int, ir.Expr] = {}
    for k, call in enumerate(program.calls):
        body = substitute(bodies[k], made)
        if not _smaller_than(body, MAX_FUSED_NODES):
            return None
        elements = body.elems if isinstance(body, ir.MakeTuple) else (body,)
        for name, element in zip(call.outs, elements):
            if program.is_temporary(name):
                made[name] = element
        if any(not program.is_temporary(o) for o in call.outs):
            dims = tuple(dd.dim for dd in call.domain.dims)
            if not tileable(body, dims) or any(
                isinstance(e.type, ir.FieldType) and e.type.dims != dims for e in elements
            ):
                return None
            fused[k] = body
    return fused


def _smaller_than(expr: ir.Expr, limit: int) -> bool:
    """Whether `expr` has fewer than `limit` nodes (stops counting there)."""
    count, stack = 0, [expr]
    while stack:
        count += 1
        if count >= limit:
            return False
        stack.extend(ir.children(stack.pop()))
    return True


def tileable(expr: ir.Expr, dims: tuple[Dimension, ...]) -> bool:
    """Whether the tiled SDFG handles `expr`: only nodes that `DaCeCost.tiles`, fields over
    exactly `dims`, shifts along them."""
    for e in nodes(expr):
        if not _tiled(traits_of(e)):
            return False
        if isinstance(e, ir.Ref) and isinstance(e.type, ir.FieldType) and e.type.dims != dims:
            return False
        if isinstance(e, ir.Shift) and any(d not in dims for d, _ in e.offsets):
            return False
    return True


def _tiled(traits: NodeTraits) -> bool:
    """Pointwise operations, shifts, literals, reads and tuples of them: evaluated on a
    stage's whole box, corners included, they read only inside the call's halo and never
    trap (the emitter's integer division guards, IEEE floats)."""
    return (
        traits.operation
        or traits.reach is Reach.OFFSET
        or traits.makes_tuple
        or (traits.leaf and not traits.reads_position)
    )


def _inside(outer: ir.Expr, inner: ir.Expr) -> bool:
    """Whether `inner` is a sub-expression of `outer` (not `outer` itself)."""
    below = nodes(outer)
    next(below)  # `outer` itself
    return any(node == inner for node in below)
