"""The expressions of the IR: their types, one frozen dataclass per node class, the
operators and math functions they name, and the one way to walk them.

`EXPR_NODES`, `children`, `map_children` and `ExprVisitor` are the one way to walk
expressions: a new node class is added to `Expr` here, gets its row in
program/node_traits.py and one `visit_<ClassName>` method in each backend's visitor
(tests/program/test_ir_coverage.py names what is missing). Everything here is also
`ir.<name>` (program/ir.py re-exports it).
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar, Union

from stencilchain.program.connectivity import Connectivity
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.intervals import Interval
from stencilchain.program.records import expr_node, frozen

# --- types -------------------------------------------------------------------


@frozen
class FieldType:
    """A field over `dims` (in array-axis order) with elements of `dtype`."""

    dims: tuple[Dimension, ...]
    dtype: ScalarType

    def __repr__(self) -> str:
        return f"Field[[{', '.join(d.name for d in self.dims)}], {self.dtype}]"


@frozen
class TableType(FieldType):
    """The type of a connectivity's neighbour table (`sc.Table[C2E]`): an integer field
    over `(entity, local)`, e.g. `(Cell, C2EDim)`, holding indices along the source
    dimension (-1: no neighbour, where the connectivity allows skip values). Checked like
    any field argument, and its entries are checked to lie in range."""

    connectivity: Connectivity

    def __repr__(self) -> str:
        return f"Table[{self.connectivity.name}, {self.dtype}]"


@frozen
class TupleType:
    """The type of a tuple return: one field per element."""

    elems: tuple[FieldType, ...]

    def __repr__(self) -> str:
        return f"tuple[{', '.join(map(repr, self.elems))}]"


Type = Union[FieldType, ScalarType, TupleType]


# --- expressions ---------------------------------------------------------------


@expr_node
class Literal:
    """A constant of a scalar type."""

    value: bool | int | float
    type: ScalarType


@expr_node
class Ref:
    """A parameter of the enclosing field operator (or program)."""

    name: str
    type: FieldType | ScalarType


@expr_node
class Shift:
    """`expr` read at `offsets` from the current point, e.g. f(I + 1)."""

    expr: Expr
    offsets: tuple[tuple[Dimension, int], ...]
    type: FieldType


# "not" is `~`: logical not of bool values, bitwise not of integers.
UNARY_OPS = ("neg", "not")
ARITHMETIC_OPS = ("add", "sub", "mul", "div", "pow")
# Integers only: floor division and remainder with Python's (NumPy's) floor semantics, and
# shifts; each has a defined result where C++ has none (docs/dsl.md, "Integers").
INTEGER_OPS = ("floordiv", "mod", "lshift", "rshift")
COMPARISON_OPS = ("eq", "ne", "lt", "le", "gt", "ge")
# Logical on bool values, bitwise on integers.
LOGICAL_OPS = ("and", "or", "xor")
BINARY_OPS = ARITHMETIC_OPS + INTEGER_OPS + COMPARISON_OPS + LOGICAL_OPS
# How each binary operator is written in the DSL (and in the IR's text form).
OP_SYMBOLS = {
    "add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**",
    "floordiv": "//", "mod": "%", "lshift": "<<", "rshift": ">>",
    "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
    "and": "&", "or": "|", "xor": "^",
}  # fmt: skip
# Named like NumPy's ufuncs (`gamma` is the Gamma function, C's tgamma); `power` is `**`.
MATH_FUNCTIONS = (
    "sqrt", "exp", "log", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2",
    "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "cbrt", "gamma",
    "abs", "minimum", "maximum", "floor", "ceil", "trunc", "fmod",
    "isnan", "isinf", "isfinite",
)  # fmt: skip
# The math functions of two arguments; every other one takes one.
BINARY_MATH_FUNCTIONS = ("minimum", "maximum", "arctan2", "fmod")
# The math functions whose value is bool (whatever the argument's dtype).
PREDICATE_FUNCTIONS = ("isnan", "isinf", "isfinite")


@expr_node
class Unary:
    """A unary operator (`-`, `~`) applied to an expression."""

    op: str
    operand: Expr
    type: FieldType | ScalarType


@expr_node
class Binary:
    """A binary operator (arithmetic, comparison, logic) of two expressions."""

    op: str
    left: Expr
    right: Expr
    type: FieldType | ScalarType


@expr_node
class Where:
    """`sc.where(cond, true, false)`: the choice of two expressions, point by point."""

    cond: Expr
    true: Expr
    false: Expr
    type: FieldType | ScalarType


@expr_node
class MathCall:
    """A math function (`sqrt`, `minimum`, ...) of its arguments."""

    fn: str
    args: tuple[Expr, ...]
    type: FieldType | ScalarType


@expr_node
class Cast:
    """`sc.astype`: an expression converted to another dtype."""

    expr: Expr
    type: FieldType | ScalarType


@expr_node
class Call:
    """A call of another field operator of the same program, by name."""

    callee: str
    args: tuple[Expr, ...]
    type: FieldType | TupleType


@expr_node
class ScanCall:
    """A call of a scan operator of the same program, by name, inside a field operator: the
    scan's result (a field, or a tuple of fields, over the scan's dimensions) at each point;
    `axis` and `forward` are the scan's.

    It lives only while a program is traced: `ProgramTrace.record_call` lowers it into
    program calls that make temporaries (the scan's arguments, then the scan), and a Ref
    to them, so no program and no backend holds one (`LOWERED_WHEN_TRACED`)."""

    callee: str
    args: tuple[Expr, ...]
    axis: Dimension
    forward: bool
    type: FieldType | TupleType


@expr_node
class Broadcast:
    """`expr` (a scalar, or a field over a subset of `type.dims`) as a field over
    `type.dims`: its value at a point is `expr`'s at that point's indices along `expr`'s own
    dimensions. The one place where the dimensions of an expression change."""

    expr: Expr
    type: FieldType


@expr_node
class Index:
    """`sc.index(dim)`: the index along `dim` at each point, an int64 field over `(dim,)`
    (NumPy's index dtype). Shifted, it is the index of the point it is read at."""

    dim: Dimension
    type: FieldType


@expr_node
class NeighborShift:
    """`expr(C2E)` or `expr(C2E[slot])`: `expr` (a field over the connectivity's source
    dimension) read at the neighbours that the connectivity's table lists. The source
    dimension becomes the table's entity dimension, in place; without `slot` the local
    dimension is appended (a local field). A missing neighbour (-1) reads as 0 (False)."""

    expr: Expr
    connectivity: Connectivity
    slot: int | None
    type: FieldType


@expr_node
class LocalSlot:
    """`expr[C2EDim(slot)]`: a local field (over the local dimension `axis`) read at one
    neighbour slot, a field over the other dimensions. The slot's value as `expr` has it:
    for `f(C2E)` a missing neighbour reads 0 as `f(C2E[slot])` does; a local field given as
    an argument is read as stored (the table is not consulted)."""

    expr: Expr
    axis: Dimension
    slot: int
    type: FieldType


@expr_node
class DynamicShift:
    """`expr(sc.as_offset(K, off))`: `expr` read at the index along `dim` moved by the
    integer field `offset` at each point (ICON's `as_offset(Koff, vertoffset)`). `offset` is
    a field parameter that the program passes one of its own arguments for, possibly plus
    or minus scalars (`off + 1`): its entries, moved by the scalars, are checked to keep
    every read inside the array before anything runs."""

    expr: Expr
    dim: Dimension
    offset: Expr
    type: FieldType


# The reductions over a local dimension (NeighborReduce.op).
NEIGHBOR_REDUCTIONS = ("sum", "max", "min")


@expr_node
class NeighborReduce:
    """`sc.neighbor_sum(expr, axis=C2EDim)` (op "sum"), `sc.max_over`, `sc.min_over`: the
    reduction of `expr` over the local dimension `axis`, skipping the slots that the table
    of the program's connectivity over `axis` marks missing (-1)."""

    op: str
    expr: Expr
    axis: Dimension
    type: FieldType


@expr_node
class ConcatWhere:
    """`sc.concat_where`: `true` at the points whose index along `dim` lies in one of
    `intervals`, `false` elsewhere. Each branch is evaluated only where it is selected, so
    its reads happen only there (`Window`s of the call's domain)."""

    dim: Dimension
    intervals: tuple[Interval, ...]
    true: Expr
    false: Expr
    type: FieldType


@expr_node
class MakeTuple:
    """A tuple of expressions (a tuple-valued field operator's result)."""

    elems: tuple[Expr, ...]
    type: TupleType


@expr_node
class TupleGet:
    """Element `index` of a tuple-valued expression."""

    expr: Expr
    index: int
    type: FieldType


Expr = Union[
    Literal,
    Ref,
    Shift,
    Unary,
    Binary,
    Where,
    MathCall,
    Cast,
    Call,
    ScanCall,
    Broadcast,
    Index,
    NeighborShift,
    NeighborReduce,
    LocalSlot,
    DynamicShift,
    ConcatWhere,
    MakeTuple,
    TupleGet,
]
# Every expression node class: the one list that visitors and the coverage test go by.
EXPR_NODES: tuple[type[Expr], ...] = typing.get_args(Expr)
# The nodes that only tracing makes and that the program trace lowers away: the visitors
# of the backends never see one (tests/program/test_ir_coverage.py exempts them there).
LOWERED_WHEN_TRACED: tuple[type[Expr], ...] = (ScanCall,)

R = TypeVar("R")


# --- one dispatch mechanism ----------------------------------------------------------


@functools.cache
def _sub_expressions(node: type) -> tuple[tuple[str, bool], ...]:
    """(field name, holds a tuple) of each field of `node` that holds an Expr or a tuple of
    Exprs, read from the dataclass annotations (once per class, on first use: not at
    import)."""
    hints = typing.get_type_hints(node)
    fields: list[tuple[str, bool]] = []
    for field in dataclasses.fields(node):
        hint = hints[field.name]
        if hint == Expr:
            fields.append((field.name, False))
        elif hint == tuple[Expr, ...]:
            fields.append((field.name, True))
    return tuple(fields)


def children(expr: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of a node, in field order."""
    node: type = type(expr)
    out: list[Expr] = []
    for name, many in _sub_expressions(node):
        value = getattr(expr, name)
        if many:
            out += value
        else:
            out.append(value)
    return tuple(out)


def map_children(expr: Expr, fn: Callable[[Expr], Expr]) -> Expr:
    """`expr` with `fn` applied to each direct sub-expression (`expr` itself when it has none)."""
    node: type = type(expr)
    fields = _sub_expressions(node)
    if not fields:
        return expr
    changes: dict[str, Any] = {}
    for name, many in fields:
        value = getattr(expr, name)
        changes[name] = tuple(fn(e) for e in value) if many else fn(value)
    return dataclasses.replace(expr, **changes)


class ExprVisitor(Generic[R]):
    """Dispatches `visit(expr, *args)` to the method `visit_<ClassName>(expr, *args)`.

    A subclass defines one method per node class it handles; the dispatch table is built
    once per visitor class. `unhandled()` lists the node classes a visitor lacks, so that a
    test can name them; visiting one of those is a TypeError that names both.
    """

    _dispatch: ClassVar[dict[type, Callable[..., Any]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table = {}
        for node in EXPR_NODES:
            method = getattr(cls, f"visit_{node.__name__}", None)
            if method is not None:
                table[node] = method
        cls._dispatch = table

    def visit(self, expr: Expr, *args: Any) -> R:
        try:
            method = self._dispatch[type(expr)]
        except KeyError:
            if type(expr) in LOWERED_WHEN_TRACED:
                raise TypeError(
                    f"internal error: {type(self).__name__} was given an IR node "
                    f"{type(expr).__name__}, which the program trace lowers into program calls "
                    "before any backend sees the program"
                ) from None
            raise TypeError(
                f"{type(self).__name__} does not handle the IR node {type(expr).__name__}; "
                f"define {type(self).__name__}.visit_{type(expr).__name__}"
            ) from None
        result: R = method(self, expr, *args)
        return result

    @classmethod
    def unhandled(cls) -> tuple[type[Expr], ...]:
        """The expression node classes this visitor has no `visit_<ClassName>` method for."""
        return tuple(node for node in EXPR_NODES if node not in cls._dispatch)
