"""Checks of the arguments of a program call, shared by every backend.

Nothing is converted: a wrong dtype, ndim, shape or a read-only output is an
`ArgumentError` naming the argument, raised before any work is done.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from stencilchain.errors import ArgumentError
from stencilchain.program import ir
from stencilchain.program.connectivity import Connectivity
from stencilchain.program.device import Device
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import ScalarType, is_finite_as
from stencilchain.program.field_values import FieldValue, unwrap_field
from stencilchain.program.ir_walk import written_fields
from stencilchain.program.own_ranges import RangeKey, RangeKeys
from stencilchain.program.tables import check_table_entries
from stencilchain.program.untabled_slots import untabled_slots


class _Param:
    """A parameter as the checker sees it: a frozen value (equality, hash and repr by its
    fields). Plain slotted classes, not `@frozen` ones: the first call of every program
    makes them, and `@frozen` compiles a class's `__init__` at its first instance (ADR 0064)."""

    __slots__ = ()
    _FIELDS: ClassVar[tuple[str, ...]] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"{type(self).__name__}({fields})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._values())

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a {type(self).__name__}")


class FieldParam(_Param):
    """A field parameter as the checker sees it: its type and whether the program writes it."""

    __slots__ = ("name", "type", "written")
    _FIELDS = ("name", "type", "written")

    name: str
    type: ir.FieldType
    written: bool

    def __init__(self, name: str, type: ir.FieldType, written: bool) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "written", written)


class ScalarParam(_Param):
    """A scalar parameter as the checker sees it."""

    __slots__ = ("dtype", "name")
    _FIELDS = ("name", "dtype")

    name: str
    dtype: ScalarType

    def __init__(self, name: str, dtype: ScalarType) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "dtype", dtype)


def overlap_message(other: str) -> str:
    """What is wrong with an output that shares memory with argument `other`."""
    return (
        f"shares memory with argument '{other}'; a program writes its outputs while it "
        "reads its other arguments, so pass arrays that do not overlap"
    )


def bind_arguments(
    program: ir.Program, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, ...]:
    """The arguments of `program(*args, **kwargs)` in parameter order, bound as Python
    binds them: by position first, then by name. Without keywords `args` comes back as it
    is (the checker then checks their count), so a positional call pays one test."""
    if not kwargs:
        return args
    return ArgumentBinder(program)(args, kwargs)


