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
import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stencilchain.compat.gt4py._dims import annotation
from stencilchain.compat.gt4py._offsets import FieldOffset, Reads, SameRanges, recording
from stencilchain.compat.gt4py._program_args import wrapped
from stencilchain.compat.gt4py._provider import declared_key, provider_of, table_array
from stencilchain.compat.gt4py._static import (
    StaticKey,
    scalar_of,
    static_key,
    static_params,
)
from stencilchain.compat.gt4py._static import text as static_text
from stencilchain.errors import ArgumentError, DefinitionError, user_location
from stencilchain.program import dtypes, ir
from stencilchain.program.embedded import run_embedded
from stencilchain.program.field_values import FieldValue
from stencilchain.program.program import Program as _ScProgram
from stencilchain.program.static_program import StaticParams
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
    static: Mapping[str, Any] | None = None,
) -> tuple[_ScProgram, tuple[str, ...], tuple[SameRanges, ...]]:
    """stencilchain's program of `body` (called with the program's own arguments), its
    parameters those of `fn` (less those given a `static` value, which `body` gets as it
    is) plus a table for each connectivity read through (open, its dtype int32 until
    specialised); the offset names of those tables, in parameter order; and the fields of
    each `out=` sliced alike (`Reads.same_ranges`)."""
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
                made = _ScProgram(program_body, static=static)
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


@dataclasses.dataclass
class _Made:
    """A program's trace, shared by its `with_backend` copies; None until first needed.
    That of each value set of static parameters is in `static`, by its key."""

    program: _ScProgram | None = None
    reads: tuple[str, ...] = ()
    # the fields of each out= sliced alike, whose ranges are checked at each call
    same_ranges: tuple[SameRanges, ...] = ()
    static: dict[StaticKey, _Made] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class CompilationOptions:
    """gt4py's `program.compilation_options`, read at each call. `enable_jit`: False
    refuses a call whose specialisation `compile` did not make. `static_params`: the
    scalar parameters compiled in, one specialisation per value set (None: those named by
    the first `compile`)."""

    enable_jit: bool = True
    static_params: tuple[str, ...] | None = None


class _Current:
    """A program's backend as it is when a specialisation is made, not when the program
    was: a call that has to build one uses the program's `backend` of that moment."""

    def __init__(self, program: Program) -> None:
        self.program = program

    @property
    def name(self) -> str:
        return str(self.program.backend.name)

    def executor(self, made: _ScProgram) -> Callable[..., None]:
        executor: Callable[..., None] = self.program.backend.executor(made)
        return executor


