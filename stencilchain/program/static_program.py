"""Static parameters: `@sc.program(static_params=("n",))` traces the program once per value
set of those scalar parameters, each a literal in its IR (so a backend compiles one
specialisation per value set), chosen at call time by a dict lookup; `with_bound_args`
binds arguments once."""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from stencilchain.errors import ArgumentError, DefinitionError
from stencilchain.program import ir
from stencilchain.program.arguments import bind_arguments
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.scan_annotations import scalar_overrides
from stencilchain.program.types import parameter_types

if TYPE_CHECKING:
    from stencilchain.program.program import Backend, Program


class StaticProgram:
    """A program some of whose scalar parameters (`static_params`) are fixed per
    specialisation: each value set is traced into its own ir.Program, those parameters
    literals in it. Calling it runs the specialisation of the arguments' values embedded."""

    def __init__(
        self,
        fn: Callable[..., Any],
        static_params: Iterable[str],
        trace: Callable[[Callable[..., Any], Mapping[str, Any]], Program],
    ) -> None:
        """`trace(fn, static_values)` makes one specialisation (`Program` with `static=`)."""
        self.fn = fn
        self.trace = trace
        self.name = fn.__name__
        self.location = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
        params, _ = parameter_types(fn, "program", overrides=scalar_overrides(fn))
        if isinstance(static_params, str):
            raise DefinitionError(
                f"program {self.name}: static_params is the string {static_params!r}; give "
                f"a tuple of parameter names, static_params=({static_params!r},)",
                self.location,
            )
        names = tuple(static_params)
        if not names:
            raise DefinitionError(
                f"program {self.name}: static_params is empty; name the scalar parameters "
                "to compile in, or write @sc.program without it",
                self.location,
            )
        by_name = {p.name: p for p in params}
        self.static = static_params_of(
            names,
            tuple(by_name),
            lambda name: _scalar(by_name[name].type),
            _Refusals(self.name, self.location, by_name),
        )
        # in parameter order, as the values of `key` and `specialise` are (a static_params
        # listed in another order gave each parameter another one's value)
        self.static_params = self.static.names
        # every parameter, to bind a call's arguments as Python would
        self.signature = ir.Program(self.name, params, (), ())
        self.positions = self.static.positions
        self.specialisations: dict[tuple[Any, ...], Program] = {}
        self._embedded = StaticExecutor(self, None, jit=True)

    def key(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """The static values of a call's arguments (in parameter order), checked."""
        values = tuple(args[i] for i in self.positions)
        refused = self.static.refused(values)
        if refused is not None:
            name, dtype, value = refused
            raise ArgumentError(
                f"{self.name}(): static argument '{name}' must be a value of type {dtype.name} "
                f"(a Python {python_kind(dtype)} or a NumPy {dtype.name}), got {value!r}"
            )
        return values

    def specialise(self, values: tuple[Any, ...]) -> Program:
        """The program traced with the static parameters given `values` (made once)."""
        found = self.specialisations.get(values)
        if found is None:
            static = dict(zip(self.static_params, (python_value(v) for v in values)))
            found = self.trace(self.fn, static)
            self.specialisations[values] = found
        return found

    def with_backend(self, backend: Backend, *, jit: bool = True) -> StaticExecutor:
        """This program run by `backend`, one compiled specialisation per value set of the
        static parameters: made at the first call with new values, or only by `compile`
        with `jit=False` (a call with other values is then an ArgumentError)."""
        return StaticExecutor(self, backend, jit=jit)

    def with_bound_args(self, **bound: Any) -> BoundArgs:
        """This program with some arguments given once (static or not)."""
        return BoundArgs(self._embedded, bound)

    def __call__(self, /, *args: Any, **kwargs: Any) -> None:
        """Run the specialisation of these arguments' static values with NumPy."""
        self._embedded(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<stencilchain program {self.name} static in {', '.join(self.static_params)}>"


class StaticExecutor:
    """A static program on one backend (None: embedded): a dict from the static values to
    the specialisation's executor, which takes the other arguments. The call path looks
    the executor up by the static arguments and their types (a hit was checked when the
    entry was made), so a call with known values pays a tuple and a dict lookup."""

    def __init__(self, program: StaticProgram, backend: Backend | None, *, jit: bool) -> None:
        self.program = program
        self.backend = backend
        self.jit = jit
        # by the checked static values, and by (type, value) pairs for the call path
        self.executors: dict[tuple[Any, ...], Callable[..., None]] = {}
        self._by_typed: dict[Any, Callable[..., None]] = {}
        positions = program.positions
        dynamic = [i for i in range(len(program.signature.params)) if i not in positions]
        self._count = len(program.signature.params)
        if len(positions) == 1:
            (at,) = positions
            self._typed: Callable[[tuple[Any, ...]], Any] = lambda a: (type(a[at]), a[at])
        else:
            self._typed = lambda a: tuple((type(a[i]), a[i]) for i in positions)
        if len(dynamic) == 1:
            (only,) = dynamic
            self._dynamic: Callable[[tuple[Any, ...]], tuple[Any, ...]] = lambda a: (a[only],)
        elif dynamic:
            self._dynamic = operator.itemgetter(*dynamic)
        else:
            self._dynamic = lambda a: ()

    def _executor(self, values: tuple[Any, ...]) -> Callable[..., None]:
        spec = self.program.specialise(values)
        if self.backend is None:
            return spec
        return spec.with_backend(self.backend)

    def compile(self, **values: Iterable[Any]) -> None:
        """Compile the specialisation of every combination of the values given for each
        static parameter (all must be named); one compiled already is an ArgumentError."""
        names = self.program.static_params
        if set(values) != set(names):
            raise ArgumentError(
                f"{self.program.name}.compile(): give the values of every static parameter "
                f"({', '.join(names)}), got {', '.join(values) or 'none'}"
            )
        columns = [list(values[n]) for n in names]
        for combination in itertools.product(*columns):
            args: list[Any] = [None] * self._count
            for i, v in zip(self.program.positions, combination):
                args[i] = v
            key = self.program.key(tuple(args))
            if key in self.executors:
                raise ArgumentError(
                    f"{self.program.name} is compiled for {self._text(key)} already; compile "
                    "each value set once"
                )
            executor = self._executor(key)
            compile_now = getattr(executor, "compile", None)
            if callable(compile_now):
                compile_now()
            self.executors[key] = executor

    def __call__(self, /, *args: Any, **kwargs: Any) -> None:
        if kwargs:
            args = bind_arguments(self.program.signature, args, kwargs)
        elif len(args) != self._count:
            names = ", ".join(p.name for p in self.program.signature.params)
            raise ArgumentError(
                f"{self.program.name}() takes {self._count} arguments ({names}), got {len(args)}"
            )
        try:
            executor = self._by_typed[self._typed(args)]
        except KeyError:
            executor = self._miss(args)
        executor(*self._dynamic(args))

    def _miss(self, args: tuple[Any, ...]) -> Callable[..., None]:
        """The executor of static values not seen with these types: checked, then made
        (with `jit`) or found among those compiled."""
        key = self.program.key(args)
        executor = self.executors.get(key)
        if executor is None:
            if not self.jit:
                compiled = "; ".join(self._text(k) for k in self.executors)
                raise ArgumentError(
                    f"{self.program.name}() has no specialisation for {self._text(key)} "
                    f"(compiled: {compiled or 'none'}); compile it first, or use "
                    "with_backend(..., jit=True)"
                )
            executor = self._executor(key)
            self.executors[key] = executor
        self._by_typed[self._typed(args)] = executor
        return executor

    def _text(self, key: tuple[Any, ...]) -> str:
        return ", ".join(
            f"{n}={python_value(v)!r}" for n, v in zip(self.program.static_params, key)
        )

    def with_bound_args(self, **bound: Any) -> BoundArgs:
        """This executor with some arguments given once (static or not)."""
        return BoundArgs(self, bound)


class BoundArgs:
    """A static program's executor with some arguments bound by name, once: a call gives
    the others, by position (in parameter order) or by name."""

    def __init__(self, executor: StaticExecutor, bound: Mapping[str, Any]) -> None:
        names = [p.name for p in executor.program.signature.params]
        for name in bound:
            if name not in names:
                raise ArgumentError(
                    f"{executor.program.name}.with_bound_args(): '{name}' is not a parameter "
                    f"({', '.join(names)})"
                )
        self.executor = executor
        self.bound = dict(bound)
        self.free = [n for n in names if n not in self.bound]

    def __call__(self, /, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(self.free):
            raise ArgumentError(
                f"{self.executor.program.name}() with bound {', '.join(self.bound)} takes "
                f"{len(self.free)} arguments ({', '.join(self.free)}), got {len(args)} by position"
            )
        for name in kwargs:
            if name in self.bound:
                raise ArgumentError(
                    f"{self.executor.program.name}(): '{name}' is bound by with_bound_args"
                )
        self.executor(**dict(zip(self.free, args)), **kwargs, **self.bound)


@dataclasses.dataclass(frozen=True)
class StaticParams:
    """A program's static parameters: their names in parameter order (the order of a value
    set), their positions among the parameters, their dtypes and each one's value check."""

    names: tuple[str, ...]
    positions: tuple[int, ...]
    dtypes: tuple[ScalarType, ...]
    checks: tuple[Callable[[Any], bool], ...]

    def refused(self, values: Sequence[Any]) -> tuple[str, ScalarType, Any] | None:
        """The first of `values` (one per static parameter, in `names`' order) that is not
        a value of its parameter's dtype: the parameter's name, its dtype and the value."""
        for name, dtype, check, value in zip(self.names, self.dtypes, self.checks, values):
            if not check(value):
                return name, dtype, value
        return None


class StaticRefusals(Protocol):
    """How a front end words the refusal of static parameters (static_params_of says when):
    the DSL's `@sc.program(static_params=...)`, compat's gt4py spelling."""

    def not_a_parameter(self, name: str) -> Exception: ...

    def named_twice(self, names: tuple[str, ...]) -> Exception: ...

    def not_a_scalar(self, name: str) -> Exception: ...


def static_params_of(
    names: tuple[str, ...],
    parameters: tuple[str, ...],
    scalar: Callable[[str], ScalarType | None],
    refusals: StaticRefusals,
) -> StaticParams:
    """The static parameters `names` of a program of `parameters`: each is a parameter,
    named once, and a scalar (`scalar(name)`, its dtype, or None); `refusals` words the
    first rule broken."""
    for name in names:
        if name not in parameters:
            raise refusals.not_a_parameter(name)
    if len(set(names)) != len(names):
        raise refusals.named_twice(names)
    ordered = tuple(p for p in parameters if p in names)
    dtypes = []
    for name in ordered:
        dtype = scalar(name)
        if dtype is None:
            raise refusals.not_a_scalar(name)
        dtypes.append(dtype)
    return StaticParams(
        ordered,
        tuple(parameters.index(n) for n in ordered),
        tuple(dtypes),
        tuple(value_check(d) for d in dtypes),
    )


@dataclasses.dataclass(frozen=True)
class _Refusals:
    """The DSL's words for static parameters it refuses: DefinitionErrors at the program."""

    program: str
    location: tuple[str, int]
    params: Mapping[str, ir.Param]

    def not_a_parameter(self, name: str) -> DefinitionError:
        return DefinitionError(
            f"program {self.program}: static parameter '{name}' is not one of its "
            f"parameters ({', '.join(self.params)})",
            self.location,
        )

    def named_twice(self, names: tuple[str, ...]) -> DefinitionError:
        return DefinitionError(
            f"program {self.program}: static_params names a parameter twice", self.location
        )

    def not_a_scalar(self, name: str) -> DefinitionError:
        t = self.params[name].type
        what = f"a field {t!r}" if isinstance(t, ir.FieldType) else repr(t)
        return DefinitionError(
            f"program {self.program}: static parameter '{name}' is {what}; a static "
            "parameter is a scalar (its value is compiled in)",
            self.location,
        )


def value_check(dtype: Any) -> Callable[[Any], bool]:
    """Whether a value is one of scalar `dtype` without a conversion (a Python bool, an int
    in range, a float, or a NumPy scalar of exactly that dtype), made once per parameter."""
    own = dtype.numpy.type
    if dtype.is_bool:
        return lambda v: type(v) is bool or type(v) is own
    if dtype.is_integer:
        lo, hi = int(np.iinfo(dtype.numpy).min), int(np.iinfo(dtype.numpy).max)
        return lambda v: type(v) is own or (type(v) is int and lo <= v <= hi)
    return lambda v: type(v) is own or type(v) is float or type(v) is int


def python_value(value: Any) -> Any:
    """A static value as a Python literal for the trace (a NumPy scalar's own value)."""
    return value.item() if isinstance(value, np.generic) else value


def python_kind(dtype: Any) -> str:
    return "bool" if dtype.is_bool else "int" if dtype.is_integer else "float"


def _scalar(t: object) -> ScalarType | None:
    return t if isinstance(t, ScalarType) else None
