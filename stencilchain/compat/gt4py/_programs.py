"""gt4py's `@program`: a stencilchain program whose tables come from the call's
`offset_provider` (gt4py's spelling) instead of being parameters (stencilchain's).

The user's function is traced once, at its first call, as a stencilchain program whose
parameters are its own plus one table per connectivity read through (found by tracing it
once without tables, then again with them; the operators' traces are cached in between).
Those connectivities are open (`max_neighbors=None, skip_values=None`) and the tables
take their dtype from the call, so one trace serves every offset provider: stencilchain's
TableDispatch makes one specialisation per (width, has -1 entries, dtype) of the call's
tables, on every backend (program/table_specialisation.py, ADR 0029 and 0033)."""

from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stencilchain.compat.gt4py._dims import annotation
from stencilchain.compat.gt4py._offsets import FieldOffset, Reads, SameRanges, recording
from stencilchain.compat.gt4py._program_args import wrapped
from stencilchain.compat.gt4py._provider import declared_key, provider_of, table_array
from stencilchain.errors import ArgumentError, DefinitionError, user_location
from stencilchain.program import dtypes, ir
from stencilchain.program.embedded import run_embedded
from stencilchain.program.field_values import FieldValue
from stencilchain.program.program import Program as _ScProgram
from stencilchain.program.table_specialisation import (
    TableDispatch,
    TableKey,
    open_tables,
    specialise_tables,
)
from stencilchain.program.table_specialisation import table_key as _array_key
from stencilchain.program.types import Table

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _table_param(name: str, taken: set[str]) -> str:
    param = f"{name.lower()}_table"
    while param in taken:
        param += "_"
    return param


def trace_program(
    fn: Callable[..., Any],
    annotations: Mapping[str, Any],
    body: Callable[..., Any],
    location: tuple[str, int] | None = None,
) -> tuple[_ScProgram, tuple[str, ...], tuple[SameRanges, ...]]:
    """stencilchain's program of `body` (called with the program's own arguments), its
    parameters those of `fn` plus a table for each connectivity read through (open, its
    dtype int32 until specialised); the offset names of those tables, in parameter order;
    and the fields of each `out=` sliced alike (`Reads.same_ranges`)."""
    if location is None:
        location = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
    # traced at its first call: an error of the whole program (no line of its own) would
    # point at that call, not at the program
    call_site = user_location()
    params = list(inspect.signature(fn).parameters.values())
    reads: dict[str, FieldOffset] = {}
    n_own = len(params)

    def program_body(*args: Any) -> Any:
        return body(*(wrapped(a) for a in args[:n_own]))

    program_body.__name__ = fn.__name__
    program_body.__qualname__ = fn.__qualname__
    for attempt in range(2):
        own = Reads()
        taken = {p.name for p in params}
        table_params, table_types = [], {}
        for name in sorted(reads):
            pname = _table_param(name, taken)
            taken.add(pname)
            table_params.append(inspect.Parameter(pname, inspect.Parameter.POSITIONAL_OR_KEYWORD))
            conn = reads[name].open_connectivity
            table_types[pname] = Table.__class_getitem__((conn, dtypes.int32))
        program_body.__signature__ = inspect.Signature(params + table_params)  # type: ignore[attr-defined]
        program_body.__annotations__ = {**annotations, **table_types}
        try:
            with recording(own):
                made = _ScProgram(program_body)
        except DefinitionError as err:
            if attempt == 0 and own.used and set(own.used) != set(reads):
                reads = dict(own.used)  # the trace without its tables: now with them
                continue
            raise _at_user(err, location, call_site) from None
        if set(own.used) == set(reads):
            return made, tuple(sorted(reads)), tuple(own.same_ranges)
        reads = dict(own.used)
    raise AssertionError("a program's tables changed between two traces")


def runner(made: _ScProgram, backend: Any) -> Callable[..., None]:
    """`made` run by `backend` (embedded where None): through a TableDispatch keyed also
    on the tables' dtypes where it takes tables."""
    if not open_tables(made.ir, dtype_from_table=True):
        return made if backend is None else made.with_backend(backend)
    chosen = run_embedded if backend is None else backend
    fn = made.fn

    def make(spec: Any) -> Callable[..., None]:
        executor: Callable[..., None] = chosen.executor(_ScProgram.from_ir(spec, fn))
        return executor

    dispatch = TableDispatch(made.ir, make, dtype_from_table=True)
    tuples = made._tuples  # a program with tuple parameters: called through them
    return dispatch if tuples is None else tuples(dispatch)


def specialised(
    made: _ScProgram, reads: tuple[str, ...], provider: Mapping[str, Any]
) -> _ScProgram:
    """`made` specialised for the tables of `provider` (what a call with them runs; an
    as_connectivity by its declared skip value, as gt4py's offset-provider type)."""
    tables = open_tables(made.ir, dtype_from_table=True)
    if not tables:
        return made
    keys: dict[str, TableKey] = {}
    for table, name in zip(tables, reads):
        declared = declared_key(provider, name)
        array = table_array(provider, name)
        keys[table.name] = declared if declared is not None else _array_key(made.name, table, array)
    return _ScProgram.from_ir(specialise_tables(made.ir, keys, dtype_from_table=True), made.fn)


@dataclasses.dataclass
class _Made:
    """A program's trace, shared by its `with_backend` copies; None until first called."""

    program: _ScProgram | None = None
    reads: tuple[str, ...] = ()
    # the fields of each out= sliced alike, whose ranges are checked at each call
    same_ranges: tuple[SameRanges, ...] = ()