class Program:
    """A gt4py program: call it with its arguments and `offset_provider=`; it runs on its
    `backend` (embedded, stencilchain's NumPy executor, where None). `compile` makes the
    specialisations of given static values and offset providers ahead of the calls."""

    def __init__(
        self,
        definition: Callable[..., Any],
        backend: Any = None,
        grid_type: Any = None,
        made: _Made | None = None,
        options: CompilationOptions | None = None,
    ) -> None:
        self.definition = definition
        self.__name__ = definition.__name__
        self.__doc__ = definition.__doc__
        self.backend = backend
        self.grid_type = grid_type
        self.compilation_options = CompilationOptions() if options is None else options
        self._annotations: dict[str, Any] | None = None
        self._made = _Made() if made is None else made
        self._parameters = tuple(inspect.signature(definition).parameters)
        # by static key: the runner of that specialisation on this program's backend
        self._runs: dict[StaticKey, Callable[..., None]] = {}
        # the (static key, table keys) pairs that `compile` made
        self._compiled: set[tuple[StaticKey, tuple[TableKey, ...]]] = set()
        self._static: tuple[tuple[str, ...] | None, StaticParams | None] = (None, None)

    def _copy(self, backend: Any, grid_type: Any, options: CompilationOptions) -> Program:
        return Program(self.definition, backend, grid_type, self._made, options)

    def with_backend(self, backend: Any) -> Program:
        """This program run by `backend`: any stencilchain toolchain (run_gtfn_cpu, ...)."""
        options = dataclasses.replace(self.compilation_options)
        return self._copy(backend, self.grid_type, options)

    def with_grid_type(self, grid_type: Any) -> Program:
        options = dataclasses.replace(self.compilation_options)
        return self._copy(self.backend, grid_type, options)

    def with_compilation_options(self, **options: Any) -> Program:
        """This program with other `enable_jit=` or `static_params=` (nothing compiled)."""
        fields = {f.name for f in dataclasses.fields(CompilationOptions)}
        unknown = sorted(set(options) - fields)
        if unknown:
            raise ArgumentError(
                f"{self.__name__}.with_compilation_options(): {', '.join(unknown)} is no "
                f"option ({', '.join(sorted(fields))} are)"
            )
        if options.get("static_params") is not None:
            options["static_params"] = tuple(options["static_params"])
        changed = dataclasses.replace(self.compilation_options, **options)
        return self._copy(self.backend, self.grid_type, changed)

    def with_bound_args(self, **bound: Any) -> ProgramWithBoundArgs:
        """This program with the arguments `bound` given once: a scalar among them is
        compiled in, as a static parameter."""
        return ProgramWithBoundArgs(self, bound)

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

    def _static_params(self) -> StaticParams | None:
        """The static parameters of `compilation_options` (None: none), made once per
        names given there."""
        names = self.compilation_options.static_params or None
        if self._static[0] != names:
            found = None
            if names is not None:
                fn = self.definition
                location = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
                found = static_params(
                    names,
                    self._parameters,
                    self._translated_annotations(),
                    lambda reason: DefinitionError(f"program {fn.__name__}: {reason}", location),
                )
            self._static = (names, found)
        return self._static[1]

    def _made_for(self, key: StaticKey) -> _Made:
        """The trace of the specialisation of static values `key` (() for none)."""
        made = self._made if not key else self._made.static.setdefault(key, _Made())
        if made.program is None:
            made.program, made.reads, made.same_ranges = trace_program(
                self.definition,
                self._translated_annotations(),
                self.definition,
                static=dict(key) if key else None,
            )
        return made

    def _traced(self) -> tuple[_ScProgram, tuple[str, ...]]:
        made = self._made_for(())
        assert made.program is not None
        return made.program, made.reads

    def _run_for(self, key: StaticKey, made: _Made) -> Callable[..., None]:
        run = self._runs.get(key)
        if run is None:
            assert made.program is not None
            backend = None if self.backend is None else _Current(self)
            run = self._runs[key] = runner(made.program, backend)
        return run

    def stencilchain_program(
        self, offset_provider: Any = None
    ) -> tuple[_ScProgram, tuple[str, ...]]:
        """stencilchain's program for the tables of `offset_provider` (the specialisation
        a call with them runs), and the offset names of the tables it takes after this
        program's own parameters (in that order)."""
        made, reads = self._traced()
        return specialised(made, reads, provider_of(offset_provider)), reads

    def compile(self, offset_provider: Any = None, **static_values: Any) -> Program:
        """Compile the specialisation of every combination of the values listed for each
        static parameter, for each offset provider (one, or a list of them); this
        program, whose calls with those then compile nothing. Named values make those
        parameters static where `static_params` was not given; a value set compiled
        already is an ArgumentError (a ValueError, as gt4py's)."""
        where = f"{self.__name__}.compile()"
        for name, values in static_values.items():
            if not isinstance(values, list):
                raise ArgumentError(
                    f"{where}: give the values of '{name}' as a list ({name}=[...]), got {values!r}"
                )
        declared = self.compilation_options.static_params
        if declared is None and static_values:
            static_params(  # the names checked before they become the static parameters
                tuple(static_values),
                self._parameters,
                self._translated_annotations(),
                lambda reason: ArgumentError(f"{where}: {reason}"),
            )
            declared = tuple(p for p in self._parameters if p in static_values)
            self.compilation_options.static_params = declared
        static = self._static_params()
        names = () if static is None else static.names
        if set(static_values) != set(names):
            raise ArgumentError(
                f"{where}: give the values of every static parameter "
                f"({', '.join(names) or 'none'}), got {', '.join(static_values) or 'none'}"
            )
        providers = offset_provider if isinstance(offset_provider, list) else [offset_provider]
        for combination in itertools.product(*(static_values[n] for n in names)):
            key = () if static is None else static_key(static, combination, where)
            made = self._made_for(key)
            run = self._run_for(key, made)
            assert made.program is not None
            tables = open_tables(made.program.ir, dtype_from_table=True)
            for each in providers:
                provider = provider_of(each)
                arrays = [table_array(provider, name) for name in made.reads]
                pair = (key, _table_keys(made, arrays))
                if pair in self._compiled:
                    raise ArgumentError(
                        f"{where}: {self.__name__} is compiled for {_what(*pair, made.reads)} "
                        "already; compile each value set and offset provider once"
                    )
                if tables:
                    dispatch: Any = run  # a TableDispatch (or its TupleArguments)
                    dispatch.compile(**{t.name: [a] for t, a in zip(tables, arrays)})
                else:
                    compile_now = getattr(run, "compile", None)
                    if callable(compile_now):
                        compile_now()
                self._compiled.add(pair)
        return self

    def __call__(self, *args: Any, offset_provider: Any = None, **kwargs: Any) -> None:
        options = self.compilation_options
        if kwargs or options.static_params or not options.enable_jit:
            self._call(args, offset_provider, kwargs)
            return
        # the common call: positional, nothing static, JIT
        run = self._runs.get(())
        if run is None:
            run = self._run_for((), self._made_for(()))
        made = self._made
        provider = provider_of(offset_provider)
        tables = [table_array(provider, name) for name in made.reads]
        if made.same_ranges:
            check_same_ranges(made.program, made.same_ranges, args)
        run(*args, *tables)

    def _call(self, args: tuple[Any, ...], offset_provider: Any, kwargs: dict[str, Any]) -> None:
        """A call by keyword, with static parameters or without JIT."""
        values: Any = args
        if kwargs:
            bound = inspect.signature(self.definition).bind(*args, **kwargs)
            values = [bound.arguments[p] for p in bound.signature.parameters]
        key: StaticKey = ()
        static = self._static_params()
        if static is not None:
            if len(values) != len(self._parameters):
                raise ArgumentError(
                    f"{self.__name__}() takes {len(self._parameters)} arguments "
                    f"({', '.join(self._parameters)}), got {len(values)}"
                )
            key = static_key(static, [values[i] for i in static.positions], f"{self.__name__}()")
            values = [v for i, v in enumerate(values) if i not in static.positions]
        made = self._made_for(key)
        provider = provider_of(offset_provider)
        tables = [table_array(provider, name) for name in made.reads]
        if not self.compilation_options.enable_jit:
            self._check_compiled(key, made, tables)
        run = self._run_for(key, made)
        if made.same_ranges:
            check_same_ranges(made.program, made.same_ranges, values)
        run(*values, *tables)

    def _check_compiled(self, key: StaticKey, made: _Made, arrays: list[Any]) -> None:
        """With `enable_jit=False`: an ArgumentError where `compile` did not make this
        call's specialisation."""
        pair = (key, _table_keys(made, arrays))
        if pair not in self._compiled:
            compiled = "; ".join(_what(*p, made.reads) for p in sorted(self._compiled, key=repr))
            tables = " (a table as max_neighbors, has -1 entries, dtype)" if made.reads else ""
            raise ArgumentError(
                f"{self.__name__}() has no compiled program for {_what(*pair, made.reads)}"
                f"{tables} (compiled: {compiled or 'none'}) and "
                f"enable_jit is False: compile it first ({self.__name__}.compile(...)), or "
                "give the program enable_jit=True"
            )

    def __repr__(self) -> str:
        return f"<gt4py program {self.__name__}>"


