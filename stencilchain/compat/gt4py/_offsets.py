"""gt4py's `FieldOffset`: a Cartesian one (`Koff = FieldOffset("Koff", source=K,
target=(K,))`, read as `f(Koff[-1])`) or a connectivity (`C2E = FieldOffset("C2E",
source=Edge, target=(Cell, C2EDim))`, read as `f(C2E)`, `f(C2E[0])`).

A connectivity's width, whether it has missing neighbours and its tables' dtype are known
only when the program is called with its `offset_provider`, so a FieldOffset read through
is stencilchain's Connectivity with `max_neighbors=None, skip_values=None`: the program is
traced once and specialised per call's tables by stencilchain's own mechanism
(program/table_specialisation.py, ADR 0029/0033). While an operator is traced, the
`Reads` in force records the FieldOffsets it reads through, so that its program knows
which tables to take from `offset_provider`."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
from collections.abc import Iterator

from stencilchain.errors import DefinitionError
from stencilchain.program.connectivity import Connectivity, NeighborSlot
from stencilchain.program.dimensions import Dimension, Offset

# the fields of one out= sliced alike: their names, the dimensions sliced, out= as written
SameRanges = tuple[tuple[str, ...], tuple[Dimension, ...], str]


class Reads:
    """The FieldOffsets that a trace reads through, by name (its callees' too), and the
    fields of each `out=` sliced alike (`(z_q[:, 1:], w[:, 1:])`: their names, the
    dimensions sliced, `out=` as written), whose ranges along those must be one."""

    def __init__(self) -> None:
        self.used: dict[str, FieldOffset] = {}
        self.same_ranges: list[SameRanges] = []


_reads: contextvars.ContextVar[Reads | None] = contextvars.ContextVar(
    "gt4py_offset_reads", default=None
)


def current() -> Reads | None:
    """The record of the trace running now, or None outside any trace of this module."""
    return _reads.get()


@contextlib.contextmanager
def recording(reads: Reads) -> Iterator[None]:
    token = _reads.set(reads)
    try:
        yield
    finally:
        _reads.reset(token)


class FieldOffset:
    """`FieldOffset(name, source=, target=)` as gt4py declares it."""

    def __init__(
        self, value: str, source: Dimension, target: tuple[Dimension, ...] | Dimension
    ) -> None:
        where = f"FieldOffset({value!r}, ...)"
        if not isinstance(value, str) or not value.isidentifier():
            raise DefinitionError(f"{where}: the name must be an identifier")
        if isinstance(target, Dimension):
            target = (target,)
        if not isinstance(source, Dimension) or not (
            isinstance(target, tuple)
            and len(target) in (1, 2)
            and all(isinstance(d, Dimension) for d in target)
        ):
            raise DefinitionError(
                f"{where}: source= is a Dimension and target= a tuple of one Dimension "
                "(a Cartesian offset, target=(K,)) or of two (a connectivity, "
                f"target=(Cell, C2EDim)); got source={source!r}, target={target!r}"
            )
        if len(target) == 1 and target[0] != source:
            raise DefinitionError(
                f"{where}: a Cartesian offset shifts along one dimension, source= and "
                f"target= name it both; got {source.name} and {target[0].name}"
            )
        if len(target) == 2 and not target[1].is_local:
            raise DefinitionError(
                f"{where}: the second dimension of target= numbers the neighbour slots; "
                f"declare {target[1].name} with kind=DimensionKind.LOCAL"
            )
        self.value = value
        self.source = source
        self.target = target

    @property
    def is_cartesian(self) -> bool:
        return len(self.target) == 1

    def __repr__(self) -> str:
        return self.value

    def __getitem__(self, index: object) -> FieldOffsetIndex:
        if type(index) is not int:
            raise DefinitionError(
                f"{self.value}[{index!r}]: the index of an offset is a Python int"
            )
        return FieldOffsetIndex(self, index)

    @functools.cached_property
    def open_connectivity(self) -> Connectivity:
        """stencilchain's Connectivity of this offset: its width and skip-value property
        are those of each call's table."""
        return Connectivity(
            self.value,
            source=self.source,
            target=(self.target[0], self.target[1]),
            max_neighbors=None,
            skip_values=None,
        )

    def connectivity(self) -> Connectivity:
        """stencilchain's Connectivity for this offset, recorded as read by the trace
        running now."""
        reads = _reads.get()
        if self.is_cartesian:
            raise DefinitionError(
                f"{self.value} is a Cartesian offset (target=({self.source.name},)); it "
                f"shifts by an amount, f({self.value}[1]), it has no neighbours to reduce"
            )
        if reads is None:
            raise DefinitionError(
                f"{self.value}: a FieldOffset is read inside a field operator, traced when "
                "its program is called with offset_provider=..."
            )
        reads.used[self.value] = self
        return self.open_connectivity

    # `f(C2E)` hands the FieldOffset itself to the shift (shifts.shift, via _foreign_offset)
    def _stencilchain_shift_(self) -> Connectivity | Offset:
        if self.is_cartesian:
            raise DefinitionError(
                f"f({self.value}): a Cartesian offset needs an amount, f({self.value}[1]) "
                f"or f({self.value}[-1])"
            )
        return self.connectivity()


@dataclasses.dataclass(frozen=True)
class FieldOffsetIndex:
    """`Koff[-1]` (a shift by -1 along K) or `C2E[0]` (the first neighbour)."""

    offset: FieldOffset
    index: int

    def __repr__(self) -> str:
        return f"{self.offset.value}[{self.index}]"

    def _stencilchain_shift_(self) -> Offset | NeighborSlot:
        if self.offset.is_cartesian:
            return Offset(self.offset.source, self.index)
        return self.offset.connectivity()[self.index]


def shift_of(value: object) -> object:
    """A FieldOffset or its index as what stencilchain's shift takes; others as they are."""
    hook = getattr(type(value), "_stencilchain_shift_", None)
    return hook(value) if hook is not None else value
