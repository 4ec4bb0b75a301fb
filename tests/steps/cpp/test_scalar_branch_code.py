"""The code of an `if` on a scalar parameter: an `if`/`else` in C++ whose blocks hold each
side's statements, so only the side taken runs; in a scan body, a select (which keeps the
column loop vectorized)."""

from __future__ import annotations

import pytest

import stencilchain as sc
from stencilchain.program.transforms import transform_program
from stencilchain.steps.cpp.expressions import ExpressionEmitter
from stencilchain.steps.cpp.scans import scan_level

I, K = sc.Dimension("I"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]


@sc.field_operator
def smoothed(f: F, smooth: sc.bool_) -> F:
    if smooth:
        return sc.math.sqrt(0.5 * (f(I - 1) + f(I + 1)))
    return sc.math.exp(f)


@sc.program
def smoothing(f: F, smooth: sc.bool_, out: F) -> None:
    smoothed(f, smooth, out=out)


def read(name: str, pos: dict[sc.Dimension, int]) -> str:
    return f"{name}[{pos.get(I, 0):+d}]"


@pytest.mark.parametrize("cse", [True, False])
def test_each_side_runs_in_its_own_block(cse: bool) -> None:
    body = transform_program(smoothing.ir).field_operators[0].body
    emitter = ExpressionEmitter(read, lambda name: f"s_{name}", cse=cse)
    emitter.emit(body, {})
    text = "\n".join(emitter.statements)
    assert "if (s_smooth) {" in text and "} else {" in text, text
    # the square root runs only in the first block, the exponential only in the second
    then_block, else_block = text.split("} else {")
    assert "std::sqrt" in then_block and "std::exp" not in then_block
    assert "std::exp" in else_block and "std::sqrt" not in else_block


@sc.scan_operator(axis=K, init=0.0)
def capped(total, f: F, cap: sc.float64):  # type: ignore[no-untyped-def]
    if total + f > cap:
        return cap
    return total + f


@sc.program
def capping(f: F, cap: sc.float64, out: F) -> None:
    capped(f, cap, out=out)


def test_a_scan_body_selects() -> None:
    call = capping.ir.calls[0]
    statements, values = scan_level(
        capping.ir.scan_operators[0],
        call,
        read_argument=lambda param, arg: f"a_{param.name}",
        read_state=lambda k: f"state{k}",
    )
    text = "\n".join([*statements, *values])
    assert "?" in text and "if (" not in text, text
