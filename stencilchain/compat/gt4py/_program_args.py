"""A gt4py program's field parameters while it is traced: they can be sliced, as gt4py
writes a call's domain (`lap(f, out=out[1:-1, 1:-1])`); a slice passed as `out=` becomes
stencilchain's `domain=` of the call."""

from __future__ import annotations

from typing import Any

from stencilchain.compat.gt4py._offsets import current
from stencilchain.errors import DefinitionError
from stencilchain.program import ir
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
                continue
            found[dim] = (0 if s.start is None else s.start, s.stop)
            reads = current()
            counts_from_end = s.stop is None or s.stop < 0 or (s.start or 0) < 0
            if reads is not None and counts_from_end:
                text = f"{s.start if s.start is not None else ''}:{s.stop if s.stop is not None else ''}"
                reads.from_end.append((name, dim, f"{name}[{text}]"))
        return found


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
            domains = [o.domain() if isinstance(o, SlicedArg) else None for o in outs]
            if all(d == domains[0] for d in domains[1:]):
                kwargs["domain"] = domains[0]
            else:  # sliced differently: a domain per field (an unsliced one inferred)
                kwargs["domain"] = tuple(domains)
        kwargs["out"] = _plain_out(kwargs["out"])
    return args, kwargs
