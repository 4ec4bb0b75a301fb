"""The decisions of one path through the `if`s on traced bool scalars: `decide` gives the
truth value of a condition (Symbol.__bool__), replaying the decisions taken so far and
stopping at the first new one (program/branches.py explores both ways)."""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING

from stencilchain.errors import DefinitionError, user_location
from stencilchain.program import ir

if TYPE_CHECKING:
    from stencilchain.program.tracing import Symbol


class Undecided(BaseException):
    """Raised by `decide` at the first condition beyond the replayed decisions; a
    BaseException so that a user's `except Exception` inside the traced function does not
    swallow it."""

    def __init__(self, cond: Symbol, location: tuple[str, int] | None) -> None:
        super().__init__()
        self.cond = cond
        self.location = location


class Path:
    """The decisions of one run: the first `len(decisions)` conditions are replayed."""

    def __init__(self, decisions: tuple[bool, ...]) -> None:
        self.decisions = decisions
        self.taken = 0

    def decide(self, cond: Symbol) -> bool:
        if self.taken < len(self.decisions):
            value = self.decisions[self.taken]
            self.taken += 1
            return value
        raise Undecided(cond, user_location())


current_path: contextvars.ContextVar[Path | None] = contextvars.ContextVar(
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
    path = current_path.get()
    if path is None:
        raise DefinitionError(
            "a traced value has no truth value here: Python `if` runs at trace time; use "
            "sc.where(cond, a, b) and `&`, `|`, `~`"
        )
    return path.decide(cond)
