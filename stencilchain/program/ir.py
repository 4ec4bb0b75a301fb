"""The program IR: frozen dataclasses with a canonical serialization and a fingerprint.

The expression nodes, their types and the one way to walk them are in program/ir_nodes.py
and named here too (`ir.Shift`, `ir.ExprVisitor`), as are `ir.Bound` and `ir.Interval`
(program/intervals.py). A `Program` is a sequence of `ProgramCall`s of `FieldOperatorDef`s and
`ScanOperatorDef`s (column scans). A call writes program
parameters or makes `temporaries`: program-local fields, written once by the call that
makes them and read by later calls, that the backend allocates. A field operator's
body is an expression tree evaluated pointwise over its call's domain; `Shift` reads
its operand at an offset. Every expression node carries its `type`.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Callable, Mapping
from typing import Any

from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.hashing import sha256_of
from stencilchain.program.intervals import Bound, Interval
from stencilchain.program.ir_nodes import (
    ARITHMETIC_OPS,
    BINARY_MATH_FUNCTIONS,
    BINARY_OPS,
    COMPARISON_OPS,
    EXPR_NODES,
    INTEGER_OPS,
    LOGICAL_OPS,
    LOWERED_WHEN_TRACED,
    MATH_FUNCTIONS,
    NEIGHBOR_REDUCTIONS,
    OP_SYMBOLS,
    PREDICATE_FUNCTIONS,
    UNARY_OPS,
    Binary,
    Broadcast,
    Call,
    Cast,
    ConcatWhere,
    DynamicShift,
    Expr,
    ExprVisitor,
    FieldType,
    Index,
    Literal,
    LocalSlot,
    MakeTuple,
    MathCall,
    NeighborReduce,
    NeighborShift,
    Ref,
    ScanCall,
    Shift,
    TableType,
    TupleGet,
    TupleType,
    Type,
    Unary,
    Where,
    children,
    map_children,
)
from stencilchain.program.records import frozen

# --- definitions -----------------------------------------------------------------


@frozen
class Param:
    """A parameter of a field operator or program: its name and type."""

    name: str
    type: FieldType | ScalarType


@frozen
class FieldOperatorDef:
    """A traced field operator: its parameters and the expression it returns."""

    name: str
    params: tuple[Param, ...]
    body: Expr

    @property
    def return_type(self) -> FieldType | TupleType:
        assert isinstance(self.body.type, (FieldType, TupleType))
        return self.body.type


@frozen
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


@frozen
class Window:
    """Reads that happen only where a branch of a concat_where is selected: at the points
    `p` of the call's domain with `p + shift` in `interval` (`shift`: the offset of the point
    where the concat_where is evaluated), each reading field `field` from `p + shift + lo`
    to `p + shift + hi`. In a program specialised for its arguments' ranges, `range` is the
    (start, gap) of the field's own range `[start, size - gap)` that the reads must stay
    inside (program/own_ranges.py); (0, 0), the array, otherwise."""

    interval: Interval
    shift: int
    reads: tuple[int, int]
    field: str = ""
    range: tuple[int, int] = (0, 0)

    def resolve(
        self, start: int, stop: int, size: int, scalars: Mapping[str, Any] | None = None
    ) -> tuple[int, int] | None:
        """The evaluation points `[ws, we)` where the branch is selected for a domain
        `[start, stop)`, or None when there are none (`scalars`: the values of the
        parameters its bounds name)."""
        lo, hi = self.interval.resolve(size, scalars)
        ws = start + self.shift if lo is None else max(start + self.shift, lo)
        we = stop + self.shift if hi is None else min(stop + self.shift, hi)
        return (ws, we) if ws < we else None


@frozen
class OwnRange:
    """The reads a call makes of argument `name` along one dimension (from `lo` below to
    `hi` above each point of its domain), which must stay inside that argument's own range
    `[start, size - gap)`: `size` is the largest end of any argument along the dimension
    (a program specialised for its arguments' ranges, program/own_ranges.py)."""

    name: str
    lo: int
    hi: int
    start: int
    gap: int


@frozen
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
    # per field read along this dimension (a parameter or a temporary): (name, lo, hi),
    # how far below and above each point the call reads it (not part of what makes two
    # domains equal: the same box with the same checks)
    reads: tuple[tuple[str, int, int], ...] = dataclasses.field(default=(), compare=False)
    # in a program specialised for its arguments' ranges: the reads (and writes) that
    # must stay inside an argument's own range (those of windows: `Window.range`)
    own: tuple[OwnRange, ...] = ()
    # inferred (not given) in a call's domain: a program specialised for its arguments'
    # ranges narrows it to them even where the call gives its range along another
    # dimension (not part of the canonical IR: the same program)
    inferred: bool = dataclasses.field(default=False, compare=False, metadata={"canonical": False})
    # every window of the call along this dimension, also those whose reads stay inside
    # the halo (so inside every field spanning the index space): a program specialised
    # for its arguments' ranges checks those of fields over their own ranges (not part of
    # the canonical IR: derived from the program)
    branch_reads: tuple[Window, ...] = dataclasses.field(
        default=(), compare=False, metadata={"canonical": False}
    )

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
            text += f" reading {w.field} at {self.dim.name}{w.reads[0]:+d}..{self.dim.name}{w.reads[1]:+d}"
            text += f" where {self.dim.name}{w.shift:+d} in {w.interval!r}"
        return text


@frozen
class Domain:
    """The box a call runs over, one range per dimension, given or inferred."""

    dims: tuple[DimDomain, ...]
    explicit: bool

    def __repr__(self) -> str:
        kind = "explicit" if self.explicit else "inferred"
        return f"{{{', '.join(map(repr, self.dims))}}} ({kind})"


@frozen
class Lowered:
    """Where a call made by lowering the scans of a field-operator call (program/
    program_trace.py) got its domain: from the domain of that field-operator call
    (`domain`, its reads those of the whole body), as the domain of the scan `scan` read at
    `offsets` (in `branch`, see scan_lowering.scan_domain) or of that scan's arguments, or
    (`scan` None) as that domain itself, for the call that reads the scans' results. A
    program specialised for its arguments' ranges narrows `domain` and derives the call's
    domain from it again (program/own_ranges.py)."""

    domain: Domain
    scan: str | None = None
    offsets: tuple[tuple[Dimension, tuple[int, int]], ...] = ()
    branch: tuple[Interval, int] | None = None


@frozen
class ProgramCall:
    """`callee(*args, out=outs, domain=domain)`; args are `Ref`s to program params or `Literal`s."""

    callee: str
    args: tuple[Expr, ...]
    outs: tuple[str, ...]
    domain: Domain
    # made by lowering a field-operator call's scans: how its domain was found (not part
    # of the canonical IR: the same program)
    lowered: Lowered | None = dataclasses.field(
        default=None, compare=False, metadata={"canonical": False}
    )


@frozen
class Program:
    """`params` are the caller's arguments; `temporaries` (fields only) are allocated by
    the backend, over the sizes of the parameters' dimensions, and made by calls."""

    name: str
    params: tuple[Param, ...]
    field_operators: tuple[FieldOperatorDef, ...]
    calls: tuple[ProgramCall, ...]
    temporaries: tuple[Param, ...] = ()
    scan_operators: tuple[ScanOperatorDef, ...] = ()
    # specialised for its arguments' ranges (program/own_ranges.py): per field parameter
    # whose range is not the whole index space, per axis the (start, gap) of its range
    # `[start, size - gap)`; empty for a program whose fields all span `[0, size)`
    ranges: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = ()

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
        from stencilchain.program.pretty import format_program  # for a reader, not tracing

        return format_program(self)


@functools.lru_cache(maxsize=256)
def _fingerprint(canonical: str) -> str:
    return sha256_of("stencilchain.ir/2", canonical)


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def _field_names(cls: type) -> tuple[str, ...] | None:
    """The field names of the dataclass `cls` (None for another type), looked up once per
    type: the serialization of a program visits hundreds of nodes of a few types. A field
    whose metadata says `"canonical": False` is not part of it (a Dimension's `base`: the
    IR past the tracer holds no staggered dimension, program/staggered.py)."""
    try:
        return _FIELD_NAMES[cls]
    except KeyError:
        names = None
        if dataclasses.is_dataclass(cls):
            names = tuple(
                f.name for f in dataclasses.fields(cls) if f.metadata.get("canonical", True)
            )
        return _FIELD_NAMES.setdefault(cls, names)


# How a node of a dataclass type is written: the JSON text of its type's name, the JSON
# text of its field names in sorted order with, for each, its position among the fields
# (the order they are visited in), and what reads all its fields. Made once per type.
_Layout = tuple[str, tuple[tuple[str, int], ...], Callable[[Any], tuple[Any, ...]]]
_LAYOUTS: dict[type, _Layout | None] = {}


def _layout(cls: type, quote: Callable[[str], str]) -> _Layout | None:
    try:
        return _LAYOUTS[cls]
    except KeyError:
        names = _field_names(cls)
        layout = None
        if names is not None:
            keys = tuple((quote(name), k) for name, k in sorted(zip(names, range(len(names)))))
            layout = (quote(cls.__name__), keys, _getter(names))
        return _LAYOUTS.setdefault(cls, layout)


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """What reads the fields `names` of a node, as a tuple in their order."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        name = names[0]
        return lambda node: (getattr(node, name),)
    return lambda node: ()


class _Encoder:
    """The canonical JSON text of a node: a dataclass is `["Type",{fields}]` (keys sorted,
    no spaces), a float `{"float":"<hex>"}`, a tuple a list, a string as JSON writes it
    (ASCII). Expressions are written once each, in a table (`"exprs"`) that lists them
    children first in the order they are first met (fields in their declared order), and
    referred to by their position there (`{"e": n}`): equal expressions have one entry
    however many objects hold them, so the text is the same for a tree and for a DAG
    that shares its sub-expressions, and as long as the DAG (docs/adr/0056). The text is
    written directly, not built as values for `json.dumps` (ADR 0064)."""

    def __init__(self) -> None:
        from json.encoder import encode_basestring_ascii  # `import stencilchain` needs no JSON

        self.quote: Callable[[str], str] = encode_basestring_ascii
        self.table: list[str] = []
        self.positions: dict[str, int] = {}
        self.by_id: dict[int, tuple[Any, int]] = {}

    def encode(self, value: Any) -> str:
        kind = type(value)
        if kind is str:
            return self.quote(value)
        if kind is int:
            return int.__repr__(value)
        if kind is tuple:
            return "[" + ",".join([self.encode(v) for v in value]) + "]"
        if isinstance(value, EXPR_NODES):
            return '{"e":' + str(self.expression(value)) + "}"
        layout = _layout(kind, self.quote)
        if layout is not None:
            return self.node(value, layout)
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return self.quote(value)
        if isinstance(value, int):
            return int.__repr__(value)
        if isinstance(value, float):
            return '{"float":' + self.quote(value.hex()) + "}"
        if isinstance(value, tuple):
            return "[" + ",".join([self.encode(v) for v in value]) + "]"
        raise TypeError(f"cannot serialize {kind.__name__} in the IR")

    def node(self, value: Any, layout: _Layout) -> str:
        """`["Type",{"field":value,...}]`, the fields encoded in their declared order (by
        `map`, which adds no Python frame: a deep expression recurses through `encode` and
        `expression` only, two frames a level)."""
        name, keys, fields = layout
        texts = tuple(map(self.encode, fields(value)))
        return "[" + name + ",{" + ",".join([key + ":" + texts[k] for key, k in keys]) + "}]"

    def expression(self, expr: Expr) -> int:
        """The position of `expr` in the table (each object looked at once)."""
        known = self.by_id.get(id(expr))
        if known is not None:
            return known[1]
        kind = type(expr)
        name, keys, fields = _layout(kind, self.quote) or (
            self.quote(kind.__name__),
            (),
            _getter(()),
        )
        texts = tuple(map(self.encode, fields(expr)))  # as `node` does, one frame less
        text = "[" + name + ",{" + ",".join([key + ":" + texts[k] for key, k in keys]) + "}]"
        position = self.positions.get(text)
        if position is None:
            position = self.positions[text] = len(self.table)
            self.table.append(text)
        self.by_id[id(expr)] = (expr, position)  # the node kept alive: its id stays its own
        return position


def canonical_json(node: Any) -> str:
    encoder = _Encoder()
    top = encoder.encode(node)
    return "{" + f'"exprs":[{",".join(encoder.table)}],"node":{top}' + "}"


# the IR's names, its expression nodes' (program/ir_nodes.py) and bounds' too
__all__ = [
    "ARITHMETIC_OPS",
    "BINARY_MATH_FUNCTIONS",
    "BINARY_OPS",
    "COMPARISON_OPS",
    "EXPR_NODES",
    "INTEGER_OPS",
    "LOGICAL_OPS",
    "LOWERED_WHEN_TRACED",
    "MATH_FUNCTIONS",
    "NEIGHBOR_REDUCTIONS",
    "OP_SYMBOLS",
    "PREDICATE_FUNCTIONS",
    "UNARY_OPS",
    "Binary",
    "Bound",
    "Broadcast",
    "Call",
    "Cast",
    "ConcatWhere",
    "DimDomain",
    "Domain",
    "DynamicShift",
    "Expr",
    "ExprVisitor",
    "FieldOperatorDef",
    "FieldType",
    "Index",
    "Interval",
    "Literal",
    "LocalSlot",
    "Lowered",
    "MakeTuple",
    "MathCall",
    "NeighborReduce",
    "NeighborShift",
    "OwnRange",
    "Param",
    "Program",
    "ProgramCall",
    "Ref",
    "ScanCall",
    "ScanOperatorDef",
    "Shift",
    "TableType",
    "TupleGet",
    "TupleType",
    "Type",
    "Unary",
    "Where",
    "Window",
    "canonical_json",
    "children",
    "map_children",
]
