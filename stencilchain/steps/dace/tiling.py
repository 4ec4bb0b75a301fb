"""Which intermediates of a call's inlined body the DaCe CPU translation materializes in
per-tile buffers (compound stencils such as hdiff), and the stages that compute them.

A field operator call is translated to one expression of the program's fields (calls
inlined). A sub-expression that the body evaluates at several offsets (hdiff's Laplacian
at five points, each limited flux at two) is recomputed at each of them by a pointwise
map. Under auto-optimization on the CPU such a call instead runs the way GridTools
schedules it: a parallel map over tiles of the domain, and inside each tile one
sequential map per stage, writing a buffer of the tile's size plus the halo its
readers need, the last stage writing the outputs (see `DaCeTranslator`).

The cost model (the same as the GTFN stage extraction's): a field-valued sub-expression
that is not a plain read is materialized when it is evaluated at `n >= 2` distinct
offsets and `(n - 1) * ops` (ops: its operations) exceeds `STORE_LOAD`, the cost of
storing and reloading a value. Of a candidate nested in another candidate only the outer
one is kept, unless the inner one is evaluated at more offsets (hdiff's Laplacian inside
a flux). Only bodies made of pointwise operations, cartesian shifts and reads of fields
over exactly the call's dimensions are tiled: evaluating any of those on the whole box
of a stage (its corners included) reads only inside the call's per-dimension halo, and
never traps (the emitter's integer division guards, IEEE floats).

Pure IR analysis: importing this module does not import DaCe.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.ir_walk import node_count
from stencilchain.program.offsets import Offsets, evaluation_offsets
from stencilchain.program.transforms import substitute

__all__ = ["MAX_FUSED_NODES", "STORE_LOAD", "Stage", "TilePlan", "fuse_temporaries", "plan_tiles"]

# The cost, in operations, of storing a value in a tile buffer and loading it back.
STORE_LOAD = 2
# The node classes a tiled body may contain.
_POINTWISE = (ir.Literal, ir.Ref, ir.Shift, ir.Unary, ir.Binary, ir.Where, ir.MathCall, ir.Cast)
_OPERATIONS = (ir.Unary, ir.Binary, ir.Where, ir.MathCall, ir.Cast)
# The largest body (in nodes, shared sub-expressions counted each time) that fusing a
# program's temporaries into their readers may make.
MAX_FUSED_NODES = 4000


@dataclasses.dataclass(frozen=True)
class Stage:
    """One materialized intermediate: `body` (other buffers read as `Ref`s to their
    names) computed into buffer `name` on the box `lo[d] <= offset <= hi[d]` around each
    point of a tile (offsets relative to the call's output point, per call dimension)."""

    name: str
    body: ir.Expr
    lo: Offsets
    hi: Offsets

    @property
    def type(self) -> ir.FieldType:
        assert isinstance(self.body.type, ir.FieldType)
        return self.body.type


@dataclasses.dataclass(frozen=True)
class TilePlan:
    """The stages of a tiled call, producers first, and the call's body reading them."""

    stages: tuple[Stage, ...]
    body: ir.Expr


def plan_tiles(body: ir.Expr, dims: tuple[Dimension, ...], prefix: str) -> TilePlan | None:
    """The stages materializing `body`'s intermediates (buffers named `<prefix>buf<k>`),
    or None when the body is not tiled (nothing worth materializing, or a node that the
    tiled translation does not handle)."""
    if len(dims) < 2 or not _tileable(body, dims):
        return None
    offsets = evaluation_offsets(body, dims)
    candidates: list[ir.Expr] = [
        e
        for e, at in offsets.items()
        if isinstance(e.type, ir.FieldType)
        and isinstance(e, _OPERATIONS)
        and len(at) >= 2
        and (len(at) - 1) * _ops(e) > STORE_LOAD
    ]
    kept = [
        c
        for c in candidates
        if not any(
            p is not c and len(offsets[c]) <= len(offsets[p]) and _contains(p, c)
            for p in candidates
        )
    ]
    if not kept:
        return None
    kept.sort(key=node_count)  # a sub-expression is smaller than its container: producers first
    names: dict[ir.Expr, str] = {e: f"{prefix}buf{k}" for k, e in enumerate(kept)}
    stages = []
    for e in kept:
        at = offsets[e]
        lo = tuple(min(o[k] for o in at) for k in range(len(dims)))
        hi = tuple(max(o[k] for o in at) for k in range(len(dims)))
        stage_body = ir.map_children(e, lambda c: _replace(c, names))
        stages.append(Stage(names[e], stage_body, lo, hi))
    return TilePlan(tuple(stages), _replace(body, names))


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
            if not _tileable(body, dims) or any(
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


def _tileable(expr: ir.Expr, dims: tuple[Dimension, ...]) -> bool:
    if isinstance(expr, ir.MakeTuple):
        return all(_tileable(e, dims) for e in expr.elems)
    if not isinstance(expr, _POINTWISE):
        return False
    if isinstance(expr, ir.Ref) and isinstance(expr.type, ir.FieldType):
        return expr.type.dims == dims
    if isinstance(expr, ir.Shift) and any(d not in dims for d, _ in expr.offsets):
        return False
    return all(_tileable(c, dims) for c in ir.children(expr))


def _ops(expr: ir.Expr) -> int:
    own = 1 if isinstance(expr, _OPERATIONS) else 0
    return own + sum(_ops(c) for c in ir.children(expr))


def _contains(outer: ir.Expr, inner: ir.Expr) -> bool:
    return any(c == inner or _contains(c, inner) for c in ir.children(outer))


def _replace(expr: ir.Expr, names: Mapping[ir.Expr, str]) -> ir.Expr:
    name = names.get(expr)
    if name is not None:
        assert isinstance(expr.type, ir.FieldType)
        return ir.Ref(name, expr.type)
    return ir.map_children(expr, lambda c: _replace(c, names))
