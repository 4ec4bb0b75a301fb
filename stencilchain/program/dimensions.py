"""Dimensions, the offsets written as `I + 1`, and the conditions written as `K == 0` or
`K >= sc.size(K) - 1` (regions of the index along a dimension, program/regions.py)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from stencilchain.errors import DefinitionError
from stencilchain.program import regions
from stencilchain.program.records import frozen

# The kinds of dimension: the axes of a grid or mesh (structured, or the entities of an
# unstructured mesh: cells, edges, vertices), and the neighbour slots of a connectivity.
HORIZONTAL = "horizontal"
VERTICAL = "vertical"
LOCAL = "local"
KINDS = (HORIZONTAL, VERTICAL, LOCAL)


@dataclasses.dataclass(frozen=True, eq=False)
class Dimension:
    """A named axis of the grid; fields declare theirs as `Field[[I, J], float64]`.

    `kind` is HORIZONTAL by default; a LOCAL dimension numbers the neighbour slots of a
    connectivity (`sc.Dimension("C2E", kind=sc.LOCAL)`): neighbour reductions run over it,
    and it cannot be shifted. VERTICAL is informative only.

    `base`: set on a staggered dimension, `sc.staggered(K)` (the points half-way between
    those of K), to the dimension it is staggered against; None on every other."""

    name: str
    kind: str = HORIZONTAL
    # not in the canonical IR, which never holds a staggered dimension (program/staggered.py)
    base: Dimension | None = dataclasses.field(
        default=None, repr=False, metadata={"canonical": False}
    )

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"a dimension name must be an identifier, got {self.name!r}")
        if self.kind not in KINDS:
            raise ValueError(
                f"dimension {self.name}: kind must be one of sc.HORIZONTAL, sc.VERTICAL, "
                f"sc.LOCAL, got {self.kind!r}"
            )
        if self.base is not None:
            _check_base(self)

    @property
    def is_local(self) -> bool:
        return self.kind == LOCAL

    @property
    def is_staggered(self) -> bool:
        return self.base is not None

    def __add__(self, offset: float) -> Offset:
        return _offset(self, "+", offset)

    def __sub__(self, offset: float) -> Offset:
        return _offset(self, "-", offset)

    def __call__(self, slot: object) -> Slot:
        """`C2EDim(0)`: neighbour slot 0 of this local dimension, to read a local field at
        one slot, `w[C2EDim(0)]`."""
        return slot_of(self, slot)

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    # `K == 0`, `K >= sc.size(K) - 1`: conditions for sc.concat_where. A Dimension compares
    # with a Dimension as a plain value (and stays hashable, a dict key).
    # A staggered dimension equals only the staggered counterpart of an equal base (not a
    # plain dimension that happens to share its name).
    def __hash__(self) -> int:
        return hash((self.name,))

    def __eq__(self, other: object) -> Any:
        if isinstance(other, Dimension):
            return self.name == other.name and self.base == other.base
        return _condition(self, "eq", other)

    def __ne__(self, other: object) -> Any:
        if isinstance(other, Dimension):
            return not (self.name == other.name and self.base == other.base)
        return _condition(self, "ne", other)

    def __lt__(self, other: object) -> Any:
        return _condition(self, "lt", other)

    def __le__(self, other: object) -> Any:
        return _condition(self, "le", other)

    def __gt__(self, other: object) -> Any:
        return _condition(self, "gt", other)

    def __ge__(self, other: object) -> Any:
        return _condition(self, "ge", other)


# Whether any staggered dimension was made in this process: until one is, no program has
# one, and the program trace skips looking for them (program/staggered.py).
staggered_made = False


def _check_base(dim: Dimension) -> None:
    global staggered_made
    base = dim.base
    if not isinstance(base, Dimension) or base.base is not None or base.is_local:
        raise ValueError(
            f"dimension {dim.name}: a staggered dimension is made by sc.staggered(dim) of a "
            f"dimension that is neither local nor itself staggered, got base={base!r}"
        )
    if dim.kind != base.kind:
        raise ValueError(f"dimension {dim.name}: a staggered dimension has its base's kind")
    staggered_made = True


def staggered(dim: object) -> Dimension:
    """The staggered counterpart of `dim`: the points half-way between those of `dim`,
    `KHalf = sc.staggered(K)` (named `KHalf`). Index `h` of KHalf sits half a point below
    index `h` of K: a field over KHalf with one point more than one over K has a point on
    either side of each of its points. Of a staggered dimension, its base: staggered dims
    flip (`sc.staggered(KHalf) == K`). A field is read across with a half shift,
    `theta(KHalf - 0.5)`, `w(K + 0.5)` (docs/dsl.md, "Staggered dimensions")."""
    if not isinstance(dim, Dimension):
        raise DefinitionError(f"sc.staggered takes a sc.Dimension, got {dim!r}")
    if dim.base is not None:
        return dim.base
    if dim.is_local:
        raise DefinitionError(
            f"sc.staggered({dim.name}): {dim.name} is a local dimension (neighbour slots), "
            "which has no points half-way between its own"
        )
    return Dimension(f"{dim.name}Half", dim.kind, base=dim)


def non_staggered(dim: Dimension) -> Dimension:
    """The dimension itself, or of a staggered one its base: the index space both share."""
    return dim if dim.base is None else dim.base


def counterparts_message(where: str, dims: tuple[Dimension, ...]) -> str | None:
    """What is wrong with `dims` when they hold a dimension and its staggered counterpart
    (None if they do not): a field or domain is never over both."""
    seen: dict[Dimension, Dimension] = {}
    for d in dims:
        other = seen.setdefault(non_staggered(d), d)
        if other != d:
            return (
                f"{where}: over both {other.name} and {d.name}, a dimension and its "
                "staggered counterpart (one index space); a field is over one of them"
            )
    return None


class Traced:
    """The base class of the values recorded while tracing (tracing.Symbol): a dimension
    compared with one says what to compare it with instead (a condition on values is
    sc.where's)."""

    __slots__ = ()


def _condition(dim: Dimension, op: str, other: object) -> Any:
    """`dim <op> other` as a condition on the index along `dim` (a `regions.Region`);
    NotImplemented for values that are neither numbers nor sizes (e.g. `K == None`)."""
    if isinstance(other, (int, float, np.number, regions.Size, Traced)):
        return regions.compare(dim, op, other)
    return NotImplemented


def size(dim: object) -> regions.Size:
    """The size of the arrays along `dim`, for conditions counted from the end:
    `sc.concat_where(K == sc.size(K) - 1, a, b)`."""
    if not isinstance(dim, Dimension):
        raise DefinitionError(f"sc.size takes a sc.Dimension, got {dim!r}")
    return regions.Size(dim)


@frozen
class Slot:
    """`C2EDim(0)`: one neighbour slot of a local dimension, as in `w[C2EDim(0)]`."""

    dim: Dimension
    slot: int

    def __repr__(self) -> str:
        return f"{self.dim.name}({self.slot})"


def slot_of(dim: Dimension, slot: object) -> Slot:
    """`dim(slot)` checked: a local dimension and a non-negative Python int (its upper bound,
    the connectivity's max_neighbors, is checked where the connectivity is known)."""
    written = f"`{dim.name}({slot!r})`"
    if not dim.is_local:
        raise DefinitionError(
            f"{written}: {dim.name} is not a local dimension; a slot selects one neighbour "
            f"slot of a local dimension (kind=sc.LOCAL) of a local field, e.g. w[C2EDim(0)]; "
            f"a field over {dim.name} is read at other points by shifts, f({dim.name} + 1)"
        )
    if type(slot) is not int or slot < 0:
        raise DefinitionError(
            f"{written}: a neighbour slot is a non-negative Python int, got {slot!r} "
            f"({type(slot).__name__}), e.g. {dim.name}(0)"
        )
    return Slot(dim, slot)


@frozen
class Offset:
    """A shift of `amount` grid points along `dim`; with `half`, of `amount + 0.5` points:
    a half shift onto `dim` from its staggered counterpart (`theta(KHalf - 0.5)`, where
    `amount` is -1; program/staggered.py)."""

    dim: Dimension
    amount: int
    half: bool = False

    @property
    def written(self) -> float:
        return self.amount + 0.5 if self.half else self.amount

    def __repr__(self) -> str:
        value = self.written
        shown = f"{abs(value)}" if self.half else f"{abs(int(value))}"
        return f"{self.dim.name} {'-' if value < 0 else '+'} {shown}"


def _offset(dim: Dimension, sign: str, value: object) -> Offset:
    """`dim <sign> value`: a whole number of points, or a half one (`K + 0.5`, `K - 1.5`)."""
    if (
        isinstance(value, (float, np.floating))
        and not isinstance(value, bool)
        and (2 * float(value)).is_integer()
        and not float(value).is_integer()
    ):
        if dim.is_local:
            raise DefinitionError(
                f"`{dim.name} {sign} {value!r}`: {dim.name} is a local dimension; a half "
                "shift moves between a dimension and its staggered counterpart"
            )
        written = float(value) if sign == "+" else -float(value)
        floor = int(np.floor(written))
        return Offset(dim, floor, half=True)
    amount = _as_offset(dim, sign, value)
    return Offset(dim, amount if sign == "+" else -amount)


def _as_offset(dim: Dimension, sign: str, value: object) -> int:
    """`value` as the amount of `dim <sign> value`; anything but a Python int is a
    DefinitionError at the user's line (a shift is written while tracing)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    written = f"`{dim.name} {sign} {value!r}`"
    example = f"f({dim.name} {sign} 1)"
    if isinstance(value, (bool, np.bool_)):
        why = f"a bool is not a number of grid points; write {example} for one point"
    elif isinstance(value, np.integer):
        why = f"write a Python int: f({dim.name} {sign} int(n)) for a NumPy integer n"
    elif isinstance(value, (float, np.floating)) and float(value).is_integer():
        why = f"write the int: f({dim.name} {sign} {int(value)})"
    elif isinstance(value, (float, np.floating)):
        why = (
            f"a field is only known at grid points, so a value between them is a weighted "
            f"sum of neighbours, e.g. 0.5 * (f({dim.name}) + f({dim.name} {sign} 1)); a "
            "half shift (0.5, 1.5, ...) reads a field across from the staggered "
            "counterpart of a dimension, sc.staggered"
        )
    elif isinstance(value, str):
        why = f"write the number, not a string: {example}"
    else:
        why = f"offsets are fixed when the operator is defined, e.g. {example}"
    raise DefinitionError(
        f"{written}: a shift offset is a whole number of grid points (a Python int), "
        f"got {value!r} ({type(value).__name__}); {why}"
    )
