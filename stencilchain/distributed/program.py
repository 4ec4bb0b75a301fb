"""A program run on a decomposed grid: its calls in stages, halos exchanged between them.

Each rank runs the program on its local arrays (its block and a halo as wide as the
program's domains are inset: `halo_of`). Within one stage the compiled code recomputes
what it needs in the halo, as it does on one process near an array's edge. A new stage
starts at a call that reads, in the halo, a field an earlier call of the stage wrote:
that field's halo is stale until it is exchanged. Before each stage, every field the
stage reads in the halo and that was written since its last exchange (the inputs, at
first) is exchanged. Temporaries that live across stages become
fields of the runner. So every rank computes exactly what one process computes on the
global arrays, bit for bit, on any number of ranks.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stencilchain.distributed.decomposition import Decomposition, sizes_text
from stencilchain.distributed.field import DistributedField
from stencilchain.distributed.halo import exchange
from stencilchain.distributed.mesh_decomposition import MeshDecomposition, MeshField
from stencilchain.distributed.mesh_program import MeshStage, mesh_stages_of, require_on_mesh
from stencilchain.errors import DecompositionError
from stencilchain.meshes.mesh import TABLES
from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.extents import field_operator_reads
from stencilchain.program.ir_walk import nodes
from stencilchain.program.node_traits import position_dim, traits_of
from stencilchain.program.program import Backend, Program


def halo_of(program: Program | ir.Program, dims: Sequence[Dimension]) -> dict[Dimension, int]:
    """The halo each of `dims` needs for `program` to run on a rank's block: how far its
    calls' domains are inset from the arrays' edges (the widest of all calls)."""
    program_ir = program.ir if isinstance(program, Program) else program
    widths = dict.fromkeys(dims, 0)
    for call in program_ir.calls:
        for dim_domain in call.domain.dims:
            if dim_domain.dim in widths:
                inset = [b.value for b in dim_domain.starts if not b.from_end and b.param is None]
                inset += [-b.value for b in dim_domain.stops if b.from_end and b.param is None]
                widths[dim_domain.dim] = max([widths[dim_domain.dim], *inset])
    return widths


def layers_of(program: Program) -> int:
    """The halo layers of cells `program` needs on a partitioned mesh: the farthest read
    of any of its stages, in table steps (distributed/mesh_program.py)."""
    return max((s.layers for s in mesh_stages_of(program, stage_program)), default=0)


@dataclasses.dataclass(frozen=True)
class Stage:
    """Consecutive calls of a program, compiled as one program of their own."""

    program: Program
    exchanged: tuple[str, ...]  # the fields to exchange before it, by name
    written: tuple[str, ...]  # the fields it writes


class DistributedProgram:
    """`program` run by `backend` on the local arrays of `decomposition`'s ranks.

    On a grid (`Decomposition`): call it like the program, with a `DistributedField` for
    every field and plain values for scalars. Every field has the halo `halo` (default:
    `halo_of(program)`; a wider one lets programs of other needs share fields).

    On a partitioned mesh (`MeshDecomposition`): a `MeshField` for every field, and for
    every table the decomposition's local one (`decomposition.table("C2E")`); the mesh
    needs `layers_of(program)` halo layers at least (distributed/mesh_program.py).

    Collective: every rank calls it with the same arguments. The stages' programs are
    the same on every rank (only the local sizes differ), so `compile_for_job` builds
    each once per job.
    """

    def __init__(
        self,
        program: Program,
        backend: Backend,
        decomposition: Decomposition | MeshDecomposition,
        *,
        halo: Mapping[Dimension, int] | None = None,
    ) -> None:
        self.program = program
        self.decomposition = decomposition
        self.stages: Sequence[Stage | MeshStage]
        if isinstance(decomposition, MeshDecomposition):
            if halo is not None:
                raise DecompositionError(
                    f"{program.name}: halo= is for grids; a mesh has its layers "
                    f"(MeshDecomposition.create(..., layers=))"
                )
            require_on_mesh(program.ir, decomposition.entity_of)
            self.stages = mesh_stages_of(program, stage_program)
            self.halo: dict[Dimension, int] = {}
            needed = max((s.layers for s in self.stages), default=0)
            if decomposition.local.layers < needed:
                raise DecompositionError(
                    f"{program.name} reads {needed} table steps away (layers_of), farther "
                    f"than the mesh's {decomposition.local.layers} halo layers: create the "
                    f"decomposition with layers={needed}"
                )
            _require_mesh_tables(program.ir)
        else:
            needed_halo = halo_of(program, decomposition.split)
            self.halo = (
                needed_halo if halo is None else {d: halo.get(d, 0) for d in decomposition.split}
            )
            narrow = [d.name for d in decomposition.split if self.halo[d] < needed_halo[d]]
            if narrow:
                raise DecompositionError(
                    f"{program.name} needs a halo of {sizes_text(needed_halo)} (halo_of), "
                    f"wider than {sizes_text(self.halo)} along {', '.join(narrow)}"
                )
            _require_distributable(program.ir, decomposition.split)
            self.stages = stages_of(program, self.halo)
        self._runs = [backend.executor(stage.program) for stage in self.stages]
        self._carried = [t for t in program.ir.temporaries if _carried(t.name, self.stages)]
        self._temporaries: dict[str, DistributedField | MeshField] | None = None
        self.exchange_seconds = 0.0  # spent in halo exchanges by the calls so far
        self.exchanges = 0  # exchange rounds so far

    def __call__(self, *args: Any) -> None:
        params = self.program.ir.params
        if len(args) != len(params):
            raise TypeError(
                f"{self.program.name} takes {len(params)} arguments "
                f"({', '.join(p.name for p in params)}), got {len(args)}"
            )
        values: dict[str, Any] = {}
        for param, arg in zip(params, args, strict=True):
            values[param.name] = self._checked(param, arg)
        values.update(self._carried_fields(values))
        dirty = {
            name
            for name, value in values.items()
            if isinstance(value, (DistributedField, MeshField))
        }
        for stage, run in zip(self.stages, self._runs, strict=True):
            stale = [values[name] for name in stage.exchanged if name in dirty]
            start = time.perf_counter()
            if stale:
                exchange(*stale)
                self.exchanges += 1
            self.exchange_seconds += time.perf_counter() - start
            dirty.difference_update(name for name in stage.exchanged)
            run(*(_local(values[p.name]) for p in stage.program.ir.params))
            dirty.update(stage.written)

    def _checked(self, param: ir.Param, arg: Any) -> Any:
        if not isinstance(param.type, ir.FieldType):
            return arg
        where = f"{self.program.name}: argument {param.name}"
        if isinstance(self.decomposition, MeshDecomposition):
            return self._checked_on_mesh(param, arg, where)
        if not isinstance(arg, DistributedField) or arg.decomposition is not self.decomposition:
            raise DecompositionError(f"{where} is not a DistributedField of this decomposition")
        if arg.dims != param.type.dims:
            raise DecompositionError(
                f"{where} is over ({', '.join(d.name for d in arg.dims)}), "
                f"the program takes ({', '.join(d.name for d in param.type.dims)})"
            )
        for dim, width in self.halo.items():
            if dim in arg.dims and arg.halo(dim) != width:
                raise DecompositionError(
                    f"{where} has a halo of {arg.halo(dim)} along {dim.name}, not {width}: "
                    f"allocate it with halo={sizes_text(self.halo)}"
                )
        return arg

    def _checked_on_mesh(self, param: ir.Param, arg: Any, where: str) -> Any:
        mesh = self.decomposition
        assert isinstance(mesh, MeshDecomposition) and isinstance(param.type, ir.FieldType)
        if isinstance(param.type, ir.TableType):
            connectivity = param.type.connectivity
            if arg is not mesh.table(connectivity.name):
                raise DecompositionError(
                    f"{where} is not this rank's local table of the decomposition: pass "
                    f"decomposition.table({connectivity.name!r})"
                )
            return arg if connectivity.skip_values else mesh.table_without_skips(connectivity.name)
        if not isinstance(arg, MeshField) or arg.decomposition is not mesh:
            raise DecompositionError(f"{where} is not a MeshField of this decomposition")
        if arg.dims != param.type.dims:
            raise DecompositionError(
                f"{where} is over ({', '.join(d.name for d in arg.dims)}), "
                f"the program takes ({', '.join(d.name for d in param.type.dims)})"
            )
        return arg

    def _carried_fields(self, values: Mapping[str, Any]) -> dict[str, DistributedField | MeshField]:
        if self._temporaries is None:
            self._temporaries = {}
            for temporary in self._carried:
                assert isinstance(temporary.type, ir.FieldType)
                dims, dtype = temporary.type.dims, temporary.type.dtype.numpy
                if isinstance(self.decomposition, MeshDecomposition):
                    self._temporaries[temporary.name] = self.decomposition.allocate(
                        dims, dtype, sizes=_sizes(values)
                    )
                else:
                    self._temporaries[temporary.name] = self.decomposition.allocate(
                        dims, dtype, halo={d: w for d, w in self.halo.items() if d in dims}
                    )
        return self._temporaries


def _sizes(values: Mapping[str, Any]) -> dict[Dimension, int]:
    """The size of every dimension of the mesh fields among `values`."""
    sizes: dict[Dimension, int] = {}
    for value in values.values():
        if isinstance(value, MeshField):
            sizes.update(zip(value.dims, value.data.shape, strict=True))
    return sizes


def _require_mesh_tables(program: ir.Program) -> None:
    """DecompositionError for a table parameter that is none of the mesh's tables."""
    for p in program.params:
        if isinstance(p.type, ir.TableType) and p.type.connectivity.name.upper() not in TABLES:
            raise DecompositionError(
                f"program {program.name} cannot run on a partitioned mesh: its table "
                f"{p.name} is of connectivity {p.type.connectivity.name}, which is none of "
                f"the mesh's ({', '.join(TABLES)})"
            )


