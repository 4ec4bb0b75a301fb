"""A gt4py program's field parameters while it is traced: they can be sliced, as gt4py
writes a call's domain (`lap(f, out=out[1:-1, 1:-1])`); a slice passed as `out=` becomes
stencilchain's `domain=` of the call, its bounds counted from that field's own range
(`sc.start_of`, `sc.end_of`) as gt4py counts them."""

from __future__ import annotations

from typing import Any

from stencilchain.compat.gt4py._offsets import current
from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.field_bounds import FieldBound
from stencilchain.program.program_args import ProgramArg


class FieldArg:
    """A field parameter of the program being traced."""

    __slots__ = ("arg",)

    def __init__(self, arg: ProgramArg) -> None:
        self.arg = arg

    def __getitem__(self, key: object) -> SlicedArg:
        return SlicedArg(self.arg, key if isinstance(key, tuple) else (key,))

    def __repr__(self) -> str:
        return repr(self.arg)


class SlicedArg:
    """`out[1:-1, 1:-1]`: a field parameter over a part of its domain."""

    __slots__ = ("arg", "slices")

    def __init__(self, arg: ProgramArg, slices: tuple[object, ...]) -> None:
        self.arg = arg
        self.slices = slices

    def domain(self) -> dict[Any, tuple[Any, Any]]:
        """The call's domain along each sliced dimension, counted as gt4py counts it: from
        this field's own range (a start or stop of None is its start or end, a negative
        one counts from its end, another from its start), whatever the other fields'."""
        t = self.arg.ref.type
        assert isinstance(t, ir.FieldType)
        name = self.arg.ref.name
        if len(self.slices) > len(t.dims):
            raise DefinitionError(
                f"{name}[...]: {len(self.slices)} slices of a field over {len(t.dims)} dimensions"
            )
        found: dict[Any, tuple[Any, Any]] = {}
        for dim, s in zip(t.dims, self.slices):
            if not isinstance(s, slice) or s.step not in (None, 1):
                raise DefinitionError(
                    f"{name}[...]: a field parameter is sliced by start:stop per dimension "
                    f"(e.g. {name}[1:-1, :]) to give a call's domain, got {s!r}"
                )
            if s.start is None and s.stop is None:
                continue  # inferred, inside the field's range
            found[dim] = (self._bound(dim, s.start, False), self._bound(dim, s.stop, True))
        return found

    def _bound(self, dim: Dimension, value: object, stop: bool) -> object:
        """One end of a slice as a bound from the field's range (None: its start or end)."""
        if value is None:
            return FieldBound(self.arg, dim, stop)
        if type(value) is not int:
            raise DefinitionError(
                f"{self.arg.ref.name}[...]: a slice of out= along {dim.name} is bounded by "
                f"int literals or None, got {value!r}"
            )
        return FieldBound(self.arg, dim, value < 0, value)


def wrapped(value: object) -> object:
    """A program's argument as the user's function sees it (fields sliceable)."""
    if isinstance(value, ProgramArg) and isinstance(value.ref.type, ir.FieldType):
        return FieldArg(value)
    if type(value) is tuple:
        return tuple(wrapped(v) for v in value)
    return value


def _unwrapped(value: object) -> object:
    if isinstance(value, FieldArg):
        return value.arg
    if isinstance(value, SlicedArg):
        raise DefinitionError(
            f"a slice of {value.arg.ref.name} is an argument only as out= (its domain); "
            "pass the field itself"
        )
    if type(value) is tuple:
        return tuple(_unwrapped(v) for v in value)
    return value


def _out_leaves(out: object) -> list[object]:
    """The fields of `out=` in the order of the call's fields (its nested tuples flat)."""
    if type(out) is tuple:
        return [leaf for v in out for leaf in _out_leaves(v)]
    return [out]


def _written(out: object) -> str:
    """`out=` as written: `(z_q[:, 1:], w[:, 1:])`."""
    if type(out) is tuple:
        return f"({', '.join(_written(v) for v in out)}{',' if len(out) == 1 else ''})"
    if isinstance(out, SlicedArg):
        parts = [
            f"{'' if s.start is None else s.start}:{'' if s.stop is None else s.stop}"
            for s in out.slices
            if isinstance(s, slice)
        ]
        return f"{out.arg.ref.name}[{', '.join(parts)}]"
    return out.arg.ref.name if isinstance(out, FieldArg) else repr(out)


def _plain_out(out: object) -> object:
    if isinstance(out, (SlicedArg, FieldArg)):
        return out.arg
    if type(out) is tuple:
        return tuple(_plain_out(v) for v in out)
    return out


def unwrapped_call(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A call's arguments as stencilchain's operators take them: fields unwrapped, a
    sliced `out=` as the field and `domain=`."""
    args = tuple(_unwrapped(a) for a in args)
    kwargs = {k: (v if k == "out" else _unwrapped(v)) for k, v in kwargs.items()}
    if "out" in kwargs:
        outs = _out_leaves(kwargs["out"])
        if any(isinstance(o, SlicedArg) for o in outs):
            if "domain" in kwargs:
                raise DefinitionError(
                    "give a call's domain by slicing out= or by domain=, not both"
                )
            first = outs[0]
            if isinstance(first, SlicedArg) and all(
                isinstance(o, SlicedArg) and o.slices == first.slices for o in outs
            ):
                # sliced alike: one domain, from the first field's range (which a call
                # lowering a scan needs); the fields' ranges must then be one, as checked
                # at each call (same_ranges)
                kwargs["domain"] = domain = first.domain()
                names = tuple(
                    dict.fromkeys(o.arg.ref.name for o in outs if isinstance(o, SlicedArg))
                )
                reads = current()
                if len(names) > 1 and domain and reads is not None:
                    reads.same_ranges.append((names, tuple(domain), _written(kwargs["out"])))
            else:  # sliced differently: a domain per field (an unsliced one inferred)
                domains = [o.domain() if isinstance(o, SlicedArg) else None for o in outs]
                kwargs["domain"] = tuple(domains)
        kwargs["out"] = _plain_out(kwargs["out"])
    return args, kwargs
