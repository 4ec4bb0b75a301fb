"""GTFN's side of the tile planner (`steps/tiles.py`): its cost function, which keeps the
largest candidate worth keeping and then prices the rest again, and its tile sizes
(ADR 0011 has the cost model and its calibration); for a call that keeps nothing, how many
neighbouring points one iteration of its loop nest computes together (`plan_jam`, ADR 0054)."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.ir_walk import node_count
from stencilchain.program.node_traits import NodeTraits, Reach, contains, traits_of
from stencilchain.program.offsets import Offsets, evaluation_offsets
from stencilchain.steps import tiles
from stencilchain.steps.cpp.loop_order import loop_order
from stencilchain.steps.tiles import Candidate, Choice, Stage, TilePlan, is_field_read

READ_COST = 0.5  # a field read
MATH_COST = 8.0  # a math function call; any other operation costs 1
KEEP_COST = 30.0  # a kept value per point beyond its arithmetic: its store, its loop, its inputs
TILE_HALO_FACTOR = 1.3  # a kept value is computed on the tile's halo points too
INNER_TILE = 256
MAX_TILE = 64
MIN_TILE = 4
TILE_BUDGET_BYTES = 256 * 1024
JAM_FACTORS = (2, 3, 4)  # points along one loop per iteration that `plan_jam` tries
JAM_GAIN = 0.15  # the least fraction of the work per point that jamming must save
JAM_STREAMS = 14  # the most arrays-at-an-offset that one iteration of a jammed loop walks

# Nodes whose reach is not a box of offsets (neighbours, regions, calls) are not tiled.
_UNTILED_REACH = frozenset({Reach.NEIGHBORS, Reach.LOCAL, Reach.REGION, Reach.CALLEE})


class Materialization(enum.Enum):
    """How the GTFN CPU translation treats intermediates read at several offsets."""

    AUTO = "auto"  # the cost model of `GTFNCost` decides, per call
    RECOMPUTE = "recompute"  # every value is recomputed where it is read (no tiles)
    ALWAYS = "always"  # every candidate is kept in tiles (tests of the tile edges)


@dataclasses.dataclass(frozen=True)
class GTFNCost:
    """Keeps, per round, the largest candidate evaluated at `n` offsets for which `n * c`
    inline exceeds `TILE_HALO_FACTOR * c + KEEP_COST + n * READ_COST` kept (`c`: `cost`);
    every candidate under ALWAYS. Kept stages count as reads in the next rounds."""

    mode: Materialization

    @property
    def prefix(self) -> str:
        return "sc_stage"

    @property
    def holds_tile(self) -> bool:
        return True  # a stage loop covers the tile, widened by its readers' reach

    def tiles(self, traits: NodeTraits) -> bool:
        return traits.reach not in _UNTILED_REACH and not traits.makes_tuple

    def choose(self, candidates: Sequence[Candidate], dims: tuple[Dimension, ...]) -> Choice:
        best: tuple[Candidate, float] | None = None
        best_size = 0
        rejected: set[ir.Expr] = set()
        for candidate in candidates:
            if candidate.expr in rejected:
                continue
            size = node_count(candidate.expr)
            if size <= best_size:
                continue
            c = cost(candidate.expr, dims)
            n = len(candidate.positions)
            worth = n * c > TILE_HALO_FACTOR * c + KEEP_COST + n * READ_COST
            if self.mode is Materialization.ALWAYS or worth:
                best, best_size = (candidate, c), size
            else:
                rejected.add(candidate.expr)
        return Choice(() if best is None else (best,), frozenset(rejected))


def plan_tiles(
    body: ir.Expr, dims: tuple[Dimension, ...], mode: Materialization
) -> TilePlan | None:
    """The tile plan of a call whose inlined body is `body` over `dims`, or None when it
    keeps nothing, recomputes by `mode`, or has a tuple result."""
    if mode is Materialization.RECOMPUTE or not isinstance(body.type, ir.FieldType):
        return None
    return tiles.plan_tiles(body, dims, GTFNCost(mode))


@dataclasses.dataclass(frozen=True)
class Jam:
    """Unroll-and-jam of a call's loop nest: each iteration of the loop along `dim` computes
    `factor` neighbouring points, the values they share (a node at the same offset) once,
    in registers. `cost` and `alone`: the work per point, jammed and one point at a time."""

    dim: Dimension
    factor: int
    cost: float
    alone: float


def plan_jam(
    body: ir.Expr, dims: tuple[Dimension, ...], inner: int, mode: Materialization, outputs: int
) -> Jam | None:
    """How the loop nest of a call with inlined `body` and `outputs` results over `dims`,
    `dims[inner]` innermost, is jammed: along the dimension of the outermost loop and by
    the factor of `JAM_FACTORS` with the least work per point (counted like `cost`, over
    the union of the points' offsets) that saves at least `JAM_GAIN` of a point's work
    alone and walks at most `JAM_STREAMS` streams (`streams`); None if there is none,
    under RECOMPUTE, or for a body with a node that is not a pointwise operation or a
    cartesian shift."""
    if mode is Materialization.RECOMPUTE or len(dims) < 2:
        return None
    if contains(body, lambda traits: traits.reach in _UNTILED_REACH or traits.makes_tuple):
        return None
    at = evaluation_offsets(body, dims)
    alone = _union_cost(at, dims, None, 1)
    for d in loop_order(dims, inner)[:-1]:
        k = dims.index(d)
        best: Jam | None = None
        for factor in JAM_FACTORS:
            jammed = _union_cost(at, dims, k, factor) / factor
            if (
                jammed <= (1.0 - JAM_GAIN) * alone
                and streams(at, dims, inner, k, factor) + factor * outputs <= JAM_STREAMS
                and (best is None or jammed < best.cost)
            ):
                best = Jam(d, factor, jammed, alone)
        if best is not None:
            return best
    return None


def streams(
    at: dict[ir.Expr, set[Offsets]],
    dims: tuple[Dimension, ...],
    inner: int,
    along: int,
    factor: int,
) -> int:
    """The fields at distinct offsets across the innermost dimension `dims[inner]` that
    `factor` points next to each other along `dims[along]` read: each is a stream of
    its own through the innermost loop, with an address of its own (GCC keeps one
    general-purpose register per stream; x86-64 has 16)."""
    found: set[tuple[ir.Expr, Offsets]] = set()
    for e, positions in at.items():
        if not is_field_read(e):
            continue
        assert isinstance(e.type, ir.FieldType)
        own = set(e.type.dims)
        for pos in positions:
            for u in range(factor):
                found.add(
                    (
                        e,
                        tuple(
                            p + (u if k == along else 0) if d in own and k != inner else 0
                            for k, (d, p) in enumerate(zip(dims, pos))
                        ),
                    )
                )
    return len(found)


def _union_cost(
    at: dict[ir.Expr, set[Offsets]], dims: tuple[Dimension, ...], along: int | None, factor: int
) -> float:
    """The work of `factor` points next to each other along `dims[along]`: each node once
    per distinct offset along its own dimensions, weighted like `cost`."""
    total = 0.0
    for e, positions in at.items():
        own = set(e.type.dims) if isinstance(e.type, ir.FieldType) else set()
        keys = {
            tuple(
                p + (u if k == along else 0) if d in own else 0
                for k, (d, p) in enumerate(zip(dims, pos))
            )
            for pos in positions
            for u in range(factor)
        }
        total += _weight(e) * len(keys)
    return total


def _weight(e: ir.Expr) -> float:
    """What one evaluation of node `e` costs by itself."""
    traits = traits_of(e)
    if is_field_read(e):
        return READ_COST
    if traits.calls_math:
        return MATH_COST
    return 1.0 if traits.operation else 0.0


def cost(expr: ir.Expr, dims: tuple[Dimension, ...]) -> float:
    """Operations and reads of one evaluation of `expr`, counted like the emitter shares
    them (once per node and offset)."""
    return sum(_weight(e) * len(at) for e, at in evaluation_offsets(expr, dims).items())


def element_bytes(plan: TilePlan) -> int:
    """The bytes of one element of the call's result, by which every buffer is sized."""
    assert isinstance(plan.result.type, ir.FieldType)
    return plan.result.type.dtype.numpy.itemsize


def tile_sizes(plan: TilePlan, inner: int) -> tuple[int, ...]:
    """Tile extents with `plan.dims[inner]` innermost: `INNER_TILE` along it, square along
    the other dimensions some stage has an extent along (halved from `MAX_TILE` until the
    buffers of one thread fit `TILE_BUDGET_BYTES`), one point along the rest."""
    haloed = [
        k
        for k in range(len(plan.dims))
        if k != inner and any(s.low[k] or s.high[k] for s in plan.stages)
    ]
    sizes = [1] * len(plan.dims)
    sizes[inner] = INNER_TILE
    size = MAX_TILE
    while True:
        for k in haloed:
            sizes[k] = size
        if size <= MIN_TILE or buffer_bytes(plan, sizes) <= TILE_BUDGET_BYTES:
            return tuple(sizes)
        size //= 2


def buffer_shape(stage: Stage, sizes: Sequence[int]) -> tuple[int, ...]:
    """The extents of `stage`'s buffer for a tile of `sizes`."""
    return tuple(t + h - lo for t, lo, h in zip(sizes, stage.low, stage.high))


def buffer_bytes(plan: TilePlan, sizes: Sequence[int]) -> int:
    """The bytes of one thread's buffers for a tile of `sizes`."""
    total = 0
    for stage in plan.stages:
        points = 1
        for extent in buffer_shape(stage, sizes):
            points *= extent
        total += points * element_bytes(plan)
    return total


def describe(plan: TilePlan, inner: int) -> list[str]:
    """What `--show-source` shows of the plan: a comment line per stage."""
    sizes = tile_sizes(plan, inner)
    extents = " x ".join(f"{d.name} {t}" for d, t in zip(plan.dims, sizes))
    lines = [f"tiles of {extents}; kept per tile (cost model: steps/gtfn/tiling.py):"]
    for s in plan.stages:
        reach = " ".join(
            f"{d.name}[{lo},{hi}]" for d, lo, hi in zip(plan.dims, s.low, s.high) if lo or hi
        )
        lines.append(
            f"  {s.name}: cost {s.cost:g}, evaluated at {s.positions} offsets inline"
            + (f", computed over the tile widened by {reach}" if reach else "")
        )
    return lines


__all__ = [
    "INNER_TILE",
    "JAM_FACTORS",
    "JAM_GAIN",
    "JAM_STREAMS",
    "MAX_TILE",
    "MIN_TILE",
    "TILE_BUDGET_BYTES",
    "GTFNCost",
    "Jam",
    "Materialization",
    "Stage",
    "TilePlan",
    "buffer_bytes",
    "buffer_shape",
    "cost",
    "describe",
    "element_bytes",
    "plan_jam",
    "plan_tiles",
    "streams",
    "tile_sizes",
]