def stages_of(traced: Program, halo: Mapping[Dimension, int]) -> list[Stage]:
    """The stages of `traced` on a grid split along the dimensions of `halo`, with the
    halo widths `halo_of` gives (see the module's doc)."""
    program = traced.ir
    temporaries = {t.name for t in program.temporaries}
    groups: list[list[ir.ProgramCall]] = [[]]
    written: set[str] = set()
    for call in program.calls:
        if _halo_reads(program, call, halo) & written:
            groups.append([])
            written = set()
        groups[-1].append(call)
        # a temporary is computed wherever a later call reads it: never stale in a stage
        written.update(name for name in call.outs if name not in temporaries)
    stages = []
    for number, calls in enumerate(groups):
        later = [c for g in groups[number + 1 :] for c in g]
        earlier = [c for g in groups[:number] for c in g]
        stages.append(_stage(program, traced.fn, number, calls, earlier, later, halo))
    return stages


def _stage(
    program: ir.Program,
    fn: Callable[..., Any],
    number: int,
    calls: list[ir.ProgramCall],
    earlier: list[ir.ProgramCall],
    later: list[ir.ProgramCall],
    halo: Mapping[Dimension, int],
) -> Stage:
    stage, params = stage_program(program, fn, number, calls, earlier, later)
    outer = {p.name for p in params if isinstance(p.type, ir.FieldType)}
    reads = set().union(*(_halo_reads(program, c, halo) for c in calls)) & outer
    written = tuple(sorted({o for c in calls for o in c.outs} & outer))
    return Stage(stage, tuple(sorted(reads)), written)


