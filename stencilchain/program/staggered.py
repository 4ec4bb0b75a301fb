"""Staggered dimensions (`KHalf = sc.staggered(K)`) and half shifts (`theta(KHalf - 0.5)`).

The tracer keeps a staggered dimension apart from its base: a field over KHalf is another
type than one over K, so mixing them without a half shift is a DefinitionError at the
user's line. Past the checks, the program trace works on the IR with every staggered
dimension replaced by its base (`unstagger`), as gt4py's compiled backends alias them: a
field over KHalf is then a field over K, perhaps one point longer (a field over its own
range, program/own_ranges.py), and a half shift a whole one.

Index `h` of KHalf sits half a point below index `h` of K (gt4py's convention), so
`x(KHalf + 0.5)` of a field over K reads `x[k]` at `h = k`, `x(KHalf - 0.5)` reads `x[h - 1]`,
and `w(K + 0.5)` of a field over KHalf reads `w[k + 1]`, `w(K - 0.5)` reads `w[k]`."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from stencilchain.errors import DefinitionError
from stencilchain.program import dimensions, ir
from stencilchain.program.dimensions import Dimension, Offset, non_staggered, staggered

T = TypeVar("T")


def half_shift(off: Offset, t: ir.FieldType) -> tuple[Dimension, int]:
    """The dimension of `t` that the half shift `off` moves along (the counterpart of the
    dimension it names), and by how many whole points there."""
    source = staggered(off.dim)  # the counterpart of the dimension it names
    if source not in t.dims:
        if off.dim in t.dims:
            raise DefinitionError(
                f"a half shift `{off!r}` of {t!r}: it reads a field over {source.name} at "
                f"points of {off.dim.name}, but this field is over {off.dim.name} already; "
                f"shift along it by whole points, f({off.dim.name} "
                f"{'-' if off.amount < 0 else '+'} 1)"
            )
        raise DefinitionError(
            f"a half shift `{off!r}` of {t!r}: it reads a field over {source.name} (the "
            f"{'base' if off.dim.base is None else 'staggered counterpart'} of "
            f"{off.dim.name}), but the field has {', '.join(d.name for d in t.dims)}"
        )
    # index h of the staggered dimension sits half a point below index h of its base
    return source, off.amount + (0 if off.dim.is_staggered else 1)


def staggered_hint(dim: Dimension, dims: tuple[Dimension, ...]) -> str:
    """A hint for a whole shift along `dim` of a field over its counterpart."""
    other = staggered(dim) if not dim.is_local else None
    if other is None or other not in dims:
        return ""
    return (
        f"; {dim.name} and {other.name} are a dimension and its staggered counterpart: "
        f"read a field over {other.name} at points of {dim.name} with a half shift, "
        f"f({dim.name} + 0.5) or f({dim.name} - 0.5)"
    )


def check_dims(where: str, dims: tuple[Dimension, ...]) -> None:
    """A field or domain is never over a dimension and its staggered counterpart."""
    both = dimensions.counterparts_message(where, dims)
    if both is not None:
        raise DefinitionError(both)


def unstagger(obj: T) -> T:
    """`obj` (IR, a type, a domain, or containers of them) with every staggered dimension
    replaced by its base, half shifts become whole ones: a shift by 0 is dropped, and a
    shift of a shift is one (the form the tracer makes)."""
    if not dimensions.staggered_made:
        return obj
    return _Unstagger().run(obj)  # type: ignore[no-any-return]


class _Unstagger:
    """One rebuild, memoised per object (the IR is a DAG: shared nodes stay shared)."""

    def __init__(self) -> None:
        self.memo: dict[int, Any] = {}
        self.keep: list[object] = []  # the objects of `memo`'s ids, alive while it is

    def run(self, obj: Any) -> Any:
        if obj is None or isinstance(obj, (str, int, float, bool, bytes)):
            return obj
        key = id(obj)
        if key in self.memo:
            return self.memo[key]
        made = self._rebuild(obj)
        self.memo[key] = made
        self.keep.append(obj)
        return made

    def _rebuild(self, obj: Any) -> Any:
        if isinstance(obj, Dimension):
            return non_staggered(obj)
        if isinstance(obj, tuple):
            items = tuple(self.run(x) for x in obj)
            if all(a is b for a, b in zip(items, obj)):
                return obj
            return type(obj)(*items) if hasattr(obj, "_fields") else items
        if isinstance(obj, list):
            return [self.run(x) for x in obj]
        if isinstance(obj, dict):
            return {self.run(k): self.run(v) for k, v in obj.items()}
        if isinstance(obj, frozenset):
            return frozenset(self.run(x) for x in obj)
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            changes = {}
            for f in dataclasses.fields(obj):
                if not f.init:
                    continue
                old = getattr(obj, f.name)
                new = self.run(old)
                if new is not old:
                    changes[f.name] = new
            made = dataclasses.replace(obj, **changes) if changes else obj
            if isinstance(made, ir.Shift):
                return _whole_shift(made)
            return made
        return obj


def _whole_shift(shift: ir.Shift) -> ir.Expr:
    """A shift over base dimensions only: zero amounts dropped, one of a shift merged."""
    amounts: dict[Dimension, int] = {}
    inner = shift.expr
    if isinstance(inner, ir.Shift):
        amounts.update(inner.offsets)
        inner = inner.expr
    for dim, amount in shift.offsets:
        amounts[dim] = amounts.get(dim, 0) + amount
    offsets = tuple((d, amounts[d]) for d in shift.type.dims if amounts.get(d, 0) != 0)
    if not offsets:
        return inner
    if offsets == shift.offsets and inner is shift.expr:
        return shift
    return ir.Shift(inner, offsets, shift.type)


__all__ = ["check_dims", "half_shift", "staggered_hint", "unstagger"]
