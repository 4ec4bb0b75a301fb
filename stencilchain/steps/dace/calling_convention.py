"""The names of a program's SDFG that its caller passes: the arrays and scalars (named like
the parameters), and the int64 symbols of sizes, strides and parameter bounds.

Both the translator and the shim that calls the compiled SDFG read them from here.

- one array per field parameter, named like the parameter, of shape `(n_<dim>, ...)` and
  strides `(<name>_s0, <name>_s1, ...)` in elements; every size and stride is an int64
  symbol (with `DataLayout.UNIT_STRIDE` the innermost stride is the constant 1 and has no
  symbol). One scalar argument per scalar parameter, of its dtype. A domain bound given by
  an integer scalar parameter is an int64 symbol per (parameter, dimension),
  `bound_symbol`, holding its value resolved along that dimension (negative: from the
  end), which the shim computes: DaCe takes map ranges and interstate conditions in
  symbols, not in scalar arguments, with auto-optimization on or off. A bound counted
  from a field's range (`sc.end_of`) is a symbol too, `field_bound_symbol`.
- with `DataLayout.STRIDED` a temporary over the dimensions of a field parameter has its
  axes ordered like the first such parameter's strides (stride symbols the shim computes,
  `temporary_layouts`), as GTFN's are; else C order.

The compiled function's parameters are `sdfg.arglist()` of the deserialized SDFG: every
program parameter, and those of the symbols that some call uses (the size and strides of
an array that no call reads or writes are not parameters; DaCe's generic call ignores them
if given). Nothing here imports DaCe.
"""

from __future__ import annotations

from stencilchain.program import ir
from stencilchain.program.bound_exprs import BoundExpr
from stencilchain.program.dimensions import Dimension
from stencilchain.steps.dace.family import DACE
from stencilchain.steps.settings import DataLayout

__all__ = [
    "bound_parameters",
    "bound_symbol",
    "check_names",
    "field_bound_symbol",
    "field_bounds",
    "field_params",
    "has_stride_symbol",
    "index_symbol",
    "local_prefix",
    "program_dims",
    "size_symbol",
    "stride_symbol",
    "symbol_names",
    "temporary_layouts",
]


def size_symbol(dim: Dimension) -> str:
    """The int64 symbol holding the size of `dim` (shared by every field over it)."""
    return f"n_{dim.name}"


def stride_symbol(field: str, axis: int) -> str:
    """The int64 symbol holding the stride, in elements, of axis `axis` of `field`."""
    return f"{field}_s{axis}"


def index_symbol(dim: Dimension) -> str:
    """The map parameter iterating over `dim`."""
    return f"i_{dim.name}"


def bound_symbol(param: str | BoundExpr, dim: Dimension) -> str:
    """The int64 symbol holding integer scalar parameter `param` (or an integer expression
    of them, named by `BoundExpr.symbol`) resolved as a domain bound along `dim` (a negative
    value counted from the end; the shim computes it): DaCe takes map ranges and interstate
    conditions in symbols, and scalars are arguments."""
    name = param.symbol if isinstance(param, BoundExpr) else param
    return f"{name}_bound_{dim.name}"


def bound_parameters(program: ir.Program) -> list[tuple[str | BoundExpr, Dimension]]:
    """The (parameter, dimension) pairs of the program's domain bounds given by
    parameters, in order of first appearance."""
    pairs: list[tuple[str | BoundExpr, Dimension]] = []
    for call in program.calls:
        for dd in call.domain.dims:
            for b in (*dd.starts, *dd.stops):
                if b.param is not None and (b.param, dd.dim) not in pairs:
                    pairs.append((b.param, dd.dim))
    return pairs


def field_bound_symbol(bound: ir.Bound, dim: Dimension) -> str:
    """The int64 symbol holding the start or the end of field `bound.field`'s range along
    `dim` (`sc.start_of`, `sc.end_of`): in a program whose fields all span the index
    space, 0 or the size, which the shim passes; a symbol, not the size itself, so that
    DaCe does not judge a domain that the call's checks refuse at run time (one reading
    past the end of a field as long as the bound's) out of bounds when it builds the SDFG.
    A program specialised for fields over their own ranges has none (program/field_bounds.py)."""
    return f"{bound.field}_{'end' if bound.from_end else 'start'}_{dim.name}"