def stage_program(
    program: ir.Program,
    fn: Callable[..., Any],
    number: int,
    calls: list[ir.ProgramCall],
    earlier: list[ir.ProgramCall],
    later: list[ir.ProgramCall],
) -> tuple[Program, list[ir.Param]]:
    """The program of stage `number` (its `calls`; `earlier` and `later` the other
    stages' calls) and its parameters: the program's that it names, then the
    temporaries it shares with other stages (which the runner keeps as fields)."""
    temporaries = {t.name: t for t in program.temporaries}
    used = {name for call in calls for name in _names(call)}
    used |= {p.name for p in program.params if isinstance(p.type, ir.TableType)} & _tables_read(
        program, calls
    )
    crossing = {
        name
        for name in used & temporaries.keys()
        if any(name in _names(c) for c in (*earlier, *later))
    }
    params = [p for p in program.params if p.name in used]
    params += [temporaries[name] for name in sorted(crossing)]
    inner = tuple(t for t in program.temporaries if t.name in used and t.name not in crossing)
    stage_ir = dataclasses.replace(
        program,
        name=f"{program.name}_stage{number}" if number or later else program.name,
        params=tuple(params),
        calls=tuple(calls),
        temporaries=inner,
    )
    return Program.from_ir(stage_ir, fn), params