class ArgumentBinder:
    """`bind_arguments` of one program, its parameters' positions looked up once (what a
    call path that binds at every call keeps)."""

    def __init__(self, program: ir.Program) -> None:
        self.program_name = program.name
        self.names = tuple(p.name for p in program.params)
        self.index = {name: k for k, name in enumerate(self.names)}

    def __call__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        if not kwargs:
            return args
        names, index = self.names, self.index
        if len(args) + len(kwargs) == len(names):  # every parameter once, or a mistake
            bound: list[Any] = [*args, *(_MISSING,) * len(kwargs)]
            for name, value in kwargs.items():
                at = index.get(name, -1)
                if at < len(args) or bound[at] is not _MISSING:
                    return self._refuse(args, kwargs)
                bound[at] = value
            return tuple(bound)
        return self._refuse(args, kwargs)

    def _refuse(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """What a call whose keywords do not bind once each says: the first mistake."""
        names = self.names
        takes = f"{self.program_name}() takes {len(names)} arguments ({', '.join(names)})"
        if len(args) > len(names):
            raise ArgumentError(
                f"{takes}, got {len(args)} by position and {len(kwargs)} by keyword"
            )
        bound: list[Any] = [*args, *(_MISSING,) * (len(names) - len(args))]
        for name, value in kwargs.items():
            if name not in self.index:
                import difflib  # only here: it costs a millisecond at import

                close = difflib.get_close_matches(name, names, n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                raise ArgumentError(f"{takes}, got an unknown keyword argument '{name}'{hint}")
            at = self.index[name]
            if at < len(args):
                raise ArgumentError(
                    f"{takes}, got '{name}' twice: as argument {at + 1} by position and by keyword"
                )
            bound[at] = value
        missing = [f"'{n}'" for n, value in zip(names, bound) if value is _MISSING]
        if missing:
            raise ArgumentError(
                f"{takes}, got {len(args)} by position and {len(kwargs)} by keyword; "
                f"missing: {', '.join(missing)}"
            )
        return tuple(bound)


_MISSING = object()


class TableChecks:
    """The range check of a program's neighbour tables for a compiled entry point, whose
    native code checks every other property of the arguments (a wrong table dtype or shape
    is left to it). Empty, and never called, for a program without tables."""

    def __init__(self, program: ir.Program) -> None:
        self.program_name = program.name
        # per table: its position, its connectivity, and a (position, axis) of an argument
        # over the connectivity's source dimension (which gives that dimension's size)
        self.tables: list[tuple[int, str, Connectivity, tuple[int, int]]] = []
        for index, p in enumerate(program.params):
            if not isinstance(p.type, ir.TableType):
                continue
            conn = p.type.connectivity
            source = next(
                (
                    (k, q.type.dims.index(conn.source))
                    for k, q in enumerate(program.params)
                    if isinstance(q.type, ir.FieldType) and conn.source in q.type.dims
                ),
                None,
            )
            if source is not None:
                self.tables.append((index, p.name, conn, source))

    def __bool__(self) -> bool:
        return bool(self.tables)

    def check(self, args: tuple[Any, ...]) -> None:
        for index, name, conn, (source, axis) in self.tables:
            if index >= len(args) or source >= len(args):
                return  # a wrong count: the native entry says so
            table, field = args[index], args[source]
            if type(table) is FieldValue or type(field) is FieldValue:
                continue  # the native entry rejects it; the call is retried unwrapped
            shape = getattr(field, "shape", None)
            if getattr(table, "ndim", None) != 2 or shape is None or len(shape) <= axis:
                continue  # not arrays of the declared kind: the native entry says so
            if not np.issubdtype(table.dtype, np.integer):
                continue
            where = f"argument '{name}' of {self.program_name}()"
            check_table_entries(where, conn, table, int(shape[axis]))


class ArgumentChecker:
    """Validates the arguments of one program; built once, called per call."""

    def __init__(self, program: ir.Program, device: Device = Device.CPU) -> None:
        self.program_name = program.name
        self.device = device
        written = written_fields(program)
        self.params: tuple[FieldParam | ScalarParam, ...] = tuple(
            FieldParam(p.name, p.type, p.name in written)
            if isinstance(p.type, ir.FieldType)
            else ScalarParam(p.name, p.type)
            for p in program.params
        )
        self._signature = ", ".join(p.name for p in program.params)
        # the slots read of local dimensions that no table numbers: the arguments' extent
        # along each must hold them (program/untabled_slots.py)
        self.slot_needs = untabled_slots(program)
        # fields over their own ranges (program/own_ranges.py): the key of a call, and
        # the (start, gap) per axis of each field of a program specialised for one
        self.keys = RangeKeys(program)
        self.index = {p.name: k for k, p in enumerate(program.params)}
        self.ranges = dict(program.ranges)
        # the embedded executor's specialisations per range key (program/embedded.py)
        # (the program run on whole-space copies, its checker, the check of its table
        # reads: program/table_reads.py)
        self.specialisations: dict[
            RangeKey,
            tuple[ir.Program, ArgumentChecker, Callable[[tuple[Any, ...]], None] | None],
        ] = {}
        self.key: RangeKey | None = (
            tuple(
                self.ranges.get(name, ((0, 0),) * len(dims)) for _, name, dims in self.keys.fields
            )
            if self.ranges
            else None
        )

    def unwrapped(self, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """The arguments with each field value (`sc.as_field`) replaced by its array, or
        None when there is none (a call of plain arrays pays one scan of its arguments,
        and only on the paths that call this: the embedded one and a rejected call's)."""
        if len(args) != len(self.params):
            return None
        plain: list[Any] | None = None
        for k, arg in enumerate(args):
            if type(arg) is not FieldValue:
                continue
            param = self.params[k]
            if not isinstance(param, FieldParam):
                continue  # the scalar check names it
            if plain is None:
                plain = list(args)
            starts = self.starts(param.name, len(arg.dims))
            if arg.dims == param.type.dims and arg.start == starts:
                plain[k] = arg.array
            else:  # the ArgumentError that says what is wrong
                plain[k] = unwrap_field(self._where(param), param.type.dims, arg)
                if arg.start != starts:  # the callers ask RangeKeys first
                    raise ArgumentError(
                        f"{self._where(param)}: a field value starting at {arg.start}, but "
                        f"this program runs fields starting at {starts}"
                    )
        return None if plain is None else tuple(plain)

    def starts(self, name: str, ndim: int) -> tuple[int, ...]:
        """Where a field value for field parameter `name` (of `ndim` dimensions) runs as its
        array: at 0, or where this program's ranges (a specialisation's) start it."""
        return tuple(s for s, _ in self.ranges.get(name, ())) or (0,) * ndim

    def check(self, args: tuple[Any, ...]) -> tuple[dict[Dimension, int], list[Any]]:
        """The size of each dimension and the arguments, scalars as NumPy scalars and
        field values (`sc.as_field`) as their arrays."""
        plain = self.unwrapped(args)
        if plain is not None:
            args = plain
        if len(args) != len(self.params):
            raise ArgumentError(
                f"{self.program_name}() takes {len(self.params)} arguments "
                f"({self._signature}), got {len(args)}"
            )
        sizes: dict[Dimension, int] = {}
        size_source: dict[Dimension, str] = {}
        values: list[Any] = []
        for param, arg in zip(self.params, args):
            if isinstance(param, ScalarParam):
                values.append(self.scalar(param, arg))
                continue
            self.field(param, arg)
            axes = self.ranges.get(param.name, ())
            for axis, (dim, size) in enumerate(zip(param.type.dims, arg.shape)):
                if axes:  # over its own range [start, n - gap): n is the index space's size
                    size += sum(axes[axis])
                known = sizes.get(dim)
                if known is None:
                    sizes[dim], size_source[dim] = size, param.name
                elif known != size:
                    raise ArgumentError(
                        f"argument '{param.name}' of {self.program_name}(): size {size} along "
                        f"{dim.name} differs from size {known} of argument '{size_source[dim]}'"
                        + (f" (over the ranges {self.ranges!r})" if self.ranges else "")
                    )
            values.append(arg)
        for need in self.slot_needs:
            if need.slot >= sizes[need.dim]:
                raise ArgumentError(need.message(self.program_name, sizes[need.dim]))
        self.check_overlaps(args)
        for param, arg in zip(self.params, args):
            if isinstance(param, FieldParam) and isinstance(param.type, ir.TableType):
                self.table_entries(param, arg, sizes)
        return sizes, values

    def table_entries(self, param: FieldParam, arg: Any, sizes: dict[Dimension, int]) -> None:
        assert isinstance(param.type, ir.TableType)
        source_size = sizes.get(param.type.connectivity.source)
        if source_size is not None:  # else no argument is over the source: nothing reads it
            check_table_entries(self._where(param), param.type.connectivity, arg, source_size)

    def check_overlaps(self, args: tuple[Any, ...]) -> None:
        fields = [(p, a) for p, a in zip(self.params, args) if isinstance(p, FieldParam)]
        for param, arg in fields:
            if not param.written or not isinstance(arg, np.ndarray):
                continue
            for other, other_arg in fields:
                if other is not param and np.may_share_memory(arg, other_arg):
                    raise ArgumentError(f"{self._where(param)}: {overlap_message(other.name)}")

    def _where(self, param: FieldParam | ScalarParam) -> str:
        return f"argument '{param.name}' of {self.program_name}()"

    def field(self, param: FieldParam, arg: Any) -> None:
        ftype = param.type
        got = f"{type(arg).__module__}.{type(arg).__qualname__}"
        if self.device is Device.GPU:
            if not hasattr(arg, "__cuda_array_interface__"):
                raise ArgumentError(
                    f"{self._where(param)}: expected a GPU array (e.g. cupy) for {ftype!r}, "
                    f"got {got}" + (" on the CPU" if isinstance(arg, np.ndarray) else "")
                )
        elif not isinstance(arg, np.ndarray):
            device = " on the GPU" if hasattr(arg, "__cuda_array_interface__") else ""
            raise ArgumentError(
                f"{self._where(param)}: expected a numpy array for {ftype!r}, got {got}{device}"
            )
        if arg.ndim != len(ftype.dims):
            raise ArgumentError(
                f"{self._where(param)}: expected {len(ftype.dims)} dimension(s) "
                f"({', '.join(d.name for d in ftype.dims)}), got an array of shape {arg.shape}"
            )
        if arg.dtype != ftype.dtype.numpy:
            raise ArgumentError(
                f"{self._where(param)}: expected dtype {ftype.dtype}, got {arg.dtype}; nothing "
                f"is converted implicitly, pass arr.astype(np.{ftype.dtype.numpy.name})"
            )
        if isinstance(arg, np.ndarray) and any(s % arg.itemsize for s in arg.strides):
            raise ArgumentError(
                f"{self._where(param)}: strides {arg.strides} are not a multiple of the item "
                f"size {arg.itemsize} (a field of a structured array, say); pass a copy"
            )
        if isinstance(ftype, ir.TableType) and arg.shape[1] != ftype.connectivity.max_neighbors:
            raise ArgumentError(
                f"{self._where(param)}: the table of {ftype.connectivity.name} has "
                f"{arg.shape[1]} columns, but {ftype.connectivity.name} is declared with "
                f"max_neighbors={ftype.connectivity.max_neighbors}; pass an array of shape "
                f"(n_{ftype.connectivity.entity.name}, {ftype.connectivity.max_neighbors})"
            )
        if param.written and isinstance(arg, np.ndarray) and not arg.flags.writeable:
            raise ArgumentError(f"{self._where(param)} is written by the program but is read-only")
        if param.written and 0 not in arg.shape:  # an empty array has no element to share
            for dim, size, stride in zip(ftype.dims, arg.shape, arg.strides):
                if stride == 0 and size > 1:
                    raise ArgumentError(
                        f"{self._where(param)} is written by the program but has stride 0 "
                        f"along {dim.name} (a broadcast view): its {size} points along "
                        f"{dim.name} are one element; pass an array of its own"
                    )

    def scalar(self, param: ScalarParam, arg: Any) -> Any:
        dtype = param.dtype
        bad = ArgumentError(
            f"{self._where(param)}: expected a {dtype} scalar, got "
            f"{type(arg).__name__} {arg!r}"
            + (f" of dtype {arg.dtype}" if isinstance(arg, (np.generic, np.ndarray)) else "")
        )
        if isinstance(arg, np.generic):
            if arg.dtype != dtype.numpy:
                raise bad
            return arg
        if isinstance(arg, bool):
            ok = dtype.is_bool
        elif isinstance(arg, int):
            ok = (dtype.is_float and is_finite_as(arg, dtype)) or (
                dtype.is_integer
                and int(np.iinfo(dtype.numpy).min) <= arg <= int(np.iinfo(dtype.numpy).max)
            )
        elif isinstance(arg, float):
            ok = dtype.is_float and is_finite_as(arg, dtype)
        else:
            ok = False
        if not ok:
            raise bad
        return dtype.numpy.type(arg)
