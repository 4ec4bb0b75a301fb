"""The stages of a program on a partitioned mesh, and how many halo layers each needs.

Every call runs over all local entities, owned and halo. A read through a table (one
neighbour step: `f(C2E)`, `f(E2C2V[1])`) reaches at most one halo layer further out
(meshes/local.py), so an owned entity's value is exact when every field it reads, d
steps away, holds its owner's values out to layer d. The steps add up through the
temporaries a stage computes (everywhere, so a temporary read one step away that read
its own input one step away reads that input two steps away): `reads` gives, per call,
how many steps away it reads each program field, and a stage needs as many layers as
its farthest read. A new stage starts at a call that reads, at least one step away, a
field an earlier call of the stage wrote (its halo then holds this rank's own, inexact,
values): before it, that field is exchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from stencilchain.errors import DecompositionError
from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.ir_walk import nodes
from stencilchain.program.node_traits import position_dim, traits_of
from stencilchain.program.program import Program

_Reads = dict[str, int]


def operator_steps(fop: ir.FieldOperatorDef, fops: Mapping[str, ir.FieldOperatorDef]) -> _Reads:
    """How many table steps away `fop` reads each of its parameters (0: in place)."""
    found: _Reads = {}
    seen: set[tuple[int, int]] = set()

    def walk(expr: ir.Expr, depth: int) -> None:
        if (id(expr), depth) in seen:
            return
        seen.add((id(expr), depth))
        if isinstance(expr, ir.Ref):
            found[expr.name] = max(found.get(expr.name, 0), depth)
        elif isinstance(expr, ir.NeighborShift):
            walk(expr.expr, depth + 1)
        elif isinstance(expr, ir.Call):
            inner = operator_steps(fops[expr.callee], fops)
            for param, arg in zip(fops[expr.callee].params, expr.args, strict=True):
                if param.name in inner:
                    walk(arg, depth + inner[param.name])
        else:
            for child in ir.children(expr):
                walk(child, depth)

    walk(fop.body, 0)
    return found


def call_steps(program: ir.Program, call: ir.ProgramCall) -> _Reads:
    """How many table steps away `call` reads each field it is passed (a scan: 0)."""
    args = {p.name: a.name for p, a in _named_args(program, call)}
    if program.scan_operator(call.callee) is not None:
        return dict.fromkeys(args.values(), 0)
    fops = {f.name: f for f in program.field_operators}
    steps: _Reads = {}
    for param, depth in operator_steps(fops[call.callee], fops).items():
        if param in args:
            steps[args[param]] = max(steps.get(args[param], 0), depth)
    return steps


def _named_args(program: ir.Program, call: ir.ProgramCall) -> list[tuple[ir.Param, ir.Ref]]:
    scan = program.scan_operator(call.callee)
    params = scan.params if scan is not None else program.field_operator(call.callee).params
    return [
        (p, a)
        for p, a in zip(params, call.args, strict=True)
        if isinstance(a, ir.Ref) and isinstance(a.type, ir.FieldType)
    ]


@dataclasses.dataclass(frozen=True)
class MeshStage:
    """Consecutive calls compiled as one program; `exchanged`: the fields it reads at
    least one step away (exchanged before it where written since), `written`: the fields
    it writes, `layers`: the halo layers its farthest read needs."""

    program: Program
    exchanged: tuple[str, ...]
    written: tuple[str, ...]
    layers: int


def mesh_stages_of(
    traced: Program,
    make_stage: Callable[..., Any],
) -> list[MeshStage]:
    """The stages of `traced` on a partitioned mesh (see the module's doc). `make_stage`
    builds a stage's program (program.py's `_stage`)."""
    program = traced.ir
    temporaries = {t.name for t in program.temporaries}
    groups: list[list[ir.ProgramCall]] = [[]]
    reach: list[_Reads] = [{}]
    written: set[str] = set()
    made: dict[str, _Reads] = {}  # temporary of this stage -> what it read, how far
    for call in program.calls:
        far = _through(call_steps(program, call), made)
        if any(depth >= 1 and name in written for name, depth in far.items()):
            groups.append([])
            reach.append({})
            written, made = set(), {}
            far = _through(call_steps(program, call), made)
        groups[-1].append(call)
        for name, depth in far.items():
            reach[-1][name] = max(reach[-1].get(name, 0), depth)
        for out in call.outs:
            if out in temporaries:
                made[out] = far
            else:
                written.add(out)
    stages = []
    for number, calls in enumerate(groups):
        later = [c for g in groups[number + 1 :] for c in g]
        earlier = [c for g in groups[:number] for c in g]
        stage_program, params = make_stage(program, traced.fn, number, calls, earlier, later)
        fields = {p.name for p in params if isinstance(p.type, ir.FieldType)}
        away = {n for n, d in reach[number].items() if d >= 1 and n in fields}
        outs = {o for c in calls for o in c.outs} & fields
        layers = max(reach[number].values(), default=0)
        stages.append(MeshStage(stage_program, tuple(sorted(away)), tuple(sorted(outs)), layers))
    return stages


def _through(steps: _Reads, made: Mapping[str, _Reads]) -> _Reads:
    """`steps` with each temporary made earlier in the stage replaced by what it read."""
    far: _Reads = {}
    for name, depth in steps.items():
        for read, more in made.get(name, {name: 0}).items():
            far[read] = max(far.get(read, 0), depth + more)
    return far


def require_on_mesh(program: ir.Program, entity_of: Callable[[Dimension], str | None]) -> None:
    """DecompositionError for what depends on global positions along a mesh entity
    dimension: sc.index, concat_where, as_offset and Cartesian shifts along it, and
    domains along it that are not the whole local mesh (a start or stop index)."""
    where = f"program {program.name} cannot run on a partitioned mesh"
    for fop in program.field_operators:
        for node in nodes(fop.body):
            traits = traits_of(node)
            if traits.reads_position and entity_of(position_dim(node)) is not None:
                written = traits.written.format(dim=position_dim(node).name)
                raise DecompositionError(f"{where}: {fop.name} uses {written}")
            if isinstance(node, ir.Shift):
                along = [d.name for d, _ in node.offsets if entity_of(d) is not None]
                if along:
                    raise DecompositionError(
                        f"{where}: {fop.name} shifts along {', '.join(along)} by an offset "
                        "(f(Cell + 1) reads the next global number); read through a table"
                    )
    for call in program.calls:
        for dim_domain in call.domain.dims:
            if entity_of(dim_domain.dim) is None:
                continue
            whole = all(
                b.param is None and b.value == 0 and not b.from_end for b in dim_domain.starts
            )
            whole = whole and all(
                b.param is None and b.value == 0 and b.from_end for b in dim_domain.stops
            )
            if not whole:
                raise DecompositionError(
                    f"{where}: the call of {call.callee} runs over part of "
                    f"{dim_domain.dim.name} (a start or stop index is a global position; "
                    "local numbers differ per rank)"
                )
