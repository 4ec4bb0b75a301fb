"""The table parameters of a traced program, checked against what its field operators read
through them: each connectivity read through has one table, of that very connectivity, and
each slot `w[C2EDim(s)]` or reduction over a local dimension that a table numbers lies in it.
Slots that no table numbers are checked at call time (program/untabled_slots.py)."""

from __future__ import annotations

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.connectivity import Connectivity
from stencilchain.program.dimensions import Dimension
from stencilchain.program.ir_walk import nodes


def check_tables(program: ir.Program) -> None:
    """Every connectivity that a field operator reads through has one table parameter,
    of that very connectivity; the sizes of its dimensions are known; no two tables
    number their slots with the same local dimension."""
    used: dict[str, Connectivity] = {}
    users: dict[str, str] = {}
    for fop in program.field_operators:
        found: dict[str, Connectivity] = {}
        _connectivities_in(fop.body, found)
        for name, conn in found.items():
            other = used.setdefault(name, conn)
            users.setdefault(name, fop.name)
            if other != conn:
                raise DefinitionError(
                    f"program {program.name}: two different connectivities are named {name} "
                    f"(in field operators {users[name]} and {fop.name}); rename one"
                )
    tables = [p for p in program.params if isinstance(p.type, ir.TableType)]
    sized = {d for p in program.params if isinstance(p.type, ir.FieldType) for d in p.type.dims}
    for name, conn in used.items():
        given = [p for p in tables if p.type.connectivity.name == name]  # type: ignore[union-attr]
        if not given:
            raise DefinitionError(
                f"program {program.name}: field operator {users[name]} reads through "
                f"connectivity {name}, but the program has no table for it; add a "
                f"parameter `{name.lower()}: sc.Table[{name}]`"
            )
        if len(given) > 1:
            raise DefinitionError(
                f"program {program.name}: parameters {', '.join(p.name for p in given)} are "
                f"all tables of {name}; give one"
            )
        if given[0].type.connectivity != conn:  # type: ignore[union-attr]
            raise DefinitionError(
                f"program {program.name}: parameter '{given[0].name}' is a table of another "
                f"connectivity named {name} than the one field operator {users[name]} "
                "reads through; declare each connectivity once"
            )
        if conn.source not in sized:
            raise DefinitionError(
                f"program {program.name}: reads through {name} fields over "
                f"{conn.source.name}, but no field parameter is over {conn.source.name}, "
                "so its size is unknown"
            )
    locals_seen: dict[Dimension, str] = {}
    for p in tables:
        conn = p.type.connectivity  # type: ignore[union-attr]
        other_name = locals_seen.setdefault(conn.local, conn.name)
        if other_name != conn.name:
            raise DefinitionError(
                f"program {program.name}: connectivities {other_name} and {conn.name} both "
                f"number their neighbour slots with {conn.local.name}; give each its own "
                "local dimension, so that a reduction knows which neighbours are missing"
            )


def check_local_slots(program: ir.Program) -> None:
    """Every slot `w[C2EDim(s)]` of a local field that the table of a connectivity
    numbers lies in it: s < its max_neighbors (for a table of any width, checked per
    width: program/table_specialisation.py). Slots that no table numbers are checked
    against the arguments' extent at call time (program/untabled_slots.py)."""
    tables = {
        p.type.connectivity.local: p.type.connectivity
        for p in program.params
        if isinstance(p.type, ir.TableType)
    }
    for fop in program.field_operators:
        for slot in _local_slots_in(fop.body):
            conn = tables.get(slot.axis)
            written = f"field operator {fop.name} reads slot {slot.axis.name}({slot.slot})"
            if conn is None:
                continue  # the arguments' extent numbers them (program/untabled_slots.py)
            if conn.max_neighbors is not None and slot.slot >= conn.max_neighbors:
                raise DefinitionError(
                    f"program {program.name}: {written}, but {conn.name} has "
                    f"max_neighbors={conn.max_neighbors}: a slot is an int in "
                    f"[0, {conn.max_neighbors})"
                )
        # a reduction over a local dimension reads its slots as the table numbers
        # them (how many, which are missing): a local field reduced in a program
        # without that table is refused here, as a slot read is
        for node in nodes(fop.body):
            if isinstance(node, ir.NeighborReduce) and node.axis not in tables:
                reduction = {"sum": "neighbor_sum"}.get(node.op, f"{node.op}_over")
                raise DefinitionError(
                    f"program {program.name}: field operator {fop.name} reduces over "
                    f"{node.axis.name} (sc.{reduction}), but no table "
                    f"parameter numbers the slots of {node.axis.name}, so how many there "
                    "are and which are missing is unknown; add the table of the "
                    f"connectivity over {node.axis.name} (a parameter `c: sc.Table[...]`)"
                )


def _connectivities_in(expr: ir.Expr, found: dict[str, Connectivity]) -> None:
    for node in nodes(expr):
        if isinstance(node, ir.NeighborShift):
            found.setdefault(node.connectivity.name, node.connectivity)


def _local_slots_in(expr: ir.Expr) -> list[ir.LocalSlot]:
    """The local slots read in `expr`, in the order a walk meets them, each object once."""
    return [node for node in nodes(expr) if isinstance(node, ir.LocalSlot)]
