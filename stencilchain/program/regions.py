"""Conditions on the index along one dimension (`K == 0`, `K >= sc.size(K) - 1`), as unions of
intervals: the regions where a branch of `sc.concat_where` is selected. `Dimension`'s
comparisons make them (program/dimensions.py), so this module imports no dimension."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from stencilchain.errors import DefinitionError
from stencilchain.program.intervals import Bound, Interval

if TYPE_CHECKING:
    from stencilchain.program.dimensions import Dimension

_EVERYWHERE = Interval((), ())
_SYMBOLS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


class Size:
    """`sc.size(K)` plus an offset: the index counted from the end of the arrays along `dim`
    (`sc.size(K) - 1` is the last level)."""

    __slots__ = ("dim", "offset")

    def __init__(self, dim: Dimension, offset: int = 0) -> None:
        self.dim = dim
        self.offset = offset

    def __add__(self, other: object) -> Size:
        return Size(self.dim, self.offset + _int_offset(self, "+", other))

    __radd__ = __add__

    def __sub__(self, other: object) -> Size:
        return Size(self.dim, self.offset - _int_offset(self, "-", other))

    def __repr__(self) -> str:
        if self.offset == 0:
            return f"sc.size({self.dim.name})"
        sign = "+" if self.offset > 0 else "-"
        return f"sc.size({self.dim.name}) {sign} {abs(self.offset)}"

    def __bool__(self) -> bool:
        raise DefinitionError(
            f"{self!r} has no value when the operator is defined (it is the arrays' size at "
            "the call); compare a dimension with it inside sc.concat_where, e.g. "
            f"sc.concat_where({self.dim.name} == {self!r}, a, b)"
        )


def _int_offset(value: Size, sign: str, other: object) -> int:
    if isinstance(other, int) and not isinstance(other, bool):
        return other
    raise DefinitionError(
        f"`{value!r} {sign} {other!r}`: a position counted from the end is sc.size(dim) plus "
        f"or minus a Python int, got {type(other).__name__}"
    )


class Region:
    """A condition on the index along `dim`: the union of `intervals`. Combine with `&`, `|`,
    `~` (with a condition along another dimension: `Joined`); pass to sc.concat_where."""

    __slots__ = ("dim", "intervals", "text")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, dim: Dimension, intervals: tuple[Interval, ...], text: str) -> None:
        self.dim = dim
        self.intervals = intervals
        self.text: str = text

    def __repr__(self) -> str:
        return f"<condition {self.text}>"

    def __bool__(self) -> bool:
        raise DefinitionError(
            f"`{self.text}` has no truth value when the operator is defined (it holds at some "
            f"points and not at others): Python `if`, `and`, `or`, `not` run at trace time; "
            f"write sc.concat_where({self.text}, a, b), and combine conditions with `&`, `|`, `~`"
        )

    def _other(self, op: str, other: object) -> Region | Joined:
        if not isinstance(other, (Region, Joined)):
            raise DefinitionError(
                f"`{self.text} {op} {other!r}`: a condition on a dimension combines only with "
                "another such condition (K == 0, K >= sc.size(K) - 1); a condition on values "
                "is sc.where's, inside or around the concat_where"
            )
        return other

    def __and__(self, other: object) -> Region | Joined:
        o = self._other("&", other)
        if isinstance(o, Joined) or o.dim != self.dim:
            return Joined("&", self, o)
        return Region(
            self.dim, intersect(self.intervals, o.intervals), f"({self.text}) & ({o.text})"
        )

    def __or__(self, other: object) -> Region | Joined:
        o = self._other("|", other)
        if isinstance(o, Joined) or o.dim != self.dim:
            return Joined("|", self, o)
        return Region(self.dim, self.intervals + o.intervals, f"({self.text}) | ({o.text})")

    def __invert__(self) -> Region:
        return Region(self.dim, complement(self.intervals), f"~({self.text})")

    def __rand__(self, other: object) -> Region | Joined:
        return self._other("&", other)

    def __ror__(self, other: object) -> Region | Joined:
        return self._other("|", other)


class Joined:
    """Conditions on the indices along different dimensions joined by `&` or `|`
    (`(K > 0) & (Cell >= start)`): sc.concat_where nests one concat_where per side, `a & b`
    selecting the true branch where both hold, `a | b` where either does."""

    __slots__ = ("left", "op", "right", "text")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, op: str, left: Region | Joined, right: Region | Joined) -> None:
        self.op, self.left, self.right = op, left, right
        self.text: str = f"({left.text}) {op} ({right.text})"

    def __repr__(self) -> str:
        return f"<condition {self.text}>"

    def __bool__(self) -> bool:
        raise DefinitionError(
            f"`{self.text}` has no truth value when the operator is defined: write "
            f"sc.concat_where({self.text}, a, b)"
        )

    def _other(self, op: str, other: object) -> Region | Joined:
        if not isinstance(other, (Region, Joined)):
            raise DefinitionError(
                f"`({self.text}) {op} {other!r}`: a condition on dimensions combines only with "
                "another such condition; a condition on values is sc.where's"
            )
        return other

    def __and__(self, other: object) -> Joined:
        return Joined("&", self, self._other("&", other))

    def __or__(self, other: object) -> Joined:
        return Joined("|", self, self._other("|", other))

    def __rand__(self, other: object) -> Joined:
        return Joined("&", self._other("&", other), self)

    def __ror__(self, other: object) -> Joined:
        return Joined("|", self._other("|", other), self)

    def __invert__(self) -> Joined:  # De Morgan
        return Joined("|" if self.op == "&" else "&", ~self.left, ~self.right)


def _tightest(bounds: tuple[Bound, ...], pick: Callable[[list[int]], int]) -> tuple[Bound, ...]:
    """One bound per anchor (from the start, from the end, from a scalar): the tightest."""
    by_anchor: dict[tuple[bool, object, str], list[int]] = {}
    params: dict[tuple[bool, object, str], Bound] = {}
    for b in bounds:
        by_anchor.setdefault(b.anchor, []).append(b.value)
        params.setdefault(b.anchor, b)
    literal = sorted(a for a in by_anchor if params[a].param is None)
    scalar = [a for a in by_anchor if params[a].param is not None]
    return tuple(params[a].moved(pick(by_anchor[a]) - params[a].value) for a in literal + scalar)


def _interval(starts: tuple[Bound, ...], stops: tuple[Bound, ...]) -> Interval:
    return Interval(_tightest(starts, max), _tightest(stops, min))


def _provably_empty(interval: Interval) -> bool:
    """Empty for every size: bounds with one anchor, or a start from the end at or after a
    stop from the start (the size is never negative); a scalar's bound only against one
    from the same scalar."""
    return any(
        (a.anchor == b.anchor or (a.from_end and b.param is None)) and a.value >= b.value
        for a in interval.starts
        for b in interval.stops
    )


def intersect(left: tuple[Interval, ...], right: tuple[Interval, ...]) -> tuple[Interval, ...]:
    """The intersection of two unions of intervals (pairwise), without provably empty ones."""
    out: list[Interval] = []
    for a in left:
        for b in right:
            both = _interval(a.starts + b.starts, a.stops + b.stops)
            if not _provably_empty(both) and both not in out:
                out.append(both)
    return tuple(out)


def complement(intervals: tuple[Interval, ...]) -> tuple[Interval, ...]:
    """The indices in none of `intervals` (De Morgan: the intersection of each one's
    complement, the part below its start and the part from its stop on)."""
    result: tuple[Interval, ...] = (_EVERYWHERE,)
    for interval in intervals:
        outside: list[Interval] = []
        if not interval.starts and not interval.stops:
            return ()
        outside += [Interval((), (b,)) for b in interval.starts]
        outside += [Interval((b,), ()) for b in interval.stops]
        result = intersect(result, tuple(outside))
    return result


def compare(dim: Dimension, op: str, other: object) -> Region:
    """`dim <op> other` as a region, for an int (an index from the start), a `Size`
    (counted from the end) or a traced integer scalar of a field operator (its parameter or
    an expression of them: `index_bound`, program/tracing.py), whose value at the call
    counts like a domain bound's (negative: from the end)."""
    text = f"{dim.name} {_SYMBOLS[op]} {other!r}"
    index_bound = getattr(other, "index_bound", None)
    if callable(index_bound):
        bound = index_bound(f"`{dim.name} {_SYMBOLS[op]} ...`")
        assert isinstance(bound, Bound)
        text = f"{dim.name} {_SYMBOLS[op]} {bound!r}"
    elif isinstance(other, Size):
        if other.dim != dim:
            raise DefinitionError(
                f"`{text}`: compare a dimension with its own size, sc.size({dim.name})"
            )
        bound = Bound(other.offset, from_end=True)
    elif isinstance(other, (int, np.integer)) and not isinstance(other, (bool, np.bool_)):
        bound = Bound(int(other), from_end=False)
    else:
        hint = (
            f"write the int: {dim.name} {_SYMBOLS[op]} {int(other)}"
            if isinstance(other, float) and other.is_integer()
            else f"write e.g. {dim.name} {_SYMBOLS[op]} 0 or {dim.name} {_SYMBOLS[op]} "
            f"sc.size({dim.name}) - 1"
        )
        raise DefinitionError(
            f"`{text}`: a dimension is compared with an index, a Python int (from the first "
            f"index) or sc.size({dim.name}) plus or minus an int (from the end), got "
            f"{type(other).__name__}; {hint} (a condition on values is sc.where's)"
        )
    after = bound.moved(1)
    intervals = {
        "eq": (Interval((bound,), (after,)),),
        "ne": (Interval((), (bound,)), Interval((after,), ())),
        "lt": (Interval((), (bound,)),),
        "le": (Interval((), (after,)),),
        "gt": (Interval((after,), ()),),
        "ge": (Interval((bound,), ()),),
    }[op]
    return Region(dim, intervals, text)