def _at_user(
    err: DefinitionError, location: tuple[str, int], call_site: tuple[str, int] | None = None
) -> DefinitionError:
    """`err` where it points into this package or at the call that traced the program
    (`call_site`): at the user's program instead."""
    if (
        err.location is not None
        and err.location != call_site
        and not os.path.abspath(err.location[0]).startswith(_PACKAGE_DIR + os.sep)
    ):
        return err
    return DefinitionError(err.reason, location)


class Program:
    """A gt4py program: call it with its arguments and `offset_provider=`; it runs on its
    `backend` (embedded, stencilchain's NumPy executor, where None)."""

    def __init__(
        self,
        definition: Callable[..., Any],
        backend: Any = None,
        grid_type: Any = None,
        made: _Made | None = None,
    ) -> None:
        self.definition = definition
        self.__name__ = definition.__name__
        self.__doc__ = definition.__doc__
        self.backend = backend
        self.grid_type = grid_type
        self._annotations: dict[str, Any] | None = None
        self._made = _Made() if made is None else made
        self._run: Callable[..., None] | None = None

    def with_backend(self, backend: Any) -> Program:
        """This program run by `backend`: any stencilchain toolchain (run_gtfn_cpu, ...)."""
        return Program(self.definition, backend, self.grid_type, self._made)

    def with_grid_type(self, grid_type: Any) -> Program:
        return Program(self.definition, self.backend, grid_type, self._made)

    def _translated_annotations(self) -> dict[str, Any]:
        if self._annotations is None:
            fn = self.definition
            try:
                raw = inspect.get_annotations(fn, eval_str=True)
            except DefinitionError as err:
                raise DefinitionError(
                    f"program {fn.__name__}: {err.reason}",
                    (fn.__code__.co_filename, fn.__code__.co_firstlineno),
                ) from None
            except Exception as err:
                raise DefinitionError(
                    f"program {fn.__name__}: cannot evaluate annotations: {err}",
                    (fn.__code__.co_filename, fn.__code__.co_firstlineno),
                ) from err
            where = f"program {fn.__name__}: annotation"
            self._annotations = {n: annotation(v, where) for n, v in raw.items() if n != "return"}
        return self._annotations

    def _traced(self) -> tuple[_ScProgram, tuple[str, ...]]:
        made = self._made
        if made.program is None:
            made.program, made.reads, made.same_ranges = trace_program(
                self.definition, self._translated_annotations(), self.definition
            )
        return made.program, made.reads

    def stencilchain_program(
        self, offset_provider: Any = None
    ) -> tuple[_ScProgram, tuple[str, ...]]:
        """stencilchain's program for the tables of `offset_provider` (the specialisation
        a call with them runs), and the offset names of the tables it takes after this
        program's own parameters (in that order)."""
        made, reads = self._traced()
        return specialised(made, reads, provider_of(offset_provider)), reads

    def __call__(self, *args: Any, offset_provider: Any = None, **kwargs: Any) -> None:
        run = self._run
        if run is None:
            made, _ = self._traced()
            run = self._run = runner(made, self.backend)
        provider = provider_of(offset_provider)
        tables = [table_array(provider, name) for name in self._made.reads]
        values: Any = args
        if kwargs:
            bound = inspect.signature(self.definition).bind(*args, **kwargs)
            values = [bound.arguments[p] for p in bound.signature.parameters]
        if self._made.same_ranges:
            check_same_ranges(self._made.program, self._made.same_ranges, values)
        run(*values, *tables)

    def __repr__(self) -> str:
        return f"<gt4py program {self.__name__}>"


def check_same_ranges(
    made: _ScProgram | None, groups: Sequence[SameRanges], values: Sequence[Any]
) -> None:
    """gt4py writes each field of `out=(z_q[:, 1:], w[:, 1:])` over its own range sliced;
    the call writes them over one domain, from the first field's range: an ArgumentError
    where their ranges along a sliced dimension differ, before anything runs."""
    assert made is not None
    by_name = {p.name: (p, v) for p, v in zip(made.ir.params, values)}
    for names, dims, text in groups:
        for dim in dims:
            ranges = {}
            for name in names:
                param, value = by_name[name]
                t = param.type
                assert isinstance(t, ir.FieldType)
                shape = getattr(value, "shape", None)
                if shape is None or len(shape) != len(t.dims):
                    return  # the call's own checks name it
                axis = t.dims.index(dim)
                start = value.start[axis] if isinstance(value, FieldValue) else 0
                ranges[name] = (start, start + int(shape[axis]))
            if len(set(ranges.values())) > 1:
                spans = ", ".join(f"'{n}' [{a}, {b})" for n, (a, b) in ranges.items())
                raise ArgumentError(
                    f"program {made.name}: out={text} writes each field over its own range "
                    f"in gt4py, which this call writes as one domain, but along {dim.name} "
                    f"the fields' ranges differ ({spans}); give the fields one range "
                    f"along {dim.name}, or write them in calls of their own"
                )


def program(
    definition: Callable[..., Any] | None = None,
    *,
    backend: Any = None,
    grid_type: Any = None,
    **options: Any,
) -> Any:
    """`@program`, `@program(backend=run_gtfn_cpu, grid_type=GridType.UNSTRUCTURED)`."""
    if options:
        raise DefinitionError(
            f"@program: the options {', '.join(sorted(options))} are not supported "
            "(backend= and grid_type= are)"
        )

    def decorate(fn: Callable[..., Any]) -> Program:
        return Program(fn, backend, grid_type)

    return decorate if definition is None else decorate(definition)


__all__ = ["Program", "program", "trace_program"]
