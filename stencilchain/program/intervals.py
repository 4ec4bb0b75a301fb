"""The bounds of index ranges in the IR: a `Bound` counted from the start, from the end or
from a scalar parameter, and an `Interval` of them (where a concat_where branch is
selected). They depend on nothing else of the IR, so that the conditions written on
dimensions (program/regions.py) are made of them without importing the IR."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stencilchain.program.bound_exprs import BoundExpr
from stencilchain.program.records import frozen


@frozen
class Bound:
    """One end of a domain: `value` from the start, or (from_end) `size + value`; or, with
    `param` (an integer scalar parameter of the program), that parameter's value at the
    call plus `value`, a negative parameter value counting from the end like a literal
    bound (`size + p`, then `+ value`); `param` may also be an integer expression of
    parameters (`BoundExpr`), whose value counts like a parameter's. `from_end` is False for
    a parameter bound.

    With `field` (a field parameter's name), the bound counts from that field's own range
    along the dimension: its first index (`from_end` False) or its end (True), plus `value`
    (`sc.end_of(z_q, K)`, gt4py's `out=z_q[:, 1:]`). A program whose fields all span the
    index space has them at 0 and `size`, so it runs such a bound as the same bound without
    `field`; a program specialised for fields over their own ranges replaces it by the plain
    bound its field's range gives (program/field_bounds.py).

    `anchor` is what the bound is counted from: two bounds with the same anchor compare by
    `value` for every array size and every argument."""

    value: int
    from_end: bool
    param: str | BoundExpr | None = None
    field: str | None = None

    @property
    def anchor(self) -> tuple[bool, str | BoundExpr, str]:
        return (self.from_end, self.param or "", self.field or "")

    def moved(self, delta: int) -> Bound:
        """The bound `delta` further along, counted from the same anchor."""
        return Bound(self.value + delta, self.from_end, self.param, self.field)

    def resolve(self, size: int, scalars: Mapping[str, Any] | None = None) -> int:
        if self.param is not None:
            if scalars is None:
                raise ValueError(f"bound {self!r} needs the value of parameter {self.param}")
            if isinstance(self.param, BoundExpr):
                p = self.param.evaluate(scalars)
            else:
                p = int(scalars[self.param])
            return (size + p if p < 0 else p) + self.value
        return size + self.value if self.from_end else self.value

    def __repr__(self) -> str:
        if self.param is not None:
            p = f"({self.param!r})" if isinstance(self.param, BoundExpr) else self.param
            return p if self.value == 0 else f"{p}{self.value:+d}"
        if self.field is not None:
            base = f"{'end' if self.from_end else 'start'}({self.field})"
            return base if self.value == 0 else f"{base}{self.value:+d}"
        if self.from_end:
            return "end" if self.value == 0 else f"end{self.value:+d}"
        return str(self.value)


@frozen
class Interval:
    """The indices `[max(starts), min(stops))` along one dimension; no start is unbounded
    below, no stop unbounded above (`Bound`s: from the start or from the end)."""

    starts: tuple[Bound, ...]
    stops: tuple[Bound, ...]

    def resolve(
        self, size: int, scalars: Mapping[str, Any] | None = None
    ) -> tuple[int | None, int | None]:
        """[start, stop) for this size (and the values of the scalars its bounds name);
        None where the interval is unbounded."""
        start = max(b.resolve(size, scalars) for b in self.starts) if self.starts else None
        stop = min(b.resolve(size, scalars) for b in self.stops) if self.stops else None
        return start, stop

    def __repr__(self) -> str:
        def side(bounds: tuple[Bound, ...], fn: str, none: str) -> str:
            if not bounds:
                return none
            return repr(bounds[0]) if len(bounds) == 1 else f"{fn}({', '.join(map(repr, bounds))})"

        return f"[{side(self.starts, 'max', '-inf')}, {side(self.stops, 'min', 'inf')})"