def _table_keys(made: _Made, arrays: Sequence[Any]) -> tuple[TableKey, ...]:
    """The keys of a call's tables, as the program's TableDispatch keys them."""
    assert made.program is not None
    tables = open_tables(made.program.ir, dtype_from_table=True)
    return tuple(_array_key(made.program.name, t, a) for t, a in zip(tables, arrays))


def _what(key: StaticKey, table_keys: tuple[TableKey, ...], offsets: Sequence[str]) -> str:
    """A specialisation in words: its static values, then its tables' keys by offset."""
    parts = [static_text(key)] if key else []
    parts += [f"{name}={k!r}" for name, k in zip(offsets, table_keys)]
    return ", ".join(parts) or "its arguments"


class ProgramWithBoundArgs:
    """gt4py's `program.with_bound_args(...)`: a program with some arguments given once;
    a call gives the others, by position in parameter order or by name. The scalars bound
    are compiled in (static parameters of the program called), as gt4py lowers them."""

    def __init__(self, program: Program, bound: Mapping[str, Any]) -> None:
        names = program._parameters
        for name in bound:
            if name not in names:
                raise ArgumentError(
                    f"{program.__name__}.with_bound_args(): keyword argument '{name}' is not "
                    f"a valid program parameter ({', '.join(names)})"
                )
        annotations = program._translated_annotations()
        scalars = {n for n in bound if scalar_of(annotations.get(n)) is not None}
        static = set(program.compilation_options.static_params or ()) | scalars
        options = dataclasses.replace(
            program.compilation_options,
            static_params=tuple(n for n in names if n in static) or None,
        )
        self.program = program._copy(program.backend, program.grid_type, options)
        self.bound = dict(bound)
        self.free = tuple(n for n in names if n not in self.bound)
        self.__name__ = program.__name__

    def with_backend(self, backend: Any) -> ProgramWithBoundArgs:
        return ProgramWithBoundArgs(self.program.with_backend(backend), self.bound)

    def __call__(self, *args: Any, offset_provider: Any = None, **kwargs: Any) -> None:
        name = self.__name__
        for given in kwargs:
            if given in self.bound:
                raise ArgumentError(
                    f"{name}(): parameter '{given}' already set as a bound argument "
                    f"(by with_bound_args: {', '.join(self.bound)})"
                )
        by_position = dict(zip(self.free, args))
        twice = sorted(set(by_position) & set(kwargs))
        missing = [n for n in self.free if n not in by_position and n not in kwargs]
        if len(args) > len(self.free) or twice or missing:
            problem = (
                f"missing {', '.join(missing)}"
                if missing
                else f"{', '.join(twice)} given twice"
                if twice
                else "too many"
            )
            raise ArgumentError(
                f"{name}() takes {len(self.free)} arguments ({', '.join(self.free)}) besides "
                f"those bound ({', '.join(self.bound)}), but {len(args)} were given by "
                f"position{' and ' + ', '.join(kwargs) + ' by name' if kwargs else ''}: "
                f"{problem}"
            )
        self.program(**by_position, **kwargs, **self.bound, offset_provider=offset_provider)

    def __repr__(self) -> str:
        return f"<gt4py program {self.__name__} with bound {', '.join(self.bound)}>"


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
    static_params: Sequence[str] | None = None,
    enable_jit: bool = True,
    **options: Any,
) -> Any:
    """`@program`, `@program(backend=run_gtfn_cpu, grid_type=GridType.UNSTRUCTURED)`,
    `@program(backend=..., static_params=("n",), enable_jit=False)`."""
    if options:
        raise DefinitionError(
            f"@program: the options {', '.join(sorted(options))} are not supported "
            "(backend=, grid_type=, static_params= and enable_jit= are)"
        )
    if isinstance(static_params, str):
        raise DefinitionError(
            f"@program: static_params is the string {static_params!r}; give a tuple of "
            f"parameter names, static_params=({static_params!r},)"
        )

    def decorate(fn: Callable[..., Any]) -> Program:
        names = None if static_params is None else tuple(static_params)
        if names:
            parameters = list(inspect.signature(fn).parameters)
            for name in names:
                if name not in parameters:
                    raise DefinitionError(
                        f"program {fn.__name__}: static parameter '{name}' is not one of its "
                        f"parameters ({', '.join(parameters)})",
                        (fn.__code__.co_filename, fn.__code__.co_firstlineno),
                    )
        options = CompilationOptions(enable_jit=enable_jit, static_params=names)
        return Program(fn, backend, grid_type, options=options)

    return decorate if definition is None else decorate(definition)


__all__ = ["CompilationOptions", "Program", "ProgramWithBoundArgs", "program", "trace_program"]