def _halo_reads(
    program: ir.Program, call: ir.ProgramCall, halo: Mapping[Dimension, int]
) -> set[str]:
    """The fields `call` reads in the halo (outside the block a rank owns) along a split
    dimension: where its domain, widened by its reads, comes closer to an array's edge
    than the program's halo width."""
    scan = program.scan_operator(call.callee)
    fops = {f.name: f for f in program.field_operators}
    if scan is not None:  # a scan reads its column only
        params, extents = scan.params, {}
    else:
        params = fops[call.callee].params
        extents = field_operator_reads(fops[call.callee], fops).extents
    insets = {d.dim: _insets(d) for d in call.domain.dims if d.dim in halo}
    found = set()
    for param, arg in zip(params, call.args, strict=True):
        if not isinstance(arg, ir.Ref) or not isinstance(arg.type, ir.FieldType):
            continue
        for dim, (start, stop) in insets.items():
            if dim not in arg.type.dims:
                continue
            lo, hi = extents.get(param.name, {}).get(dim, (0, 0))
            if start + lo < halo[dim] or stop - hi < halo[dim]:
                found.add(arg.name)
    return found


def _insets(dim_domain: ir.DimDomain) -> tuple[int, int]:
    """How far a domain starts from an array's start and stops from its end (at least)."""
    start = max((b.value for b in dim_domain.starts if not b.from_end), default=0)
    stop = max((-b.value for b in dim_domain.stops if b.from_end), default=0)
    return start, stop


def _tables_read(program: ir.Program, calls: list[ir.ProgramCall]) -> set[str]:
    """The table parameters whose connectivities the field operators of `calls` use
    (directly or through the field operators they call)."""
    fops = {f.name: f for f in program.field_operators}
    pending = [c.callee for c in calls if c.callee in fops]
    seen: set[str] = set()
    shifted, reduced = set(), set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        for node in nodes(fops[name].body):
            if isinstance(node, ir.NeighborShift):
                shifted.add(node.connectivity)
            elif isinstance(node, ir.NeighborReduce):
                reduced.add(node.axis)
            elif isinstance(node, ir.Call) and node.callee in fops:
                pending.append(node.callee)
    return {
        p.name
        for p in program.params
        if isinstance(p.type, ir.TableType)
        and (p.type.connectivity in shifted or p.type.connectivity.target[1] in reduced)
    }


def _names(call: ir.ProgramCall) -> set[str]:
    """The program's fields and scalars a call names (arguments and outputs)."""
    return {a.name for a in call.args if isinstance(a, ir.Ref)} | set(call.outs)


def _carried(name: str, stages: Sequence[Stage | MeshStage]) -> bool:
    return any(name in {p.name for p in s.program.ir.params} for s in stages)


def _local(value: Any) -> Any:
    return value.data if isinstance(value, (DistributedField, MeshField)) else value


def _require_distributable(program: ir.Program, split: Sequence[Dimension]) -> None:
    """DecompositionError for what a program cannot do on a split grid: absolute indices
    along a split dimension (index, concat_where, domain bounds from a scalar or beyond
    the halo), and neighbour tables (those run on a MeshDecomposition). The nodes refused are those whose traits say
    `reads_position` (program/node_traits.py)."""
    where = f"program {program.name} cannot run on a grid split along {', '.join(d.name for d in split)}"
    for p in program.params:
        if isinstance(p.type, ir.TableType):
            raise DecompositionError(
                f"{where}: it takes the neighbour table {p.name} (a program with tables "
                "runs on a partitioned mesh: MeshDecomposition)"
            )
    for call in program.calls:
        for dim_domain in call.domain.dims:
            if dim_domain.dim in split and any(
                b.param is not None for b in (*dim_domain.starts, *dim_domain.stops)
            ):
                raise DecompositionError(
                    f"{where}: the call of {call.callee} has a domain along "
                    f"{dim_domain.dim.name} set by a scalar parameter (a global index)"
                )
            if dim_domain.dim in split and any(
                b.field is not None for b in (*dim_domain.starts, *dim_domain.stops)
            ):
                raise DecompositionError(
                    f"{where}: the call of {call.callee} has a domain along "
                    f"{dim_domain.dim.name} counted from a field's own range (sc.start_of, "
                    "sc.end_of: a global position)"
                )
            absolute = [b for b in dim_domain.stops if not b.from_end and b.param is None]
            absolute += [b for b in dim_domain.starts if b.from_end and b.param is None]
            if dim_domain.dim in split and absolute:
                raise DecompositionError(
                    f"{where}: the call of {call.callee} has a domain along "
                    f"{dim_domain.dim.name} that ends at a fixed index or starts from the end "
                    "(a global position); give its bounds from the array's start and end"
                )
    for fop in program.field_operators:
        for node in nodes(fop.body):
            traits = traits_of(node)
            if traits.reads_position and position_dim(node) in split:
                written = traits.written.format(dim=position_dim(node).name)
                raise DecompositionError(f"{where}: {fop.name} uses {written}")
