"""Connectivities of unstructured meshes: which entities neighbour which.

`C2E = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=3)`
declares that each cell has up to 3 neighbouring edges. Its table, given to a program as a
`sc.Table[C2E]` parameter, is an integer array of shape `(n_cells, 3)` holding edge
indices (`-1` for a missing neighbour where `skip_values=True`). In a field operator,
`f(C2E)` reads an Edge field at every cell's edges (a local field over `C2EDim`), and
`f(C2E[0])` reads it at each cell's first edge.

`max_neighbors=None` and `skip_values=None` leave the width and the skip-value property
to each call's table: a program over such a connectivity is specialised per table width
and per "has -1 entries or not" (program/table_specialisation.py).
"""

from __future__ import annotations

import os
import sys

from stencilchain.errors import DefinitionError
from stencilchain.program.dimensions import Dimension
from stencilchain.program.records import frozen


@frozen
class Connectivity:
    """For each entity of `target[0]`, up to `max_neighbors` entities of `source`, in the
    slots numbered by the local dimension `target[1]`; None for either setting: the
    table of each call says it."""

    name: str
    source: Dimension
    target: tuple[Dimension, Dimension]
    max_neighbors: int | None = None
    skip_values: bool | None = False

    def __post_init__(self) -> None:
        where = f"sc.Connectivity {self.name!r}"
        at = _declared_at()
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise DefinitionError(f"{where}: the name must be an identifier", at)
        if not isinstance(self.source, Dimension) or self.source.is_local:
            raise DefinitionError(
                f"{where}: source= must be the dimension of the neighbouring entities "
                f"(e.g. Edge), not a local dimension; got {self.source!r}",
                at,
            )
        target = self.target
        if not (
            isinstance(target, tuple)
            and len(target) == 2
            and all(isinstance(d, Dimension) for d in target)
        ):
            raise DefinitionError(
                f"{where}: target= must be (entity dimension, local dimension), e.g. "
                f"(Cell, C2EDim); got {target!r}",
                at,
            )
        if target[0].is_local or not target[1].is_local:
            raise DefinitionError(
                f"{where}: target= must be (entity dimension, local dimension): "
                f"{target[1].name} must be declared with kind=sc.LOCAL and {target[0].name} "
                "must not",
                at,
            )
        if self.max_neighbors is not None and (
            type(self.max_neighbors) is not int or self.max_neighbors < 1
        ):
            raise DefinitionError(
                f"{where}: max_neighbors= must be a positive int (or None: the width of "
                f"each call's table), got {self.max_neighbors!r}",
                at,
            )
        if self.skip_values is not None and not isinstance(self.skip_values, bool):
            raise DefinitionError(
                f"{where}: skip_values= must be True, False or None (whether each call's "
                f"table has -1 entries), got {self.skip_values!r}",
                at,
            )

    @property
    def is_open(self) -> bool:
        """Whether each call's table gives the width or the skip-value property."""
        return self.max_neighbors is None or self.skip_values is None

    @property
    def width(self) -> int:
        """The number of neighbour slots, as a backend translating a program sees it (a
        program over an open connectivity reaches one only specialised per table)."""
        if self.max_neighbors is None:
            raise ValueError(f"{self.name} takes the width of each call's table: specialise first")
        return self.max_neighbors

    @property
    def entity(self) -> Dimension:
        """The dimension whose entities the table has a row for (e.g. Cell for C2E)."""
        return self.target[0]

    @property
    def local(self) -> Dimension:
        """The local dimension numbering each row's neighbour slots."""
        return self.target[1]

    def __getitem__(self, slot: object) -> NeighborSlot:
        width = self.max_neighbors
        if type(slot) is not int or slot < 0 or (width is not None and slot >= width):
            allowed = (
                f"[0, {width})" if width is not None else "0 or above (below the table's width)"
            )
            raise DefinitionError(f"{self.name}[{slot!r}]: a neighbour slot is an int in {allowed}")
        return NeighborSlot(self, slot)

    def __repr__(self) -> str:
        return self.name


@frozen
class NeighborSlot:
    """`C2E[0]`: one neighbour slot of a connectivity, as a shift `f(C2E[0])`."""

    connectivity: Connectivity
    slot: int

    def __repr__(self) -> str:
        return f"{self.connectivity.name}[{self.slot}]"


def _declared_at() -> tuple[str, int] | None:
    """Where the user declared a connectivity: the caller of the dataclass's generated
    `__init__` (whose frame has no file), outside this package."""
    frame = sys._getframe(2)
    while frame is not None and (
        frame.f_code.co_filename.startswith("<")
        or os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE + os.sep)
    ):
        frame = frame.f_back  # type: ignore[assignment]
    return (os.path.abspath(frame.f_code.co_filename), frame.f_lineno) if frame else None


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

__all__ = ["Connectivity", "NeighborSlot"]
