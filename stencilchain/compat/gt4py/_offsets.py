"""gt4py's `FieldOffset`: a Cartesian one (`Koff = FieldOffset("Koff", source=K,
target=(K,))`, read as `f(Koff[-1])`) or a connectivity (`C2E = FieldOffset("C2E",
source=Edge, target=(Cell, C2EDim))`, read as `f(C2E)`, `f(C2E[0])`).

A connectivity's width and whether it has missing neighbours are known only when the
program is called with its `offset_provider`: while an operator is traced for one, the
`Resolution` in force turns each FieldOffset into stencilchain's Connectivity (or Offset)."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Callable, Iterable, Iterator

from stencilchain.errors import DefinitionError
from stencilchain.program.connectivity import Connectivity, NeighborSlot
from stencilchain.program.dimensions import Dimension, Offset


@dataclasses.dataclass(frozen=True, order=True)
class TableSpec:
    """What a traced program needs to know of one connectivity of the offset provider."""

    max_neighbors: int
    skip_values: bool
    dtype: str = "int32"


class Resolution:
    """The offset provider of one call while its operators are traced: the spec of each
    connectivity asked for (`lookup`, once per name), and the FieldOffsets that the trace
    read through (`used`, by name)."""

    def __init__(self, lookup: Callable[[str], TableSpec | None]) -> None:
        self._lookup = lookup
        self._specs: dict[str, TableSpec | None] = {}
        self.used: dict[str, FieldOffset] = {}

    def spec(self, name: str) -> TableSpec | None:
        if name not in self._specs:
            self._specs[name] = self._lookup(name)
        return self._specs[name]

    def key(self, names: Iterable[str]) -> tuple[tuple[str, TableSpec | None], ...]:
        """The specs of `names`, as a cache key."""
        return tuple((n, self.spec(n)) for n in sorted(names))


_resolution: contextvars.ContextVar[Resolution | None] = contextvars.ContextVar(
    "gt4py_offset_resolution", default=None
)


def current() -> Resolution | None:
    """The resolution of the trace running now, or None outside any trace of this module."""
    return _resolution.get()


@contextlib.contextmanager
def resolving(resolution: Resolution) -> Iterator[None]:
    token = _resolution.set(resolution)
    try:
        yield
    finally:
        _resolution.reset(token)


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

    def connectivity(self) -> Connectivity:
        """stencilchain's Connectivity for this offset in the trace running now."""
        resolution = _resolution.get()
        if self.is_cartesian:
            raise DefinitionError(
                f"{self.value} is a Cartesian offset (target=({self.source.name},)); it "
                f"shifts by an amount, f({self.value}[1]), it has no neighbours to reduce"
            )
        if resolution is None:
            raise DefinitionError(
                f"{self.value}: a FieldOffset is read inside a field operator, traced when "
                "its program is called with offset_provider=..."
            )
        spec = resolution.spec(self.value)
        if spec is None:
            raise DefinitionError(
                f"the field operator reads through {self.value}, but offset_provider has no "
                f"entry {self.value!r}; pass offset_provider={{{self.value!r}: table}} with "
                f"a table of shape (n_{self.target[0].name.lower()}, max_neighbors)"
            )
        resolution.used[self.value] = self
        return self.connectivity_for(spec)

    def connectivity_for(self, spec: TableSpec) -> Connectivity:
        """stencilchain's Connectivity for this offset and a table of `spec`."""
        return Connectivity(
            self.value,
            source=self.source,
            target=(self.target[0], self.target[1]),
            max_neighbors=spec.max_neighbors,
            skip_values=spec.skip_values,
        )

    # `f(C2E)` hands the FieldOffset itself to the shift (tracing.shift, via shift_of)
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
