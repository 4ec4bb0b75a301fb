"""gt4py's `@field_operator` and `@scan_operator`: each traced into stencilchain's own
operator once, when a program (or a direct call) first runs it.

A gt4py connectivity has no width until the call's `offset_provider` gives its table: the
operator is traced with stencilchain's open Connectivity of each FieldOffset it reads
(`max_neighbors=None, skip_values=None`), and its programs are specialised per call's
tables by stencilchain's table specialisation (program/table_specialisation.py), as gt4py
compiles per offset-provider type. Tracing runs under gt4py's rules for literals
(program/literal_rules.py)."""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from typing import Any

from stencilchain.compat.gt4py._offsets import FieldOffset, Reads, current, recording
from stencilchain.compat.gt4py._program_args import unwrapped_call
from stencilchain.compat.gt4py._translate import translated
from stencilchain.errors import DefinitionError
from stencilchain.program.dimensions import Dimension
from stencilchain.program.field_operator import FieldOperator as _ScFieldOperator
from stencilchain.program.literal_rules import fixed_literal, gt4py_literals
from stencilchain.program.scan_operator import ScanOperator as _ScScanOperator


@dataclasses.dataclass
class _Trace:
    """An operator's trace, shared by its `with_backend` copies: stencilchain's operator
    and the FieldOffsets it reads through (its callees' too); None until first traced."""

    op: Any = None
    reads: dict[str, FieldOffset] | None = None


class _Deferred:
    """An operator traced at its first call inside a trace."""

    def __init__(self, definition: Callable[..., Any], trace: _Trace | None = None) -> None:
        self.definition = definition
        self.__name__ = definition.__name__
        self.__doc__ = definition.__doc__
        self._trace = _Trace() if trace is None else trace

    def _make(self, fn: Callable[..., Any]) -> Any:
        raise NotImplementedError

    def traced(self, reads: Reads) -> Any:
        """stencilchain's operator, its FieldOffsets recorded in `reads`."""
        trace = self._trace
        if trace.reads is None:
            own = Reads()
            with recording(own), gt4py_literals():
                trace.op = self._make(translated(self.definition))
            trace.reads = dict(own.used)
        reads.used.update(trace.reads)
        return trace.op

    def _traced_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A call inside a trace (of a program or an operator): stencilchain's operator,
        called with the arguments as the caller's trace has them."""
        reads = current()
        assert reads is not None
        args, kwargs = unwrapped_call(args, kwargs)
        return self.traced(reads)(*args, **kwargs)


class FieldOperator(_Deferred):
    """A gt4py field operator: called from a program, from another operator, or directly
    with `out=`, `offset_provider=` and `domain=` (gt4py's test-harness style)."""

    def __init__(
        self, definition: Callable[..., Any], backend: Any = None, trace: _Trace | None = None
    ) -> None:
        super().__init__(definition, trace)
        self.backend = backend
        self._direct: Any = None

    def _make(self, fn: Callable[..., Any]) -> Any:
        return _ScFieldOperator(fn)

    def with_backend(self, backend: Any) -> FieldOperator:
        """This operator, called directly, run by `backend` (any stencilchain toolchain)."""
        return FieldOperator(self.definition, backend, self._trace)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if current() is not None:
            return self._traced_call(args, kwargs)
        if self._direct is None:
            from stencilchain.compat.gt4py._direct import DirectCalls

            self._direct = DirectCalls(self)
        return self._direct(args, kwargs)

    def __repr__(self) -> str:
        return f"<gt4py field_operator {self.__name__}>"


class ScanOperator(FieldOperator):
    """A gt4py scan operator `(state, *values) -> state` along `axis`."""

    def __init__(
        self,
        definition: Callable[..., Any],
        axis: Dimension,
        forward: bool,
        init: object,
        backend: Any = None,
        trace: _Trace | None = None,
    ) -> None:
        super().__init__(definition, backend, trace)
        self.axis, self.forward, self.init = axis, forward, init

    def _make(self, fn: Callable[..., Any]) -> Any:
        # gt4py reads every value of a scan per level, whatever its annotation, and types
        # the literals of init= as its literals (an int int32, a float float64)
        init = _typed_literals(self.init)
        return _ScScanOperator(fn, self.axis, self.forward, init, dtype_columns=True)

    def with_backend(self, backend: Any) -> ScanOperator:
        return ScanOperator(
            self.definition, self.axis, self.forward, self.init, backend, self._trace
        )

    def __repr__(self) -> str:
        return f"<gt4py scan_operator {self.__name__}>"


def field_operator(
    definition: Callable[..., Any] | None = None, *, backend: Any = None, grid_type: Any = None
) -> Any:
    """`@field_operator` or `@field_operator(backend=...)`."""

    def decorate(fn: Callable[..., Any]) -> FieldOperator:
        _check_function(fn, "field_operator")
        return FieldOperator(fn, backend)

    return decorate if definition is None else decorate(definition)


def scan_operator(
    definition: Callable[..., Any] | None = None,
    *,
    axis: Dimension,
    forward: bool = True,
    init: object = 0.0,
    backend: Any = None,
    grid_type: Any = None,
) -> Any:
    """`@scan_operator(axis=K, forward=True, init=0.0)`."""

    def decorate(fn: Callable[..., Any]) -> ScanOperator:
        _check_function(fn, "scan_operator")
        if not isinstance(axis, Dimension):
            raise DefinitionError(
                f"scan_operator {fn.__name__}: axis= is a Dimension, got {axis!r}",
                (fn.__code__.co_filename, fn.__code__.co_firstlineno),
            )
        return ScanOperator(fn, axis, forward, init, backend)

    return decorate if definition is None else decorate(definition)


def _typed_literals(value: object) -> object:
    """`value` (a scan's init=, a tuple nested or not) with each Python literal as the
    NumPy scalar of the dtype gt4py gives it; a dataclass or NamedTuple instance as it is
    (its class's annotations type its attributes)."""
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return value
    if isinstance(value, tuple):
        return tuple(_typed_literals(v) for v in value)
    return fixed_literal(value)


def _check_function(fn: object, what: str) -> None:
    if not isinstance(fn, types.FunctionType):
        raise DefinitionError(f"@{what} decorates a Python function, got {fn!r}")
