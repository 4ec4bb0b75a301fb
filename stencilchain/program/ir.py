"""The program IR: frozen dataclasses with a canonical serialization and a fingerprint.

A `Program` is a sequence of `ProgramCall`s of `FieldOperatorDef`s and
`ScanOperatorDef`s (column scans). A call writes program
parameters or makes `temporaries`: program-local fields, written once by the call that
makes them and read by later calls, that the backend allocates. A field operator's
body is an expression tree evaluated pointwise over its call's domain; `Shift` reads
its operand at an offset. Every expression node carries its `type`.

`EXPR_NODES`, `children`, `map_children` and `ExprVisitor` are the one way to walk
expressions: a new node class is added to `Expr` here and gets one `visit_<ClassName>`
method in each backend's visitor (tests/program/test_ir_coverage.py names what is missing).
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar, Union

from stencilchain.program.connectivity import Connectivity
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.hashing import sha256_of
from stencilchain.program.intervals import Bound as Bound
from stencilchain.program.intervals import Interval as Interval

# --- types -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class FieldType:
    """A field over `dims` (in array-axis order) with elements of `dtype`."""

    dims: tuple[Dimension, ...]
    dtype: ScalarType

    def __repr__(self) -> str:
        return f"Field[[{', '.join(d.name for d in self.dims)}], {self.dtype}]"


@dataclasses.dataclass(frozen=True)
class TableType(FieldType):
    """The type of a connectivity's neighbour table (`sc.Table[C2E]`): an integer field
    over `(entity, local)`, e.g. `(Cell, C2EDim)`, holding indices along the source
    dimension (-1: no neighbour, where the connectivity allows skip values). Checked like
    any field argument, and its entries are checked to lie in range."""

    connectivity: Connectivity

    def __repr__(self) -> str:
        return f"Table[{self.connectivity.name}, {self.dtype}]"


@dataclasses.dataclass(frozen=True)
class TupleType:
    """The type of a tuple return: one field per element."""

    elems: tuple[FieldType, ...]

    def __repr__(self) -> str:
        return f"tuple[{', '.join(map(repr, self.elems))}]"


Type = Union[FieldType, ScalarType, TupleType]


# --- expressions ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Literal:
    """A constant of a scalar type."""

    value: bool | int | float
    type: ScalarType


@dataclasses.dataclass(frozen=True)
class Ref:
    """A parameter of the enclosing field operator (or program)."""

    name: str
    type: FieldType | ScalarType


@dataclasses.dataclass(frozen=True)
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


@dataclasses.dataclass(frozen=True)
class Unary:
    """A unary operator (`-`, `~`) applied to an expression."""

    op: str
    operand: Expr
    type: FieldType | ScalarType


@dataclasses.dataclass(frozen=True)
class Binary:
    """A binary operator (arithmetic, comparison, logic) of two expressions."""

    op: str
    left: Expr
    right: Expr
    type: FieldType | ScalarType


@dataclasses.dataclass(frozen=True)
class Where:
    """`sc.where(cond, true, false)`: the choice of two expressions, point by point."""

    cond: Expr
    true: Expr
    false: Expr
    type: FieldType | ScalarType


@dataclasses.dataclass(frozen=True)
class MathCall:
    """A math function (`sqrt`, `minimum`, ...) of its arguments."""

    fn: str
    args: tuple[Expr, ...]
    type: FieldType | ScalarType


@dataclasses.dataclass(frozen=True)
class Cast:
    """`sc.astype`: an expression converted to another dtype."""

    expr: Expr
    type: FieldType | ScalarType


@dataclasses.dataclass(frozen=True)
class Call:
    """A call of another field operator of the same program, by name."""

    callee: str
    args: tuple[Expr, ...]
    type: FieldType | TupleType


@dataclasses.dataclass(frozen=True)
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


@dataclasses.dataclass(frozen=True)
class Broadcast:
    """`expr` (a scalar, or a field over a subset of `type.dims`) as a field over
    `type.dims`: its value at a point is `expr`'s at that point's indices along `expr`'s own
    dimensions. The one place where the dimensions of an expression change."""

    expr: Expr
    type: FieldType


@dataclasses.dataclass(frozen=True)
class Index:
    """`sc.index(dim)`: the index along `dim` at each point, an int64 field over `(dim,)`
    (NumPy's index dtype). Shifted, it is the index of the point it is read at."""

    dim: Dimension
    type: FieldType


@dataclasses.dataclass(frozen=True)
class NeighborShift:
    """`expr(C2E)` or `expr(C2E[slot])`: `expr` (a field over the connectivity's source
    dimension) read at the neighbours that the connectivity's table lists. The source
    dimension becomes the table's entity dimension, in place; without `slot` the local
    dimension is appended (a local field). A missing neighbour (-1) reads as 0 (False)."""

    expr: Expr
    connectivity: Connectivity
    slot: int | None
    type: FieldType


# The reductions over a local dimension (NeighborReduce.op).
NEIGHBOR_REDUCTIONS = ("sum", "max", "min")


@dataclasses.dataclass(frozen=True)
class NeighborReduce:
    """`sc.neighbor_sum(expr, axis=C2EDim)` (op "sum"), `sc.max_over`, `sc.min_over`: the
    reduction of `expr` over the local dimension `axis`, skipping the slots that the table
    of the program's connectivity over `axis` marks missing (-1)."""

    op: str
    expr: Expr
    axis: Dimension
    type: FieldType


@dataclasses.dataclass(frozen=True)
class ConcatWhere:
    """`sc.concat_where`: `true` at the points whose index along `dim` lies in one of
    `intervals`, `false` elsewhere. Each branch is evaluated only where it is selected, so
    its reads happen only there (`Window`s of the call's domain)."""

    dim: Dimension
    intervals: tuple[Interval, ...]
    true: Expr
    false: Expr
    type: FieldType


@dataclasses.dataclass(frozen=True)
class MakeTuple:
    """A tuple of expressions (a tuple-valued field operator's result)."""

    elems: tuple[Expr, ...]
    type: TupleType


@dataclasses.dataclass(frozen=True)
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


# --- definitions -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Param:
    """A parameter of a field operator or program: its name and type."""

    name: str
    type: FieldType | ScalarType


@dataclasses.dataclass(frozen=True)
class FieldOperatorDef:
    """A traced field operator: its parameters and the expression it returns."""

    name: str
    params: tuple[Param, ...]
    body: Expr

    @property
    def return_type(self) -> FieldType | TupleType:
        assert isinstance(self.body.type, (FieldType, TupleType))
        return self.body.type


@dataclasses.dataclass(frozen=True)
class ScanOperatorDef:
    """A scan along `axis`: per column (every point of the other dimensions), a state
    starting at `init` is carried level by level, from the domain's start (`forward`) or
    from its stop - 1, and its value at each level is the result there.

    `params` are fields over the result's dimensions or scalars; in `body` (one expression
    per state element, the new state) each is a scalar `Ref` to its value at the current
    level, and `state` names the scalar `Ref`s of the previous state. `tuple_state` says
    whether the state (and the result) is a tuple or one scalar.
    """

    name: str
    params: tuple[Param, ...]
    axis: Dimension
    forward: bool
    init: tuple[Literal, ...]
    state: tuple[Param, ...]
    body: tuple[Expr, ...]
    dims: tuple[Dimension, ...]
    tuple_state: bool

    @property
    def return_type(self) -> FieldType | TupleType:
        types = tuple(FieldType(self.dims, lit.type) for lit in self.init)
        return TupleType(types) if self.tuple_state else types[0]


@dataclasses.dataclass(frozen=True)
class Window:
    """Reads that happen only where a branch of a concat_where is selected: at the points
    `p` of the call's domain with `p + shift` in `interval` (`shift`: the offset of the point
    where the concat_where is evaluated), each reading `p + shift + lo` to `p + shift + hi`."""

    interval: Interval
    shift: int
    reads: tuple[int, int]

    def resolve(self, start: int, stop: int, size: int) -> tuple[int, int] | None:
        """The evaluation points `[ws, we)` where the branch is selected for a domain
        `[start, stop)`, or None when there are none."""
        lo, hi = self.interval.resolve(size)
        ws = start + self.shift if lo is None else max(start + self.shift, lo)
        we = stop + self.shift if hi is None else min(stop + self.shift, hi)
        return (ws, we) if ws < we else None


@dataclasses.dataclass(frozen=True)
class DimDomain:
    """The range of one dimension: from max(starts) to min(stops).

    `halo` is how far the call reads below the start and above the stop; `windows` are
    the reads that happen only where a concat_where's branch is selected. A domain whose
    halo or windows leave the array is an error at call time.
    """

    dim: Dimension
    starts: tuple[Bound, ...]
    stops: tuple[Bound, ...]
    halo: tuple[int, int]
    windows: tuple[Window, ...] = ()

    def resolve(self, size: int, scalars: Mapping[str, Any] | None = None) -> tuple[int, int]:
        """[start, stop) for this size; `scalars` gives the values of parameter bounds."""
        start = max(b.resolve(size, scalars) for b in self.starts)
        stop = min(b.resolve(size, scalars) for b in self.stops)
        return start, stop

    def __repr__(self) -> str:
        def side(bounds: tuple[Bound, ...], fn: str) -> str:
            return repr(bounds[0]) if len(bounds) == 1 else f"{fn}({', '.join(map(repr, bounds))})"

        text = f"{self.dim.name}: [{side(self.starts, 'max')}, {side(self.stops, 'min')})"
        for w in self.windows:
            text += f" reading {self.dim.name}{w.reads[0]:+d}..{self.dim.name}{w.reads[1]:+d}"
            text += f" where {self.dim.name}{w.shift:+d} in {w.interval!r}"
        return text


@dataclasses.dataclass(frozen=True)
class Domain:
    """The box a call runs over, one range per dimension, given or inferred."""

    dims: tuple[DimDomain, ...]
    explicit: bool

    def __repr__(self) -> str:
        kind = "explicit" if self.explicit else "inferred"
        return f"{{{', '.join(map(repr, self.dims))}}} ({kind})"


@dataclasses.dataclass(frozen=True)
class ProgramCall:
    """`callee(*args, out=outs, domain=domain)`; args are `Ref`s to program params or `Literal`s."""

    callee: str
    args: tuple[Expr, ...]
    outs: tuple[str, ...]
    domain: Domain


@dataclasses.dataclass(frozen=True)
class Program:
    """`params` are the caller's arguments; `temporaries` (fields only) are allocated by
    the backend, over the sizes of the parameters' dimensions, and made by calls."""

    name: str
    params: tuple[Param, ...]
    field_operators: tuple[FieldOperatorDef, ...]
    calls: tuple[ProgramCall, ...]
    temporaries: tuple[Param, ...] = ()
    scan_operators: tuple[ScanOperatorDef, ...] = ()

    def field_operator(self, name: str) -> FieldOperatorDef:
        for fop in self.field_operators:
            if fop.name == name:
                return fop
        raise KeyError(name)

    def scan_operator(self, name: str) -> ScanOperatorDef | None:
        """The scan operator a call names, or None when it names a field operator."""
        for scan in self.scan_operators:
            if scan.name == name:
                return scan
        return None

    def field_type(self, name: str) -> FieldType:
        """The type of the field parameter or temporary called `name`."""
        for p in (*self.params, *self.temporaries):
            if p.name == name and isinstance(p.type, FieldType):
                return p.type
        raise KeyError(name)

    def table_of(self, connectivity: str) -> str | None:
        """The name of the table parameter of the connectivity called `connectivity`."""
        for p in self.params:
            if isinstance(p.type, TableType) and p.type.connectivity.name == connectivity:
                return p.name
        return None

    def table_over(self, local: Dimension) -> str | None:
        """The name of the table parameter whose connectivity's slots `local` numbers."""
        for p in self.params:
            if isinstance(p.type, TableType) and p.type.connectivity.local == local:
                return p.name
        return None

    def is_temporary(self, name: str) -> bool:
        return any(t.name == name for t in self.temporaries)

    @functools.cached_property
    def canonical(self) -> str:
        """A deterministic text serialization: equal programs give equal text."""
        return canonical_json(self)

    def fingerprint(self) -> str:
        """sha256 of the canonical serialization: the same in every process."""
        return _fingerprint(self.canonical)

    def __str__(self) -> str:
        from stencilchain.program.pretty import format_program

        return format_program(self)


@functools.lru_cache(maxsize=256)
def _fingerprint(canonical: str) -> str:
    return sha256_of("stencilchain.ir/1", canonical)


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def _field_names(cls: type) -> tuple[str, ...] | None:
    """The field names of the dataclass `cls` (None for another type), looked up once per
    type: the serialization of a program visits hundreds of nodes of a few types."""
    try:
        return _FIELD_NAMES[cls]
    except KeyError:
        names = None
        if dataclasses.is_dataclass(cls):
            names = tuple(f.name for f in dataclasses.fields(cls))
        return _FIELD_NAMES.setdefault(cls, names)


def _encode(value: Any) -> Any:
    names = _field_names(type(value))
    if names is not None:
        return [type(value).__name__, {n: _encode(getattr(value, n)) for n in names}]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return {"float": value.hex()}
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    raise TypeError(f"cannot serialize {type(value).__name__} in the IR")


def canonical_json(node: Any) -> str:
    import json  # on first use: `import stencilchain` needs no JSON

    return json.dumps(_encode(node), sort_keys=True, separators=(",", ":"))
