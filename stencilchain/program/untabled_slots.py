"""Slots of a local field that no table numbers: `w[E2CDim(3)]` of a field over
`(Edge, E2CDim)` in a program with no table of a connectivity over E2CDim.

As in gt4py, how many slots there are is then the extent of the arguments along the local
dimension, known at call time only. Each call checks it against the highest slot that the
program reads (`SlotNeed`), before anything runs: the shared argument checker
(program/arguments.py) and the compiled entry points (steps/cpp/extension_module.py) raise
the same ArgumentError, naming the argument that gives the extent and the slot. A program
whose untabled local dimension no field parameter is over is refused at definition: its
extent would be unknown. With a table the slots are checked against its width instead.
"""

from __future__ import annotations

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.ir_walk import nodes
from stencilchain.program.records import frozen


@frozen
class SlotNeed:
    """The reads of local dimension `dim` (numbered by no table): the highest slot read,
    by field operator `reader`; and `param`, the first field parameter over `dim`, whose
    extent along it (every field's over it: own_ranges.fixed_dimensions) is how many slots
    there are."""

    dim: Dimension
    slot: int
    reader: str
    param: str

    def message(self, program: str, extent: int | str) -> str:
        """What is wrong with a call whose arguments have `extent` slots along `dim`
        (`extent` a placeholder where the compiled entry points fill in the size)."""
        d = self.dim.name
        return (
            f"argument '{self.param}' of {program}(): field operator {self.reader} reads "
            f"slot {d}({self.slot}), but '{self.param}' has {extent} along {d}, a local "
            f"dimension that no table numbers (the arguments' extent along it is how many "
            f"slots there are); pass arrays with at least {self.slot + 1} along {d}"
        )


def untabled_slots(program: ir.Program) -> tuple[SlotNeed, ...]:
    """The slots that `program` reads of each local dimension that no table parameter
    numbers, one per such dimension; a DefinitionError where no field parameter is over
    one."""
    tabled = {p.type.connectivity.local for p in program.params if isinstance(p.type, ir.TableType)}
    highest: dict[Dimension, tuple[int, str]] = {}
    for fop in program.field_operators:
        for node in nodes(fop.body):
            if isinstance(node, ir.LocalSlot) and node.axis not in tabled:
                known = highest.get(node.axis)
                if known is None or node.slot > known[0]:
                    highest[node.axis] = (node.slot, fop.name)
    needs = []
    for dim, (slot, reader) in highest.items():
        over = [
            p.name
            for p in program.params
            if isinstance(p.type, ir.FieldType) and dim in p.type.dims
        ]
        if not over:
            raise DefinitionError(
                f"program {program.name}: field operator {reader} reads slot {dim.name}({slot}) "
                f"of a local field, but neither a table parameter numbers the slots of "
                f"{dim.name} nor is a field parameter over {dim.name}, so how many there are "
                f"is unknown; pass the local field as an argument, or add the table of the "
                f"connectivity over {dim.name} (a parameter `c: sc.Table[...]`)"
            )
        needs.append(SlotNeed(dim, slot, reader, over[0]))
    return tuple(needs)
