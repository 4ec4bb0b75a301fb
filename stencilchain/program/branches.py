"""Python `if`/`else` on scalar values inside field and scan operators, as branches taken
at run time.

Tracing runs the operator's function once with symbolic values, so a Python `if` would
normally be decided at trace time. Here each `if` on a traced bool *scalar* (a scalar
parameter, an expression of scalar parameters, or in a scan's body any value at the
current level) is traced both ways instead: the function runs once per path through its
conditions (a depth-first walk that replays the decisions taken so far), and the results
of the two sides of every condition are joined with `sc.where(cond, then, else)`. Both
sides are therefore traced and type-checked, and the condition is evaluated at run time.
An `if` on a field stays a DefinitionError that says to use sc.where.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import TYPE_CHECKING

from stencilchain.errors import DefinitionError, user_location
from stencilchain.program import ir

if TYPE_CHECKING:
    from stencilchain.program.tracing import Symbol

# Tracing that runs one function more often than this is a DefinitionError: every
# condition doubles the number of paths.
MAX_PATHS = 256


class _Undecided(BaseException):
    """Raised by `decide` at the first condition beyond the replayed decisions; a
    BaseException so that a user's `except Exception` inside the traced function does not
    swallow it."""

    def __init__(self, cond: Symbol, location: tuple[str, int] | None) -> None:
        super().__init__()
        self.cond = cond
        self.location = location


class _Path:
    """The decisions of one run: the first `len(decisions)` conditions are replayed."""

    def __init__(self, decisions: tuple[bool, ...]) -> None:
        self.decisions = decisions
        self.taken = 0

    def decide(self, cond: Symbol) -> bool:
        if self.taken < len(self.decisions):
            value = self.decisions[self.taken]
            self.taken += 1
            return value
        raise _Undecided(cond, user_location())


_current_path: contextvars.ContextVar[_Path | None] = contextvars.ContextVar(
    "current_branch_path", default=None
)


def decide(cond: Symbol) -> bool:
    """The truth value of traced `cond` on the path being traced (Symbol.__bool__)."""
    t = cond.type
    if isinstance(t, ir.FieldType):
        raise DefinitionError(
            "Python `if`, `and`, `or`, `not`, chained comparisons (a < b < c) or a "
            "conditional expression on a field "
            f"({t!r}): a field has a value per point, so pick pointwise with "
            "sc.where(cond, a, b) and combine conditions with `&`, `|`, `~`"
        )
    if t.name != "bool":
        raise DefinitionError(
            f"Python `if` on a {t.name} scalar: a condition must be bool; compare it, "
            "e.g. `if x != 0:`"
        )
    path = _current_path.get()
    if path is None:
        raise DefinitionError(
            "a traced value has no truth value here: Python `if` runs at trace time; use "
            "sc.where(cond, a, b) and `&`, `|`, `~`"
        )
    return path.decide(cond)


def trace_branches(run: Callable[[], object], what: str) -> object:
    """The result of `run()` (a traced function call) with every `if` on a scalar condition
    turned into sc.where of its two sides; `what` (e.g. "field operator lap") names the
    function in errors."""
    runs = 0

    def explore(decisions: tuple[bool, ...]) -> object:
        nonlocal runs
        runs += 1
        if runs > MAX_PATHS:
            raise DefinitionError(
                f"{what} takes more than {MAX_PATHS} paths through `if`s on scalar values "
                "(each condition doubles them); use sc.where for some of them"
            )
        token = _current_path.set(_Path(decisions))
        try:
            return run()
        except _Undecided as undecided:
            branch = undecided
        finally:
            _current_path.reset(token)
        then = explore((*decisions, True))
        otherwise = explore((*decisions, False))
        return _join(branch.cond, then, otherwise, branch.location, what)

    return explore(())


def _join(
    cond: Symbol,
    then: object,
    otherwise: object,
    location: tuple[str, int] | None,
    what: str,
) -> object:
    """`sc.where(cond, then, otherwise)`, element by element for tuples."""
    from stencilchain.program.tracing import Symbol, where

    if isinstance(then, tuple) or isinstance(otherwise, tuple):
        if not (
            isinstance(then, tuple) and isinstance(otherwise, tuple) and len(then) == len(otherwise)
        ):
            raise DefinitionError(
                f"{what}: the two sides of this `if` give {_shape(then)} and "
                f"{_shape(otherwise)}; both must give the same",
                location,
            )
        return tuple(
            _join(cond, a, b, location, what) for a, b in zip(then, otherwise, strict=True)
        )
    if then is otherwise or (
        isinstance(then, Symbol) and isinstance(otherwise, Symbol) and then.expr == otherwise.expr
    ):
        return then
    try:
        return where(cond, then, otherwise)
    except DefinitionError as err:
        raise DefinitionError(
            f"{what}: the two sides of this `if` do not combine: {err.reason}", location
        ) from None


def _shape(value: object) -> str:
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    return "one value"
