"""Domain bounds counted from one field's own range: `sc.start_of(z_q, K)` and
`sc.end_of(z_q, K)`, plus or minus an int (`domain={K: (1, sc.end_of(z_q, K))}`, what
gt4py's `out=z_q[:, 1:]` means). The IR holds them as `ir.Bound(value, from_end,
field=name)`; a program whose fields all span the index space runs them as plain bounds
(the field starts at 0 and ends at `size`), and `resolved` turns them into the plain bounds
of one range key when the program is specialised for fields over their own ranges
(program/own_ranges.py), so a call pays nothing for them. Why: docs/adr/0052."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.program_args import ProgramArg


class FieldBound:
    """`sc.end_of(f, K) - 1` while a program is traced: the first index (`from_end` False)
    or the end of field parameter `arg`'s range along `dim`, plus `value`."""

    __slots__ = ("arg", "dim", "from_end", "value")

    def __init__(self, arg: ProgramArg, dim: Dimension, from_end: bool, value: int = 0) -> None:
        self.arg = arg
        self.dim = dim
        self.from_end = from_end
        self.value = value

    def _plus(self, other: object, sign: int) -> FieldBound:
        if type(other) is not int:
            raise DefinitionError(
                f"{self!r} {'+' if sign > 0 else '-'} {other!r}: a bound from a field's "
                "range moves only by an int literal"
            )
        return FieldBound(self.arg, self.dim, self.from_end, self.value + sign * other)

    def __add__(self, other: object) -> FieldBound:
        return self._plus(other, 1)

    def __radd__(self, other: object) -> FieldBound:
        return self._plus(other, 1)

    def __sub__(self, other: object) -> FieldBound:
        return self._plus(other, -1)

    def bound(self, trace: object, dim: Dimension, what: str) -> ir.Bound:
        """The IR's bound, for a domain of `dim` in the program `trace` traces (`what`
        names it in errors)."""
        if self.arg.trace is not trace:
            raise DefinitionError(
                f"{what} is {self!r}, of a parameter of another program; count it from a "
                "field parameter of this one"
            )
        if self.dim != dim:
            raise DefinitionError(
                f"{what} is {self!r}, a bound along {self.dim.name}; a bound of {dim.name} "
                f"counts from a field's range along {dim.name}"
            )
        return ir.Bound(self.value, self.from_end, field=self.arg.ref.name)

    def __repr__(self) -> str:
        fn = "end_of" if self.from_end else "start_of"
        text = f"sc.{fn}({self.arg.ref.name}, {self.dim.name})"
        return (
            text
            if self.value == 0
            else f"{text} {'+' if self.value > 0 else '-'} {abs(self.value)}"
        )


def _field_bound(fn: str, field: object, dim: object, from_end: bool) -> FieldBound:
    if not isinstance(field, ProgramArg):
        raise DefinitionError(
            f"sc.{fn}({field!r}, ...): give a field parameter of the program being defined, "
            "inside its body"
        )
    t = field.ref.type
    if field.temporary or not isinstance(t, ir.FieldType) or isinstance(t, ir.TableType):
        raise DefinitionError(
            f"sc.{fn}({field.ref.name}, ...): '{field.ref.name}' is a {field.kind} of type "
            f"{t!r}; a bound counts from the range of a field parameter"
        )
    if not isinstance(dim, Dimension) or dim not in t.dims:
        raise DefinitionError(
            f"sc.{fn}({field.ref.name}, {dim!r}): give one of its dimensions "
            f"({', '.join(d.name for d in t.dims)})"
        )
    return FieldBound(field, dim, from_end)


def start_of(field: object, dim: object) -> FieldBound:
    """The first index of field parameter `field`'s range along `dim`, as a domain bound
    (0 for an array; where a field value made by `sc.as_field` starts)."""
    return _field_bound("start_of", field, dim, False)


def end_of(field: object, dim: object) -> FieldBound:
    """One past the last index of field parameter `field`'s range along `dim`, as a
    domain bound (its size, for an array): `domain={K: (1, sc.end_of(z_q, K))}`."""
    return _field_bound("end_of", field, dim, True)


def resolved(
    program: ir.Program, by_axis: Mapping[tuple[str, Dimension], tuple[int, int]]
) -> ir.Program:
    """`program` with every bound counted from a field's range replaced by the plain bound
    that range gives, for fields over the ranges `by_axis` (per field and dimension its
    (start, gap); (0, 0) where not given): the start `start + value`, the end
    `size - gap + value`."""
    if not any(
        _has_field_bounds(call.domain)
        or (call.lowered is not None and _has_field_bounds(call.lowered.domain))
        for call in program.calls
    ):
        return program
    done: dict[int, ir.Domain] = {}

    def domain(d: ir.Domain) -> ir.Domain:
        if id(d) not in done:  # calls of one lowering share their traced domain
            done[id(d)] = dataclasses.replace(
                d,
                dims=tuple(
                    dataclasses.replace(
                        dd, starts=bounds(dd, dd.starts), stops=bounds(dd, dd.stops)
                    )
                    for dd in d.dims
                ),
            )
        return done[id(d)]

    def bounds(dd: ir.DimDomain, given: tuple[ir.Bound, ...]) -> tuple[ir.Bound, ...]:
        return tuple(plain(b, dd.dim) for b in given)

    def plain(b: ir.Bound, dim: Dimension) -> ir.Bound:
        if b.field is None:
            return b
        start, gap = by_axis.get((b.field, dim), (0, 0))
        return ir.Bound(b.value - gap, True) if b.from_end else ir.Bound(b.value + start, False)

    calls = []
    for call in program.calls:
        lowered = call.lowered
        if lowered is not None:
            lowered = dataclasses.replace(lowered, domain=domain(lowered.domain))
        calls.append(dataclasses.replace(call, domain=domain(call.domain), lowered=lowered))
    return dataclasses.replace(program, calls=tuple(calls))


def _has_field_bounds(domain: ir.Domain) -> bool:
    return any(b.field is not None for dd in domain.dims for b in (*dd.starts, *dd.stops))


__all__ = ["FieldBound", "end_of", "resolved", "start_of"]
