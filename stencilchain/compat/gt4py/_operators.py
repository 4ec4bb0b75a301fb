"""gt4py's `@field_operator` and `@scan_operator`: each traced into stencilchain's own
operator once per specialization, when the tables it reads are known.

A gt4py connectivity has no width until the call's `offset_provider` gives its table, so
an operator is traced when a program (or a direct call) first runs it with one; it is
traced again for tables of another width or skip-value property, as in gt4py. Tracing runs
under gt4py's rules for literals (program/literal_rules.py)."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from stencilchain.compat.gt4py._offsets import (
    FieldOffset,
    Resolution,
    TableSpec,
    current,
    resolving,
)
from stencilchain.compat.gt4py._program_args import unwrapped_call
from stencilchain.compat.gt4py._translate import translated
from stencilchain.errors import DefinitionError
from stencilchain.program.dimensions import Dimension
from stencilchain.program.field_operator import FieldOperator as _ScFieldOperator
from stencilchain.program.literal_rules import gt4py_literals
from stencilchain.program.scan_operator import ScanOperator as _ScScanOperator

Key = tuple[tuple[str, TableSpec | None], ...]


class _Specialized:
    """An operator traced once per set of table specs that it reads through."""

    def __init__(self, definition: Callable[..., Any]) -> None:
        self.definition = definition
        self.__name__ = definition.__name__
        self.__doc__ = definition.__doc__
        self._traced: dict[Key, Any] = {}
        # the FieldOffsets its traces read through (its callees' too), known after the first
        self._reads: dict[str, FieldOffset] | None = None

    def _make(self, fn: Callable[..., Any]) -> Any:
        raise NotImplementedError

    def specialized(self, resolution: Resolution) -> Any:
        """stencilchain's operator for the tables of `resolution`."""
        if self._reads is not None:
            key = resolution.key(self._reads)
            op = self._traced.get(key)
            if op is not None:
                resolution.used.update(self._reads)
                return op
        own = Resolution(resolution.spec)
        with resolving(own), gt4py_literals():
            op = self._make(translated(self.definition))
        self._reads = dict(own.used)
        self._traced[own.key(self._reads)] = op
        resolution.used.update(self._reads)
        return op

    def _traced_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A call inside a trace (of a program or an operator): stencilchain's operator,
        called with the arguments as the caller's trace has them."""
        resolution = current()
        assert resolution is not None
        args, kwargs = unwrapped_call(args, kwargs)
        return self.specialized(resolution)(*args, **kwargs)


class FieldOperator(_Specialized):
    """A gt4py field operator: called from a program, from another operator, or directly
    with `out=`, `offset_provider=` and `domain=` (gt4py's test-harness style)."""

    def __init__(self, definition: Callable[..., Any], backend: Any = None) -> None:
        super().__init__(definition)
        self.backend = backend
        self._direct: Any = None

    def _make(self, fn: Callable[..., Any]) -> Any:
        return _ScFieldOperator(fn)

    def with_backend(self, backend: Any) -> FieldOperator:
        """This operator, called directly, run by `backend` (any stencilchain toolchain)."""
        other = FieldOperator(self.definition, backend)
        other._traced, other._reads = self._traced, self._reads
        return other

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
    ) -> None:
        super().__init__(definition, backend)
        self.axis, self.forward, self.init = axis, forward, init

    def _make(self, fn: Callable[..., Any]) -> Any:
        return _ScScanOperator(fn, self.axis, self.forward, self.init)

    def with_backend(self, backend: Any) -> ScanOperator:
        other = ScanOperator(self.definition, self.axis, self.forward, self.init, backend)
        other._traced, other._reads = self._traced, self._reads
        return other

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


def _check_function(fn: object, what: str) -> None:
    if not isinstance(fn, types.FunctionType):
        raise DefinitionError(f"@{what} decorates a Python function, got {fn!r}")
