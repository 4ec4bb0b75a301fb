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

from collections.abc import Callable, Sequence
from typing import Any

from stencilchain.errors import DefinitionError
from stencilchain.program.constructs import where
from stencilchain.program.decisions import Path, Undecided, current_path
from stencilchain.program.if_join import NotJoinable, joined
from stencilchain.program.tracing import Symbol

# Tracing that runs one function more often than this is a DefinitionError: every
# condition doubles the number of paths.
MAX_PATHS = 256


def trace_branches(fn: Callable[..., object], args: Sequence[object], what: str) -> object:
    """The result of `fn(*args)` (a traced function call) with every `if` on a scalar
    condition turned into sc.where of its two sides; `what` (e.g. "field operator lap")
    names the function in errors.

    First with the `if` statements joined where they end (program/if_join.py: one run
    however many there are); where that does not apply or fails, the paths."""
    rewritten = joined(fn)
    if rewritten is not None:
        try:
            return _explore(lambda: rewritten(*args), what)
        except NotJoinable:
            pass
        except Exception:
            pass
    return _explore(lambda: fn(*args), what)


def _explore(run: Callable[[], object], what: str) -> object:
    """`run()` once per path through its conditions, the results joined."""
    runs = 0

    def explore(decisions: tuple[bool, ...]) -> object:
        nonlocal runs
        runs += 1
        if runs > MAX_PATHS:
            raise DefinitionError(
                f"{what} takes more than {MAX_PATHS} paths through `if`s on scalar values "
                "(each condition doubles them); use sc.where for some of them"
            )
        token = current_path.set(Path(decisions))
        try:
            return run()
        except Undecided as undecided:
            branch = undecided
        finally:
            current_path.reset(token)
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
    if isinstance(then, tuple) or isinstance(otherwise, tuple):
        if not (
            isinstance(then, tuple) and isinstance(otherwise, tuple) and len(then) == len(otherwise)
        ):
            raise DefinitionError(
                f"{what}: the two sides of this `if` give {_shape(then)} and "
                f"{_shape(otherwise)}; both must give the same",
                location,
            )
        joined = tuple(
            _join(cond, a, b, location, what) for a, b in zip(then, otherwise, strict=True)
        )
        if type(then) is type(otherwise) and hasattr(then, "_fields"):  # a NamedTuple stays one
            named: Any = type(then)
            return named(*joined)
        return joined
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
