"""Connectivities of unstructured meshes: which entities neighbour which.

`C2E = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=3)`
declares that each cell has up to 3 neighbouring edges. Its table, given to a program as a
`sc.Table[C2E]` parameter, is an integer array of shape `(n_cells, 3)` holding edge
indices (`-1` for a missing neighbour where `skip_values=True`). In a field operator,
`f(C2E)` reads an Edge field at every cell's edges (a local field over `C2EDim`), and
`f(C2E[0])` reads it at each cell's first edge.
"""

from __future__ import annotations

import dataclasses

from stencilchain.errors import DefinitionError
from stencilchain.program.dimensions import Dimension


@dataclasses.dataclass(frozen=True)
class Connectivity:
    """For each entity of `target[0]`, up to `max_neighbors` entities of `source`, in the
    slots numbered by the local dimension `target[1]`."""

    name: str
    source: Dimension
    target: tuple[Dimension, Dimension]
    max_neighbors: int
    skip_values: bool = False

    def __post_init__(self) -> None:
        where = f"sc.Connectivity {self.name!r}"
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise DefinitionError(f"{where}: the name must be an identifier")
        if not isinstance(self.source, Dimension) or self.source.is_local:
            raise DefinitionError(
                f"{where}: source= must be the dimension of the neighbouring entities "
                f"(e.g. Edge), not a local dimension; got {self.source!r}"
            )
        target = self.target
        if not (
            isinstance(target, tuple)
            and len(target) == 2
            and all(isinstance(d, Dimension) for d in target)
        ):
            raise DefinitionError(
                f"{where}: target= must be (entity dimension, local dimension), e.g. "
                f"(Cell, C2EDim); got {target!r}"
            )
        if target[0].is_local or not target[1].is_local:
            raise DefinitionError(
                f"{where}: target= must be (entity dimension, local dimension): "
                f"{target[1].name} must be declared with kind=sc.LOCAL and {target[0].name} "
                "must not"
            )
        if type(self.max_neighbors) is not int or self.max_neighbors < 1:
            raise DefinitionError(
                f"{where}: max_neighbors= must be a positive int, got {self.max_neighbors!r}"
            )
        if not isinstance(self.skip_values, bool):
            raise DefinitionError(
                f"{where}: skip_values= must be True or False, got {self.skip_values!r}"
            )

    @property
    def entity(self) -> Dimension:
        """The dimension whose entities the table has a row for (e.g. Cell for C2E)."""
        return self.target[0]

    @property
    def local(self) -> Dimension:
        """The local dimension numbering each row's neighbour slots."""
        return self.target[1]

    def __getitem__(self, slot: object) -> NeighborSlot:
        if type(slot) is not int or not 0 <= slot < self.max_neighbors:
            raise DefinitionError(
                f"{self.name}[{slot!r}]: a neighbour slot is an int in [0, {self.max_neighbors})"
            )
        return NeighborSlot(self, slot)

    def __repr__(self) -> str:
        return self.name


@dataclasses.dataclass(frozen=True)
class NeighborSlot:
    """`C2E[0]`: one neighbour slot of a connectivity, as a shift `f(C2E[0])`."""

    connectivity: Connectivity
    slot: int

    def __repr__(self) -> str:
        return f"{self.connectivity.name}[{self.slot}]"


__all__ = ["Connectivity", "NeighborSlot"]
