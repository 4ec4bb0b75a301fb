"""Each call's domain, as C++ in the program function: its bounds and the check that its
reads stay inside the arrays (status 1, a DomainError, with the embedded executor's
message). Both families emit it, so they raise the same errors at the same points.

The code uses the names of `stencilchain.steps.cpp.signature`: sizes `n_<dim>`, the
call's bounds `sc_start_<dim>`/`sc_stop_<dim>`, and the error buffer `err`/`err_len`.
"""

from __future__ import annotations

from collections.abc import Callable

from stencilchain.program import ir
from stencilchain.program.bound_exprs import BoundExpr
from stencilchain.program.dimensions import Dimension
from stencilchain.program.domains import empty_message, own_range_message, window_message
from stencilchain.steps.cpp.signature import bound_var, scalar_var, size_var


def parameter_bound(
    dim: Dimension, param: str | BoundExpr, scalar: Callable[[str], str] = scalar_var
) -> str:
    """The C++ value of integer scalar parameter `param` (or an integer expression of them)
    as a bound along `dim`: a negative value counts from the end, like a literal bound
    (`ir.Bound.resolve`); `scalar` gives the C++ value of a parameter (a kernel reads it
    otherwise than the program function)."""
    if isinstance(param, BoundExpr):
        p = param.cpp(scalar)
    else:
        p = f"static_cast<std::int64_t>({scalar(param)})"
    return f"({p} < 0 ? {size_var(dim)} + {p} : {p})"


def bound_value(dim: Dimension, bound: ir.Bound, scalar: Callable[[str], str] = scalar_var) -> str:
    """The C++ value of one bound along `dim` (an int64 expression)."""
    if bound.param is not None:
        base = parameter_bound(dim, bound.param, scalar)
        return base if bound.value == 0 else f"{base} + ({bound.value})"
    return f"{size_var(dim)} + ({bound.value})" if bound.from_end else f"{bound.value}"


def domain_bounds(call: ir.ProgramCall) -> list[str]:
    """The declarations of the call's bounds along each dimension of its domain."""
    lines = []
    for dd in call.domain.dims:
        for side, bounds, pick in (("start", dd.starts, "max"), ("stop", dd.stops, "min")):
            values = [bound_value(dd.dim, b) for b in bounds]
            value = (
                values[0]
                if len(values) == 1
                else f"std::{pick}<std::int64_t>({{{', '.join(values)}}})"
            )
            lines.append(f"const std::int64_t {bound_var(dd.dim, side)} = {value};")
    return lines


def nonempty(call: ir.ProgramCall) -> str:
    """The C++ condition that the call's domain (after `domain_bounds`) is not empty."""
    return (
        " && ".join(
            f"{bound_var(dd.dim, 'stop')} > {bound_var(dd.dim, 'start')}" for dd in call.domain.dims
        )
        or "true"  # a zero-dimensional domain: its one point
    )


def halo_checks(program_name: str, call: ir.ProgramCall) -> list[str]:
    """Returns 1 with a message in `err` where the call's reads leave the arrays (after
    `domain_bounds`, inside the `nonempty` branch: an empty domain does nothing)."""
    lines = []
    for dd in call.domain.dims:
        d, (lo, hi), n = dd.dim.name, dd.halo, size_var(dd.dim)
        start, stop = bound_var(dd.dim, "start"), bound_var(dd.dim, "stop")
        lines += [
            f"if ({start} - {lo} < 0 || {stop} + {hi} > {n}) {{",
            f'    std::snprintf(err, err_len, "call of {call.callee} in {program_name}(): '
            f"domain {d}: [%lld, %lld) with reads from {d}-{lo} to {d}+{hi} leaves the "
            f'array of size %lld along {d}", (long long){start}, (long long){stop}, '
            f"(long long){n});",
            "    return 1;",
            "}",
        ]
        for own in dd.own:
            end = f"{n} - {own.gap}" if own.gap else n
            message = own_range_message(
                call.callee, program_name, dd.dim, own, ("%lld", "%lld", "%lld")
            )
            lines += [
                f"if ({start} - {own.lo} < {own.start} || {stop} + {own.hi} > {end}) {{",
                f'    std::snprintf(err, err_len, "{message}", (long long){start}, '
                f"(long long){stop}, (long long)({end}));",
                "    return 1;",
                "}",
            ]
        for window in dd.windows:
            lines += _window_check(program_name, call, dd.dim, window)
    return lines