def field_bounds(program: ir.Program) -> list[tuple[ir.Bound, Dimension]]:
    """The domain bounds of the program counted from a field's range, one per symbol
    (`field_bound_symbol`, value 0), in order of first appearance."""
    found: dict[str, tuple[ir.Bound, Dimension]] = {}
    for call in program.calls:
        for dd in call.domain.dims:
            for b in (*dd.starts, *dd.stops):
                if b.field is not None:
                    found.setdefault(
                        field_bound_symbol(b, dd.dim),
                        (ir.Bound(0, b.from_end, field=b.field), dd.dim),
                    )
    return list(found.values())


def field_params(program: ir.Program) -> list[tuple[str, ir.FieldType]]:
    """The field parameters of `program` with their types, in order."""
    return [(p.name, p.type) for p in program.params if isinstance(p.type, ir.FieldType)]


def program_dims(program: ir.Program) -> list[Dimension]:
    """The dimensions of the program's field parameters, in order of first appearance."""
    dims: list[Dimension] = []
    for _, ftype in field_params(program):
        dims += [d for d in ftype.dims if d not in dims]
    return dims


def has_stride_symbol(ftype: ir.FieldType, axis: int, layout: DataLayout) -> bool:
    """Whether axis `axis` of a field parameter has a stride symbol (not the constant 1)."""
    return not (layout is DataLayout.UNIT_STRIDE and axis == len(ftype.dims) - 1)


def temporary_layouts(program: ir.Program) -> dict[str, str]:
    """Each temporary over the dimensions of a field parameter -> the first such parameter:
    with `DataLayout.STRIDED`, the temporary is dense with its axes ordered like that
    parameter's strides (GTFN's rule), so that loops ordered by the parameters' strides
    also stream the temporaries (its strides are symbols, `stride_symbol`, that the shim
    computes); the others are dense in C order."""
    layouts = {}
    for temporary in program.temporaries:
        dims = program.field_type(temporary.name).dims
        like = next((name for name, t in field_params(program) if t.dims == dims), None)
        if like is not None:
            layouts[temporary.name] = like
    return layouts


def symbol_names(program: ir.Program, data_layout: DataLayout) -> tuple[str, ...]:
    """The int64 symbols of the program's SDFG: sizes (per dimension, in order of first
    appearance), then strides (per field parameter, per axis; then per temporary laid out
    like a parameter, `temporary_layouts`), then the parameter bounds (`bound_symbol`)."""
    sizes = [size_symbol(d) for d in program_dims(program)]
    strides = [
        stride_symbol(name, axis)
        for name, ftype in field_params(program)
        for axis in range(len(ftype.dims))
        if has_stride_symbol(ftype, axis, data_layout)
    ]
    if data_layout is DataLayout.STRIDED:
        strides += [
            stride_symbol(name, axis)
            for name in temporary_layouts(program)
            for axis in range(len(program.field_type(name).dims))
        ]
    bounds = [bound_symbol(param, dim) for param, dim in bound_parameters(program)]
    bounds += [field_bound_symbol(b, dim) for b, dim in field_bounds(program)]
    return (*sizes, *strides, *bounds)


def check_names(program: ir.Program, data_layout: DataLayout) -> None:
    """Parameter names become C++ names and share a namespace with the generated symbols:
    a ValueError for the first that is a generated symbol or reserved (the family's
    `reserved_names`: `SDFG_RESERVED` of the one list in `stencilchain.program.names`)."""
    generated = {
        *symbol_names(program, data_layout),
        *(index_symbol(d) for d in program_dims(program)),
    }
    for param in program.params:
        problem = None
        if param.name in generated:
            problem = "is also the name of a generated symbol"
        else:
            problem = DACE.reserved_names.problem(param.name)
        if problem is not None:
            raise ValueError(
                f"program {program.name}(): parameter '{param.name}' {problem}; the DaCe "
                f"translation uses parameter names as names in the SDFG and its C++ "
                f"(sizes are n_<dim>, strides <name>_s<axis>, indices i_<dim>); rename it"
            )


def local_prefix(program: ir.Program, data_layout: DataLayout) -> str:
    """A prefix for the tasklets' connectors and temporaries that no parameter or symbol
    starts with: they are C++ variables in the scope where the arrays are visible."""
    taken = [
        *(p.name for p in (*program.params, *program.temporaries)),
        *symbol_names(program, data_layout),
        *(index_symbol(d) for d in program_dims(program)),
    ]
    prefix, n = "sc_", 0
    while any(name.startswith(prefix) for name in taken):
        prefix, n = f"sc{n}_", n + 1
    return prefix
