"""The C++ tasklets of an SDFG: their code, from the one expression emitter of both
families (`stencilchain.steps.cpp.expressions`), with their connectors and memlets.

The tasklets are C++ rather than DaCe's Python tasklet language so that the meaning is
NumPy's exactly, and the same as GTFN's (float literals in shortest decimal form, reads
through the tasklet's connectors): float32 stays float32, integer `+ - * neg abs` and `**`
wrap around (computed in the unsigned type), minimum/maximum propagate NaN, casts are C++
static_casts (NumPy's astype for every value it defines). One input connector per distinct
(field, offset) read, with a memlet such as `f[i_I + 1, i_J]`, one per scalar read, and one
output connector per output.

- a neighbour read (unstructured meshes) gathers: a table entry at the current entity and
  a constant slot is a connector like any other (`c2e[i_Cell, 1]`); a field read at an
  index the tasklet computes from an entry is one connector per distinct memlet spanning
  the whole source dimension (`e[0:n_Edge, i_K]`, dynamic, volume the number of reads),
  which DaCe passes as a pointer to the subset's first element and the code indexes with
  the array's strides in elements (`e_s0`). Programs without tables have no such memlet.
- a `sc.concat_where` is an `if`/`else` in the tasklet's code; DaCe reads every memlet
  before the tasklet runs, so a read inside a branch has its index along the condition's
  dimension clamped into the array (`Min(Max(i + a, 0), n - 1)`, or into the field's own
  range `[start, n - gap)` in a program specialised for its arguments' ranges): where the
  branch is selected the index is unchanged (its reads are checked like the halo), and
  where it is not no memlet leaves the array.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from stencilchain.program import ir
from stencilchain.program.connectivity import Connectivity
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import ScalarType
from stencilchain.steps.cpp.expressions import (
    Absolute,
    ExpressionEmitter,
    MeshTables,
    Pos,
    Position,
    position,
)
from stencilchain.steps.cpp.literals import literal
from stencilchain.steps.dace.calling_convention import index_symbol, size_symbol
from stencilchain.steps.dace.tile_memlets import add_mapped_tasklet

if TYPE_CHECKING:
    import dace

__all__ = ["Tasklet", "add_tasklet", "array_strides", "cpp_literal"]


def array_strides(sdfg: dace.SDFG) -> Callable[[str, int], str]:
    """The stride of axis `axis` of array `name` of `sdfg`, as C++ text (`Tasklet`'s
    `strides`)."""
    from dace.codegen.common import sym2cpp

    return lambda name, axis: str(sym2cpp(sdfg.arrays[name].strides[axis]))


class Tasklet:
    """The C++ code of one call's tasklet (the one expression emitter of
    `stencilchain.steps.cpp.expressions`), with its connectors and memlets.

    `inputs` and `outputs` map connector names to memlet text; field reads are keyed by
    (field, offset), so each distinct access is one connector. A read at an index that the
    tasklet computes (a neighbour's, from a table) is a gather: its connector's memlet
    spans the whole array along that dimension, the connector is a pointer to the subset's
    first element, and the code indexes it with the array's strides (`strides(name, axis)`,
    C++ text); `gathers` counts the reads through each such connector (its volume).
    Tables are read like fields (`MeshTables`), so an entry at the current cell and a
    constant slot is a plain connector.
    """

    def __init__(
        self,
        cse: bool,
        program: ir.Program,
        params: Mapping[str, ir.FieldType | ScalarType],
        dims: list[Dimension],
        prefix: str,
        strides: Callable[[str, int], str],
        origins: Mapping[str, Mapping[Dimension, str]] | None = None,
    ) -> None:
        self.prefix = prefix
        self.origins = origins or {}
        # per field parameter over its own range (program/own_ranges.py), per axis
        # (start, gap): the part [start, n - gap) of the index space its array covers
        self.ranges = dict(program.ranges)
        self.params = params
        self.dims = dims
        self.strides = strides
        self.inputs: dict[str, str] = {}
        self.outputs: dict[str, str] = {}
        self.gathers: dict[str, int] = {}
        self._reads: dict[tuple[str, Position, tuple[Dimension, ...]], str] = {}
        self._gathered: dict[str, str] = {}  # memlet -> connector
        self._tables = {
            t.connectivity.name: name for name, t in params.items() if isinstance(t, ir.TableType)
        }
        self.emitter = ExpressionEmitter(
            self.read,
            lambda name: self.read(name, {}),
            cse=cse,
            decimal_literals=True,
            tuples=False,
            prefix=f"{prefix}t",
            mesh=MeshTables.of(program, self.read_table) if self._tables else None,
        )

    def code(self, body: ir.Expr, outs: tuple[str | None, ...]) -> str:
        """The tasklet computing `body` and writing each element to its output (None: to
        none, the value is not needed)."""
        values = [self.emitter.emit(e, {}) for e in _tuple_elements(body)]
        if len(values) != len(outs):
            raise ValueError(f"{len(values)} results for {len(outs)} outputs {outs}")
        statements = list(self.emitter.statements)
        for k, (name, value) in enumerate(zip(outs, values)):
            if name is None:
                continue
            connector = f"{self.prefix}out{k}_{name}"
            self.outputs[connector] = f"{name}[{self.subset(name, ())}]"
            statements.append(f"{connector} = {value};")
        return "\n".join(statements)

    def subset(self, name: str, pos: Position, clamped: tuple[Dimension, ...] = ()) -> str:
        """The memlet subset of `name` at `pos`; along the `clamped` dimensions the index is
        kept inside the array (see `read`): inside its own range, for a field over one
        (from below 0 for one that starts there, the array's DaCe offset)."""
        ftype = self.params[name]
        assert isinstance(ftype, ir.FieldType)
        amounts = dict(pos)
        indices = []
        own = self.ranges.get(name, ((0, 0),) * len(ftype.dims))
        for dim, (lo, gap) in zip(ftype.dims, own):
            amount = amounts.get(dim, 0)
            if isinstance(amount, Absolute):  # a constant slot, or all of a gathered dimension
                indices.append(amount.index if _constant(amount) else f"0:{size_symbol(dim)}")
                continue
            if dim not in self.dims:
                raise ValueError(f"field '{name}' is read along {dim.name}, not in the domain")
            sign = "+" if amount > 0 else "-"
            index = (
                index_symbol(dim) if amount == 0 else f"{index_symbol(dim)} {sign} {abs(amount)}"
            )
            if dim in clamped and amount != 0:
                index = f"Min(Max({index}, {lo}), {size_symbol(dim)} - {1 + gap})"
            origin = self.origins.get(name, {}).get(dim)
            if origin is not None:  # a tile buffer, indexed from its first point
                index = f"{index} - ({origin})"
            indices.append(index)
        return ", ".join(indices) or "0"  # a zero-dimensional field: an array of one element

    def read(self, name: str, pos: Pos) -> str:
        """The connector holding `name` at `pos` (a field) or `name` (a scalar)."""
        ptype = self.params[name]
        # a field over fewer dimensions than the domain (broadcast) is one access whatever
        # the offsets along the others
        own = {d: a for d, a in pos.items() if isinstance(ptype, ir.FieldType) and d in ptype.dims}
        # a memlet is read before the tasklet runs, also where its concat_where branch is not
        # selected: along the branch's dimension its index is clamped into the array, which
        # changes nothing where the branch is selected (its reads are checked to be inside)
        clamped = tuple(d for d in self.emitter.guarded if own.get(d, 0) != 0)
        if any(isinstance(a, Absolute) and not _constant(a) for a in own.values()):
            return self.gather(name, own, clamped)
        key = (name, position(own) if isinstance(ptype, ir.FieldType) else (), clamped)
        connector = self._reads.get(key)
        if connector is None:
            connector = f"{self.prefix}in{len(self._reads)}_{name}"
            self._reads[key] = connector
            if isinstance(ptype, ir.FieldType):
                self.inputs[connector] = f"{name}[{self.subset(name, key[1], clamped)}]"
            else:
                self.inputs[connector] = f"{name}[0]"
        return connector

    def gather(self, name: str, pos: Pos, clamped: tuple[Dimension, ...]) -> str:
        """`name` at `pos`, where some indices are computed in the tasklet (a neighbour's):
        one connector per memlet, a pointer to the subset's first element (index 0 along
        each gathered dimension), indexed with the array's strides in elements."""
        memlet = f"{name}[{self.subset(name, position(pos), clamped)}]"
        connector = self._gathered.get(memlet)
        if connector is None:
            connector = f"{self.prefix}gather{len(self._gathered)}_{name}"
            self._gathered[memlet] = connector
            self.inputs[connector] = memlet
            self.gathers[connector] = 0
        self.gathers[connector] += 1
        ftype = self.params[name]
        assert isinstance(ftype, ir.FieldType)
        terms = []
        for axis, dim in enumerate(ftype.dims):
            amount = pos.get(dim, 0)
            if isinstance(amount, Absolute) and not _constant(amount):
                stride = self.strides(name, axis)
                terms.append(
                    f"({amount.index})" if stride == "1" else f"({amount.index}) * {stride}"
                )
        return f"{connector}[{' + '.join(terms)}]"

    def memlet(self, connector: str) -> dace.Memlet:
        """A new memlet of an input connector: a gather reads as many elements as the code
        indexes it (`dynamic`: one inside a branch may not run)."""
        import dace

        text = self.inputs[connector]
        if connector in self.gathers:
            return dace.Memlet(text, volume=self.gathers[connector], dynamic=True)
        return dace.Memlet(text)

    def read_table(self, conn: Connectivity, at: Pos) -> str:
        """The entry of `conn`'s table at `at`, read like a field (`MeshTables`)."""
        return self.read(self._tables[conn.name], at)


def _constant(amount: Absolute) -> bool:
    """An absolute index known when translating (a neighbour slot of an unrolled
    reduction): a point of the memlet rather than a gather."""
    return amount.index.isdigit()


def _tuple_elements(body: ir.Expr) -> tuple[ir.Expr, ...]:
    return body.elems if isinstance(body, ir.MakeTuple) else (body,)


def add_tasklet(
    state: Any,
    name: str,
    inputs: Mapping[str, str],
    outputs: Mapping[str, str],
    code: str,
    block: Mapping[str, str],
) -> None:
    """A C++ tasklet reading and writing the memlets of its connectors, in a sequential map
    over `block` (parameter: range) if it is not empty."""
    import dace

    if block:
        add_mapped_tasklet(
            state,
            name,
            [(p, dace.subsets.Range.from_string(r)) for p, r in block.items()],
            {c: dace.Memlet(m) for c, m in inputs.items()},
            code,
            {c: dace.Memlet(m) for c, m in outputs.items()},
            schedule=dace.ScheduleType.Sequential,
        )
        return
    tasklet = state.add_tasklet(
        name, dict.fromkeys(inputs), dict.fromkeys(outputs), code, language=dace.Language.CPP
    )
    reads: dict[str, Any] = {}
    for connector, memlet in inputs.items():
        data = memlet.split("[")[0]
        node = reads.get(data)
        if node is None:
            node = reads[data] = state.add_read(data)
        state.add_edge(node, None, tasklet, connector, dace.Memlet(memlet))
    for connector, memlet in outputs.items():
        data = memlet.split("[")[0]
        state.add_edge(tasklet, connector, state.add_write(data), None, dace.Memlet(memlet))


def cpp_literal(value: bool | int | float, dtype: ScalarType) -> str:
    """An exact C++ literal of `value` as `dtype` (decimal: shortest round-trip form)."""
    return literal(value, dtype, decimal=True)
