"""Helpers of the command-line tests (a module of its own: test files import it)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

STENCILS = """\
import stencilchain as sc

I = sc.Dimension("I")
J = sc.Dimension("J")


@sc.field_operator
def lap(f: sc.Field[[I, J], sc.float64]) -> sc.Field[[I, J], sc.float64]:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


@sc.field_operator
def mix(
    f: sc.Field[[I, J], sc.float32],
    m: sc.Field[[I, J], sc.bool_],
    n: sc.Field[[I, J], sc.int32],
    a: sc.float32,
) -> sc.Field[[I, J], sc.float32]:
    return sc.where(m, f * a, sc.astype(n, sc.float32))


@sc.program
def smooth(f: sc.Field[[I, J], sc.float64], out: sc.Field[[I, J], sc.float64]):
    lap(f, out=out)


@sc.program
def masked(
    f: sc.Field[[I, J], sc.float32],
    m: sc.Field[[I, J], sc.bool_],
    n: sc.Field[[I, J], sc.int32],
    a: sc.float32,
    out: sc.Field[[I, J], sc.float32],
):
    mix(f, m, n, a, out=out)


not_a_program = 3
"""


@dataclasses.dataclass
class Result:
    """What one command printed, and its exit status."""

    status: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    @property
    def error_line(self) -> str:
        """The one line of a failed command's stderr."""
        lines = self.err.strip().splitlines()
        assert len(lines) == 1, f"expected one line on stderr, got {self.err!r}"
        assert "Traceback" not in self.err
        return lines[0]


CLI = Callable[..., Result]
