"""Materialization of intermediate values in tiles: the cost model of the GTFN translation.

Inlining a compound stencil (hdiff: fluxes of Laplacians) evaluates an intermediate value
once per offset it is read at: the Laplacian five times per output point. The CPU
translation can instead compute such a value once per point of a tile, into a small
per-thread buffer that stays in cache, and read it from there (GridTools' and Halide's
schedules). `plan_tiles` decides, per call, which intermediates ("stages") to keep:

- a candidate is a field-valued sub-expression of the inlined body over all of the
  call's dimensions that is evaluated at two or more distinct offsets (not a plain read);
- its cost `c` counts its operations (math functions `MATH_COST` each) and its reads
  (`READ_COST` each), with the stages chosen inside it counted as reads;
- evaluated at `n` offsets it costs `n * c` inline; kept, it costs `TILE_HALO_FACTOR * c`
  (the tile's halo points are computed too) plus `KEEP_COST` and `n * READ_COST`:
  it is kept when that is less. `KEEP_COST` is what a kept value costs per point beyond
  its arithmetic: its store, its own loop nest over short tile rows, and the inputs read
  tile by tile instead of plane by plane. Measured (2026-11-30, 2-core AMD EPYC with
  AVX-512, one thread, `-march=native`): hdiff 256x256x80 took 11 ms inline and 16-17 ms
  with its Laplacian alone or with both fluxes too in tiles, C or Fortran order, with any
  tile budget from 64 KiB to 4 MiB; a value costing two math functions (`exp(sin(f))`)
  read at five offsets took 305 ms inline and 85 ms in tiles. `KEEP_COST` = 30 puts the
  line between them: vectorized arithmetic is recomputed, math functions are kept;
- the largest candidate worth keeping is kept first, then the rest is priced within
  each kept stage (a Laplacian read at two offsets of a kept flux), until none is worth it.

A stage is computed over the tile widened by its extent: the offsets at which its
readers (the result, or later stages, over their own widened tiles) read it. Along each
dimension that reach is the reach of the inlined expression, so the call's halo check
covers it. Tiles are `INNER_TILE` points along the innermost (unit-stride) dimension and
square along the other dimensions that some stage has an extent along (halved from
`MAX_TILE` until the buffers of one thread fit `TILE_BUDGET_BYTES`); one point along the
rest.

Calls that are not planned: scans, tuple results, neighbour reads and `concat_where`
(their reach is not a box of offsets), and calls without a stage worth keeping.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.ir_walk import node_count, refs_in, replace
from stencilchain.program.offsets import Offsets, evaluation_offsets

READ_COST = 0.5
MATH_COST = 8.0
KEEP_COST = 30.0
TILE_HALO_FACTOR = 1.3
INNER_TILE = 256
MAX_TILE = 64
MIN_TILE = 4
TILE_BUDGET_BYTES = 256 * 1024


class Materialization(enum.Enum):
    """How the GTFN CPU translation treats intermediates read at several offsets."""

    AUTO = "auto"  # the cost model of `plan_tiles` decides, per call
    RECOMPUTE = "recompute"  # every value is recomputed where it is read (no tiles)
    ALWAYS = "always"  # every candidate is kept in tiles (tests of the tile edges)


@dataclasses.dataclass(frozen=True)
class Stage:
    """An intermediate value kept in a per-thread tile buffer `name`: `expr` reads the
    stages before it as Refs to their names. It is computed at the offsets
    [`low`, `high`] (per dimension of the call) around each point of the tile."""

    name: str
    expr: ir.Expr
    low: Offsets
    high: Offsets
    positions: int  # distinct offsets the inlined body evaluates it at
    cost: float


@dataclasses.dataclass(frozen=True)
class TilePlan:
    """The stages of one call (innermost first), its result reading them, and the tile
    size per dimension of the call's domain for each choice of innermost dimension."""

    dims: tuple[Dimension, ...]
    stages: tuple[Stage, ...]
    result: ir.Expr
    dtype_bytes: int

    def tile_sizes(self, inner: int) -> tuple[int, ...]:
        """Tile extents with `dims[inner]` innermost: see the module docstring."""
        haloed = [
            k
            for k in range(len(self.dims))
            if k != inner and any(s.low[k] or s.high[k] for s in self.stages)
        ]
        sizes = [1] * len(self.dims)
        sizes[inner] = INNER_TILE
        size = MAX_TILE
        while True:
            for k in haloed:
                sizes[k] = size
            if size <= MIN_TILE or self.buffer_bytes(sizes) <= TILE_BUDGET_BYTES:
                return tuple(sizes)
            size //= 2

    def buffer_shape(self, stage: Stage, sizes: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(t + h - lo for t, lo, h in zip(sizes, stage.low, stage.high))

    def buffer_bytes(self, sizes: list[int] | tuple[int, ...]) -> int:
        total = 0
        for stage in self.stages:
            points = 1
            for extent in self.buffer_shape(stage, tuple(sizes)):
                points *= extent
            total += points * self.dtype_bytes
        return total

    def describe(self, inner: int) -> list[str]:
        """What `--show-source` shows of the plan: a comment line per stage."""
        sizes = self.tile_sizes(inner)
        tiles = " x ".join(f"{d.name} {t}" for d, t in zip(self.dims, sizes))
        lines = [f"tiles of {tiles}; kept per tile (cost model: steps/gtfn/tiling.py):"]
        for s in self.stages:
            reach = " ".join(
                f"{d.name}[{lo},{hi}]" for d, lo, hi in zip(self.dims, s.low, s.high) if lo or hi
            )
            lines.append(
                f"  {s.name}: cost {s.cost:g}, evaluated at {s.positions} offsets inline"
                + (f", computed over the tile widened by {reach}" if reach else "")
            )
        return lines


_UNPLANNED = (ir.NeighborShift, ir.NeighborReduce, ir.ConcatWhere, ir.MakeTuple, ir.Call)
_LEAVES = (ir.Ref, ir.Literal, ir.Index)


def plan_tiles(
    body: ir.Expr, dims: tuple[Dimension, ...], mode: Materialization
) -> TilePlan | None:
    """The tile plan of a call whose inlined body is `body` over `dims`, or None when it
    keeps nothing (see the module docstring)."""
    if mode is Materialization.RECOMPUTE or not isinstance(body.type, ir.FieldType):
        return None
    if _contains(body, _UNPLANNED):
        return None
    result: ir.Expr = body
    kept: dict[str, ir.Expr] = {}  # stage name -> its expression
    info: dict[str, tuple[int, float]] = {}
    rejected: set[ir.Expr] = set()
    while True:
        found = _best_candidate([result, *kept.values()], dims, mode, rejected)
        if found is None:
            break
        expr, n, cost = found
        assert isinstance(expr.type, ir.FieldType)
        name = f"sc_stage{len(kept)}"
        ref = ir.Ref(name, expr.type)
        result = replace(result, expr, ref)
        kept = {k: replace(e, expr, ref) for k, e in kept.items()}
        kept[name] = expr
        info[name] = (n, cost)
    if not kept:
        return None
    order = _dependency_order(kept)
    # extents, from the result backwards: a stage is needed where its readers read it
    low = {name: [0] * len(dims) for name in order}
    high = {name: [0] * len(dims) for name in order}
    readers: list[tuple[ir.Expr, list[int], list[int]]] = [
        (result, [0] * len(dims), [0] * len(dims))
    ]
    for name in reversed(order):
        for reader, r_low, r_high in readers:
            for offsets in _reads_of(reader, name, dims):
                for k, off in enumerate(offsets):
                    low[name][k] = min(low[name][k], r_low[k] + off)
                    high[name][k] = max(high[name][k], r_high[k] + off)
        readers.append((kept[name], low[name], high[name]))
    assert isinstance(body.type, ir.FieldType)
    stages = tuple(
        Stage(name, kept[name], tuple(low[name]), tuple(high[name]), *info[name]) for name in order
    )
    return TilePlan(dims, stages, result, body.type.dtype.numpy.itemsize)


def _best_candidate(
    containers: list[ir.Expr],
    dims: tuple[Dimension, ...],
    mode: Materialization,
    rejected: set[ir.Expr],
) -> tuple[ir.Expr, int, float] | None:
    """The largest sub-expression worth keeping: evaluated at `n >= 2` offsets within one
    evaluation of a container (the result or a kept stage), with its cost."""
    best: tuple[ir.Expr, int, float] | None = None
    best_size = 0
    for container in containers:
        for expr, at in evaluation_offsets(container, dims).items():
            n = len(at)
            if n < 2 or expr in rejected or isinstance(expr, (*_LEAVES, ir.Shift, ir.Broadcast)):
                continue
            if not isinstance(expr.type, ir.FieldType) or set(expr.type.dims) != set(dims):
                continue
            size = node_count(expr)
            if size <= best_size:
                continue
            cost = _cost(expr, dims)
            keep = mode is Materialization.ALWAYS or n * cost > (
                TILE_HALO_FACTOR * cost + KEEP_COST + n * READ_COST
            )
            if keep:
                best, best_size = (expr, n, cost), size
            else:
                rejected.add(expr)
    return best


def _dependency_order(kept: Mapping[str, ir.Expr]) -> list[str]:
    """The stage names, each after the stages its expression reads."""
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        for dep in sorted({r.name for r in refs_in(kept[name])} & kept.keys()):
            visit(dep)
        order.append(name)

    for name in sorted(kept):
        visit(name)
    return order


def _contains(expr: ir.Expr, kinds: tuple[type, ...]) -> bool:
    seen: set[int] = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, kinds):
            return True
        stack.extend(ir.children(e))
    return False


def _reads_of(expr: ir.Expr, name: str, dims: tuple[Dimension, ...]) -> set[Offsets]:
    """The offsets at which `expr` (evaluated at offset 0) reads the Ref `name`."""
    return {
        pos
        for e, positions in evaluation_offsets(expr, dims).items()
        if isinstance(e, ir.Ref) and e.name == name
        for pos in positions
    }


def _cost(expr: ir.Expr, dims: tuple[Dimension, ...]) -> float:
    """Operations and reads of one evaluation, counted like the emitter shares them (once
    per node and offset): `READ_COST` per field read, `MATH_COST` per math function, 1
    per other operation."""
    total = 0.0
    for e, at in evaluation_offsets(expr, dims).items():
        if isinstance(e, ir.Ref):
            weight = READ_COST if isinstance(e.type, ir.FieldType) else 0.0
        elif isinstance(e, ir.MathCall):
            weight = MATH_COST
        elif isinstance(e, (ir.Unary, ir.Binary, ir.Where, ir.Cast)):
            weight = 1.0
        else:
            weight = 0.0
        total += weight * len(at)
    return total


__all__ = ["Materialization", "Stage", "TilePlan", "plan_tiles"]
