"""The C++ of one column of a scan, for both families: the state in local variables,
a sequential loop over the levels of the axis, the body through the one expression
emitter (the state and the current level's values are scalar reads), and a store of
each state element at each level.

How an argument is read at the current level and how a result is stored are the
family's (callbacks), as for field-operator bodies.
"""

from __future__ import annotations

from collections.abc import Callable

from stencilchain.program import ir
from stencilchain.steps.cpp.expressions import ExpressionEmitter
from stencilchain.steps.cpp.literals import literal

# Columns a CPU scan walks together where the axis is not the arrays' fastest dimension
# (both families).
SCAN_BLOCK = 256

# The C++ of the argument passed for a scan parameter, at the current level.
ArgumentReader = Callable[[ir.Param, ir.Expr], str]
# The statement storing `value` as state element `k` at the current level.
Store = Callable[[int, str], str]


def state_var(k: int) -> str:
    return f"sc_state{k}"


def scan_level(
    scan: ir.ScanOperatorDef,
    call: ir.ProgramCall,
    *,
    read_argument: ArgumentReader,
    read_state: Callable[[int], str],
    decimal_literals: bool = False,
    prefix: str = "t",
) -> tuple[list[str], list[str]]:
    """The statements of one level of a scan, and the C++ of each new state element."""
    arguments = {p.name: (p, arg) for p, arg in zip(scan.params, call.args)}
    states = {s.name: k for k, s in enumerate(scan.state)}

    def read_scalar(name: str) -> str:
        if name in states:
            return read_state(states[name])
        param, arg = arguments[name]
        if isinstance(arg, ir.Literal):
            return literal(arg.value, arg.type, decimal=decimal_literals)
        return read_argument(param, arg)

    def no_field(name: str, pos: object) -> str:
        raise ValueError(f"a scan body reads field '{name}': its values are scalars")

    emitter = ExpressionEmitter(
        no_field,
        read_scalar,
        cse=True,
        decimal_literals=decimal_literals,
        tuples=False,
        prefix=prefix,
        scalar_branches=False,
    )
    values = [emitter.emit(e, {}) for e in scan.body]
    return list(emitter.statements), values


def scan_block(
    scan: ir.ScanOperatorDef,
    call: ir.ProgramCall,
    *,
    level: str,
    start: str,
    stop: str,
    column: str,
    first: str,
    last: str,
    width: int,
    read_argument: ArgumentReader,
    store: Store,
) -> list[str]:
    """The statements of a block of at most `width` neighbouring columns, `column` running
    over [first, last): the level loop outside, the loop over the block's columns inside
    (unit stride for the arrays where `column` is their fastest dimension, vectorizable:
    the columns are independent), the state in a small array per element."""
    statements, values = scan_level(
        scan,
        call,
        read_argument=read_argument,
        read_state=lambda k: f"{state_var(k)}[sc_b]",
    )
    lines = []
    for k, lit in enumerate(scan.init):
        lines.append(f"{lit.type.cpp} {state_var(k)}[{width}];")
    lines.append(f"for (std::int64_t sc_b = 0; sc_b < {last} - {first}; ++sc_b) {{")
    lines += [
        f"    {state_var(k)}[sc_b] = {literal(lit.value, lit.type)};"
        for k, lit in enumerate(scan.init)
    ]
    lines.append("}")
    if scan.forward:
        lines.append(f"for (std::int64_t {level} = {start}; {level} < {stop}; ++{level}) {{")
    else:
        lines.append(f"for (std::int64_t {level} = {stop} - 1; {level} >= {start}; --{level}) {{")
    inner = [f"const std::int64_t sc_b = {column} - {first};", *statements]
    inner += [
        f"const {lit.type.cpp} sc_new{k} = {value};"
        for k, (lit, value) in enumerate(zip(scan.init, values))
    ]
    inner += [f"{state_var(k)}[sc_b] = sc_new{k};" for k in range(len(values))]
    inner += [store(k, f"sc_new{k}") for k in range(len(values))]
    lines.append("    #pragma omp simd")
    lines.append(f"    for (std::int64_t {column} = {first}; {column} < {last}; ++{column}) {{")
    lines += ["        " + s for s in inner]
    lines.append("    }")
    lines.append("}")
    return lines


def scan_column(
    scan: ir.ScanOperatorDef,
    call: ir.ProgramCall,
    *,
    level: str,
    start: str,
    stop: str,
    read_argument: ArgumentReader,
    store: Store,
    decimal_literals: bool = False,
) -> list[str]:
    """The statements of one column: `level` runs over [start, stop) upwards (forward)
    or downwards; the state starts at `init` in each column and lives in locals."""
    statements, values = scan_level(
        scan,
        call,
        read_argument=read_argument,
        read_state=state_var,
        decimal_literals=decimal_literals,
    )
    lines = [
        f"{lit.type.cpp} {state_var(k)} = {literal(lit.value, lit.type, decimal=decimal_literals)};"
        for k, lit in enumerate(scan.init)
    ]
    if scan.forward:
        lines.append(f"for (std::int64_t {level} = {start}; {level} < {stop}; ++{level}) {{")
    else:
        lines.append(f"for (std::int64_t {level} = {stop} - 1; {level} >= {start}; --{level}) {{")
    inner = list(statements)
    # every new element is computed before any is assigned: they read the old state
    inner += [
        f"const {lit.type.cpp} sc_new{k} = {value};"
        for k, (lit, value) in enumerate(zip(scan.init, values))
    ]
    inner += [f"{state_var(k)} = sc_new{k};" for k in range(len(values))]
    inner += [store(k, state_var(k)) for k in range(len(values))]
    lines += ["    " + s for s in inner]
    lines.append("}")
    return lines
