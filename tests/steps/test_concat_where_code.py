"""The code of `sc.concat_where`: each branch's statements inside its own C++ block (common
subexpressions never hoisted out of a branch), and DaCe memlets of branch reads clamped
into the array."""

from __future__ import annotations

import pytest

import stencilchain as sc
from stencilchain.program.device import Device
from stencilchain.program.transforms import transform_program
from stencilchain.steps.cpp.expressions import ExpressionEmitter

I, K = sc.Dimension("I"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]


@sc.field_operator
def shared(f: F) -> F:
    up = sc.math.sqrt(f(K + 1)) - f
    down = sc.math.sqrt(f(K - 1)) - f
    inner = up + down
    return sc.concat_where(K == 0, up, sc.concat_where(K == sc.size(K) - 1, down, inner))


@sc.program
def shared_program(f: F, out: F) -> None:
    shared(f, out=out)


def read(name: str, pos: dict[sc.Dimension, int]) -> str:
    return f"{name}[{pos.get(K, 0):+d}]"


@pytest.mark.parametrize("cse", [True, False])
def test_branch_statements_stay_in_their_blocks(cse: bool) -> None:
    body = transform_program(shared_program.ir).field_operators[0].body
    emitter = ExpressionEmitter(read, lambda name: name, cse=cse)
    emitter.emit(body, {})
    lines = emitter.statements
    # every statement reading below or above the point is inside a branch's block, and the
    # square roots are computed again in the interior's block rather than shared
    reads = [line for line in lines if "f[+1]" in line or "f[-1]" in line]
    assert reads and all(line.startswith("    ") for line in reads)
    assert sum("std::sqrt(f[+1])" in line for line in lines) == 2
    assert sum("std::sqrt(f[-1])" in line for line in lines) == 2
    assert lines[0].startswith("const bool") and "i_K" in lines[0]


def test_dace_memlets_of_branch_reads_are_clamped() -> None:
    pytest.importorskip("dace")
    from stencilchain.steps.dace.translator import DaCeTranslator

    text = DaCeTranslator(device=Device.CPU, auto_optimize=False)(shared_program.ir).source_code
    for offset in ("1", "-1"):
        assert f"Max(0, {offset} + symbol($i_K" in text  # serialized sympy: Min(n_K - 1, ...)
