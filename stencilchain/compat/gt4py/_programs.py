"""gt4py's `@program`: a stencilchain program traced per specialization of the tables its
operators read, whose tables come from the call's `offset_provider` (gt4py's spelling)
instead of being parameters (stencilchain's).

Tracing a specialization: the user's function is traced as a stencilchain program whose
parameters are its own plus one table per connectivity read through (found by tracing it
once without tables, then again with them; the operators' traces are cached in between)."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any

from stencilchain.compat.gt4py._connectivity import Connectivity
from stencilchain.compat.gt4py._dims import annotation
from stencilchain.compat.gt4py._offsets import FieldOffset, Resolution, resolving
from stencilchain.compat.gt4py._program_args import wrapped
from stencilchain.compat.gt4py._provider import provider_of, spec_of, table_array
from stencilchain.compat.gt4py._values import FieldValue, argument
from stencilchain.errors import DefinitionError
from stencilchain.program import dtypes
from stencilchain.program.program import Program as _ScProgram
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
    resolution: Resolution,
    location: tuple[str, int] | None = None,
) -> tuple[_ScProgram, tuple[str, ...]]:
    """stencilchain's program of `body` (called with the program's own arguments), its
    parameters those of `fn` plus a table for each connectivity read through; and the
    offset names of those tables, in parameter order."""
    if location is None:
        location = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
    params = list(inspect.signature(fn).parameters.values())
    reads: dict[str, FieldOffset] = {}
    n_own = len(params)

    def program_body(*args: Any) -> Any:
        return body(*(wrapped(a) for a in args[:n_own]))

    program_body.__name__ = fn.__name__
    program_body.__qualname__ = fn.__qualname__
    for attempt in range(2):
        own = Resolution(resolution.spec)
        taken = {p.name for p in params}
        table_params, table_types = [], {}
        for name in sorted(reads):
            offset = reads[name]
            spec = resolution.spec(name)
            assert spec is not None
            conn = offset.connectivity_for(spec)
            pname = _table_param(name, taken)
            taken.add(pname)
            table_params.append(inspect.Parameter(pname, inspect.Parameter.POSITIONAL_OR_KEYWORD))
            table_types[pname] = Table.__class_getitem__((conn, dtypes.BY_NAME[spec.dtype]))
        program_body.__signature__ = inspect.Signature(params + table_params)  # type: ignore[attr-defined]
        program_body.__annotations__ = {**annotations, **table_types}
        try:
            with resolving(own):
                made = _ScProgram(program_body)
        except DefinitionError as err:
            if attempt == 0 and own.used and set(own.used) != set(reads):
                reads = dict(own.used)  # the trace without its tables: now with them
                continue
            raise _at_user(err, location) from None
        if set(own.used) == set(reads):
            return made, tuple(sorted(reads))
        reads = dict(own.used)
    raise AssertionError("a program's tables changed between two traces")


def _at_user(err: DefinitionError, location: tuple[str, int]) -> DefinitionError:
    """`err` where it points into this package: at the user's program instead."""
    if err.location is not None and not os.path.abspath(err.location[0]).startswith(
        _PACKAGE_DIR + os.sep
    ):
        return err
    return DefinitionError(err.reason, location)


class Program:
    """A gt4py program: call it with its arguments and `offset_provider=`; it runs on its
    `backend` (embedded, stencilchain's NumPy executor, where None)."""

    def __init__(
        self, definition: Callable[..., Any], backend: Any = None, grid_type: Any = None
    ) -> None:
        self.definition = definition
        self.__name__ = definition.__name__
        self.__doc__ = definition.__doc__
        self.backend = backend
        self.grid_type = grid_type
        self._annotations: dict[str, Any] | None = None
        # by the specs of the tables it reads: the runner and the offsets of its tables
        self._runs: dict[tuple[Any, ...], tuple[Callable[..., None], tuple[str, ...]]] = {}
        self._made: dict[tuple[Any, ...], _ScProgram] = {}
        self._reads: tuple[str, ...] | None = None
        # the connectivities of the last call, when all were immutable, and its runner
        self._last: tuple[list[Any], tuple[Callable[..., None], tuple[str, ...]]] | None = None

    def with_backend(self, backend: Any) -> Program:
        """This program run by `backend`: any stencilchain toolchain (run_gtfn_cpu, ...)."""
        other = Program(self.definition, backend, self.grid_type)
        other._made, other._reads = self._made, self._reads  # the traces are shared
        return other

    def with_grid_type(self, grid_type: Any) -> Program:
        return Program(self.definition, self.backend, grid_type)

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

    def _specialize(
        self, provider: Mapping[str, Any]
    ) -> tuple[Callable[..., None], tuple[str, ...]]:
        resolution = Resolution(lambda name: spec_of(provider, name))
        made = None
        reads = self._reads
        if reads is not None:
            key = resolution.key(reads)
            found = self._runs.get(key)
            if found is not None:
                return found
            made = self._made.get(key)
        if made is None or reads is None:
            made, reads = trace_program(
                self.definition, self._translated_annotations(), self.definition, resolution
            )
            self._reads = reads
            self._made[resolution.key(reads)] = made
        run = made if self.backend is None else made.with_backend(self.backend)
        entry = (run, reads)
        self._runs[resolution.key(reads)] = entry
        return entry

    def stencilchain_program(
        self, offset_provider: Any = None
    ) -> tuple[_ScProgram, tuple[str, ...]]:
        """stencilchain's program for the tables of `offset_provider`, and the offset names
        of the tables it takes after this program's own parameters (in that order)."""
        provider = provider_of(offset_provider)
        _, reads = self._specialize(provider)
        return self._made[tuple((n, spec_of(provider, n)) for n in reads)], reads

    def __call__(self, *args: Any, offset_provider: Any = None, **kwargs: Any) -> None:
        provider = provider_of(offset_provider)
        reads = self._reads
        found = None
        if reads is not None:  # the fast path: the specialization is known
            entries = [provider.get(n) for n in reads]
            last = self._last
            if last is not None and all(a is b for a, b in zip(entries, last[0])):
                found = last[1]  # the same immutable connectivities as the last call's
            else:
                key = tuple(
                    [
                        (n, v.spec if type(v) is Connectivity else spec_of(provider, n))
                        for n, v in zip(reads, entries)
                    ]
                )
                found = self._runs.get(key)
                if found is not None and all(type(v) is Connectivity for v in entries):
                    self._last = (entries, found)
        if found is None:
            found = self._specialize(provider)
        run, reads = found
        tables = [table_array(provider, name) for name in reads]
        values = [a.array if type(a) is FieldValue and not any(a.start) else a for a in args]
        if kwargs:
            kwargs = {k: argument(v) for k, v in kwargs.items()}
            bound = inspect.signature(self.definition).bind(*values, **kwargs)
            values = [bound.arguments[p] for p in bound.signature.parameters]
        run(*values, *tables)

    def __repr__(self) -> str:
        return f"<gt4py program {self.__name__}>"


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
