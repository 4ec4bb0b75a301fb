"""`@program`: a sequence of field-operator calls, traced into an ir.Program (the trace:
program/program_trace.py); calling one runs it embedded, `with_backend` by a backend."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, overload

from stencilchain.errors import ArgumentError, DefinitionError
from stencilchain.program import ir
from stencilchain.program.call_bounds import StaticInt
from stencilchain.program.field_operator import tracing_program
from stencilchain.program.names import check_program_names
from stencilchain.program.program_args import ProgramArg
from stencilchain.program.program_trace import ProgramTrace
from stencilchain.program.scan_annotations import scalar_overrides
from stencilchain.program.tuple_params import Tree, nest_arguments, tuple_arguments
from stencilchain.program.types import parameter_types

if TYPE_CHECKING:
    from stencilchain.program.static_program import StaticProgram

# Defining a program loads only what tracing needs: the embedded executor, the argument
# binder and static programs are imported where they are first used (never per call).


class Backend(Protocol):
    """What `Program.with_backend` plugs in: something that turns a program into a callable."""

    @property
    def name(self) -> str: ...

    def executor(self, program: Program) -> Callable[..., None]: ...


class Program:
    """A traced stencil program. Calling it runs it embedded (NumPy)."""

    def __init__(self, fn: Callable[..., Any], static: Mapping[str, Any] | None = None) -> None:
        """`static`: the values of static parameters (program/static_program.py), passed to
        `fn` as they are (literals in the IR) and no parameters of the traced program."""
        self.fn = fn
        self.name = fn.__name__
        self.location = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
        tuples: dict[str, Tree] = {}
        params, _ = parameter_types(fn, "program", tuples=tuples, overrides=scalar_overrides(fn))
        static = static or {}
        trace = ProgramTrace(self.name, tuple(p for p in params if p.name not in static))
        static = {k: StaticInt(v) if type(v) is int else v for k, v in static.items()}
        args = [
            static[p.name] if p.name in static else ProgramArg(trace, ir.Ref(p.name, p.type))
            for p in params
        ]
        if tuples:
            args = nest_arguments(fn, tuples, args)
        with tracing_program(trace):  # a call without arguments is this program's
            result = fn(*args)
        if result is not None:
            raise DefinitionError(
                f"program {self.name} returns a value; a program writes its results to out= fields",
                self.location,
            )
        self.ir = trace.finish()
        check_program_names(self.ir, self.location)
        self._embedded: Callable[..., None] | None = None
        # a program with tuple parameters is called through TupleArguments (None: not)
        self._tuples = tuple_arguments(fn, tuples, static) if tuples else None
        # tables whose width or skip values each call gives (program/table_specialisation.py)
        self._open = _has_open_tables(self.ir)

    @classmethod
    def from_ir(cls, program: ir.Program, fn: Callable[..., Any]) -> Program:
        """A program of checked IR made by transforming a traced one (e.g. one stage of
        it); `fn`, the function traced, says where it was defined."""
        made = cls.__new__(cls)
        made.fn = fn
        made.name = program.name
        made.location = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
        made.ir = program
        made._embedded = None
        made._tuples = None
        made._open = _has_open_tables(program)
        return made

    def __repr__(self) -> str:
        return f"<stencilchain program {self.name} {self.ir.fingerprint()[:12]}>"

    def fingerprint(self) -> str:
        return self.ir.fingerprint()

    def _executor(self, backend: Backend, jit: bool = True) -> Callable[..., None]:
        if self._open:  # one specialisation per call's table widths and skip values
            from stencilchain.program.table_specialisation import TableDispatch

            fn = self.fn
            make = lambda spec: backend.executor(Program.from_ir(spec, fn))  # noqa: E731
            return TableDispatch(self.ir, make, jit=jit)
        return backend.executor(self)

    def specialise_tables(self, **tables: Any) -> Program:
        """This program for the tables given by parameter name (an array, or a
        `(max_neighbors, skip_values)` pair) of connectivities declared with
        `max_neighbors=None` or `skip_values=None`: what a call with such tables runs."""
        from stencilchain.program.table_specialisation import (
            open_tables,
            specialise_tables,
            table_key,
        )

        keys = {}
        for table in open_tables(self.ir):
            if table.name not in tables:
                raise ArgumentError(f"{self.name}.specialise_tables(): give '{table.name}'")
            given = tables[table.name]
            pair = given if isinstance(given, tuple) else table_key(self.name, table, given)
            keys[table.name] = pair
        return Program.from_ir(specialise_tables(self.ir, keys), self.fn)

    def with_backend(self, backend: Backend, *, jit: bool = True) -> Callable[..., None]:
        """This program run by `backend` (compiled on first call for compiling backends).
        With tables of any width, one specialisation per call's tables; `jit=False`: only
        those made by the executor's `compile(c2e=[...])` (program/table_specialisation.py)."""
        if self._tuples is not None:
            return self._tuples(self._executor(backend, jit))
        return self._executor(backend, jit)

    def __call__(self, /, *args: Any, **kwargs: Any) -> None:
        """Run the program with NumPy; arguments by position or by parameter name."""
        run = self._embedded
        if run is None:
            run = self._embedded = self._embedded_runner()
        run(*args, **kwargs)

    def _embedded_runner(self) -> Callable[..., None]:
        """The embedded executor of this program, taking the arguments as a call does."""
        from stencilchain.program.arguments import bind_arguments
        from stencilchain.program.embedded import run_embedded

        executor = self._executor(run_embedded)
        if self._tuples is not None:
            return self._tuples(executor)
        program = self.ir

        def run(*args: Any, **kwargs: Any) -> None:
            executor(*bind_arguments(program, args, kwargs))

        return run


@overload
def program(fn: Callable[..., Any], /) -> Program: ...


@overload
def program(*, static_params: Iterable[str]) -> Callable[[Callable[..., Any]], StaticProgram]: ...


def program(
    fn: Callable[..., Any] | None = None, /, *, static_params: Iterable[str] | None = None
) -> Any:
    """Decorator: trace `fn` into a program, checking calls, types and domains now;
    `@program(static_params=("n",))` makes a StaticProgram, traced per value set of those
    scalar parameters (program/static_program.py)."""

    def make(f: Callable[..., Any]) -> StaticProgram:
        from stencilchain.program.static_program import StaticProgram

        return StaticProgram(f, static_params or (), lambda fn, values: Program(fn, static=values))

    return make if fn is None else Program(fn)


def _has_open_tables(program: ir.Program) -> bool:
    """Whether a call's tables complete some connectivity of `program`
    (program/table_specialisation.py, loaded only for a program with tables)."""
    if not any(isinstance(p.type, ir.TableType) for p in program.params):
        return False
    from stencilchain.program.table_specialisation import open_tables

    return bool(open_tables(program))