def _window_check(
    program_name: str,
    call: ir.ProgramCall,
    dim: Dimension,
    window: ir.Window,
) -> list[str]:
    """The check of reads that happen only where a concat_where's branch is selected: at
    the points [ws, we) where it is evaluated and selected, if any, reads stay inside the
    array (or the read field's own range, `window.range`)."""
    start, stop, n = bound_var(dim, "start"), bound_var(dim, "stop"), size_var(dim)
    ws = [f"{start} + ({window.shift})"] + [bound_value(dim, b) for b in window.interval.starts]
    we = [f"{stop} + ({window.shift})"] + [bound_value(dim, b) for b in window.interval.stops]
    lo, hi = window.reads
    first, gap = window.range
    end = f"{n} - {gap}" if gap else n
    message = window_message(
        call.callee, program_name, dim, window, ("%lld", "%lld", "%lld", "%lld", "%lld")
    )
    values = ", ".join(f"(long long)({v})" for v in (start, stop, "sc_ws", "sc_we", end))
    return [
        "{",
        f"    const std::int64_t sc_ws = std::max<std::int64_t>({{{', '.join(ws)}}});",
        f"    const std::int64_t sc_we = std::min<std::int64_t>({{{', '.join(we)}}});",
        f"    if (sc_ws < sc_we && (sc_ws + ({lo}) < {first} || sc_we + ({hi}) > {end})) {{",
        f'        std::snprintf(err, err_len, "{message}", {values});',
        "        return 1;",
        "    }",
        "}",
    ]


def open_domain(program_name: str, call: ir.ProgramCall) -> list[str]:
    """The call's bounds and halo check, ending inside the block of a non-empty domain,
    which the caller closes (GTFN puts the call's loops there)."""
    lines = domain_bounds(call)
    lines.append(f"if ({nonempty(call)}) {{")
    lines += ["    " + line for line in halo_checks(program_name, call)]
    return lines


def empty_domain_check(program_name: str, call: ir.ProgramCall) -> list[str]:
    """The `else` branch of a call's `nonempty` test: the message of an EmptyDomainWarning
    in `err` (status stays 0; the module warns after the run) where the domain is empty
    although no array is, like `stencilchain.program.domains.empty_domain_message`; the
    first such call's message is kept."""
    tests = []
    for dd in call.domain.dims:
        start, stop, n = bound_var(dd.dim, "start"), bound_var(dd.dim, "stop"), size_var(dd.dim)
        lo, hi = dd.halo
        if call.domain.explicit and lo + hi == 0:
            continue  # an explicit domain is empty on purpose, unless the reads fill the arrays
        test = f"{stop} <= {start}"
        if call.domain.explicit:
            test += f" && {n} <= {lo + hi}"
        message = empty_message(call.callee, program_name, dd, ("%lld", "%lld", "%lld"))
        values = ", ".join(f"(long long){v}" for v in (start, stop, n))
        tests.append((test, f'std::snprintf(err, err_len, "{message}", {values});'))
    if not tests:
        return []
    sizes = " && ".join(f"{size_var(dd.dim)} > 0" for dd in call.domain.dims)
    lines = [f"}} else if (err[0] == '\\0' && {sizes}) {{"]
    for k, (test, action) in enumerate(tests):
        lines += [f"    {'if' if k == 0 else '} else if'} ({test}) {{", f"        {action}"]
    lines.append("    }")
    return lines


def domain_checks(program: ir.Program) -> list[str]:
    """Every call's domain check, in a block of its own, before any call runs: a
    DomainError then leaves the outputs as they were. `program` is the program as the user
    wrote it (the callee names are those of its calls). A call whose domain is empty
    although its arrays are not leaves an EmptyDomainWarning's message in `err`."""
    lines = []
    for index, call in enumerate(program.calls):
        lines.append(f"{{  // domain of call {index}")
        lines += ["    " + line for line in open_domain(program.name, call)]
        lines += ["    " + line for line in empty_domain_check(program.name, call)]
        lines += ["    }", "}"]
    return lines
