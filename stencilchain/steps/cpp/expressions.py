"""The one C++ expression emitter of both families: IR expressions -> SSA statements.

Every operation becomes a `const T <prefix>N = ...;` statement in `statements`; literals
and reads are used in place. A node is emitted at a position (an offset per dimension from
the current point); shifts move it. How fields and scalars are read is the family's
(callbacks: GTFN indexes pointers, DaCe names a tasklet's connectors), and so are the
policy knobs: common-subexpression sharing, float literals in hex or shortest decimal,
tuples, and calls of field operators (GTFN without transforms). A concat_where's branches
are `if`/`else` blocks of their own statements: nothing of a branch runs where it is not
selected, and sharing reaches into a branch but never out of it.

The meaning is NumPy's exactly, on every compiler and without special flags: float32
stays float32 (literals are cast), integer `+ - *`, unary `-`, `abs` and `**` wrap around
(computed in the unsigned type, which C++ defines), minimum/maximum propagate NaN, casts
are static_casts. Where C++ has undefined behaviour NumPy has a value, and the emitted
code is guarded to give it: integer `//`, `%` and fmod by 0 give 0, MIN // -1 wraps to
MIN, shifts by a count outside [0, bits) give 0 (and -1 for `>>` of a negative value).

Longer than most modules: it is one visitor with a method per IR node, and the guards
above are the meaning of those methods, so they stay beside them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from stencilchain.errors import UnsupportedError
from stencilchain.program import ir
from stencilchain.program.connectivity import Connectivity
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.semantics import neighbor_identity
from stencilchain.steps.cpp.domain_checks import bound_value
from stencilchain.steps.cpp.literals import literal
from stencilchain.steps.cpp.signature import index_var


@dataclasses.dataclass(frozen=True)
class Absolute:
    """A position along a dimension given as an index (a C++ int64 expression) rather than
    an offset from the current point: where a neighbour table points, or a neighbour slot."""

    index: str


# A position: per dimension, an offset from the current point or an absolute index.
Pos = Mapping[Dimension, "int | Absolute"]
Position = tuple[tuple[Dimension, "int | Absolute"], ...]
# How a field parameter is read at a position.
FieldReader = Callable[[str, Pos], str]
# The C++ value of the entry of a connectivity's table at a position along its entity and
# local dimensions (an offset or an absolute index each): GTFN indexes the table's pointer,
# DaCe reads it like a field (a connector, gathered where the index is not a constant).
TableReader = Callable[[Connectivity, Pos], str]


@dataclasses.dataclass(frozen=True)
class MeshTables:
    """How neighbour reads reach the program's tables: `read` gives an entry's C++ value;
    `over` names, per local dimension, the connectivity whose table says which slots are
    missing."""

    read: TableReader
    over: Mapping[Dimension, Connectivity]

    @staticmethod
    def of(program: ir.Program, read: TableReader) -> MeshTables:
        over = {
            p.type.connectivity.local: p.type.connectivity
            for p in program.params
            if isinstance(p.type, ir.TableType)
        }
        return MeshTables(read, over)


def index_at(dim: Dimension, pos: Pos) -> str:
    """The C++ index along `dim` at `pos`: the loop index `i_<dim>` moved by an offset, or
    an absolute index."""
    amount = pos.get(dim, 0)
    if isinstance(amount, Absolute):
        return amount.index
    return index_var(dim) if amount == 0 else f"({index_var(dim)} + ({amount}))"


# How a scalar parameter is read.
ScalarReader = Callable[[str], str]
# The C++ value of a field-operator call at a position (GTFN without transforms).
CallWriter = Callable[[ir.Call, Pos, "ExpressionEmitter"], str]

# The namespace of the tuple type (std, or cuda::std on the GPU) that the program's prelude
# defines; used only with `tuples` on.
TUPLE_NAMESPACE = "sc_tuple_ns"

# C++ operators of the binary operations that are one infix operator: arithmetic,
# comparisons, and the logical operators on bool values.
INFIX = {
    **{op: ir.OP_SYMBOLS[op] for op in (*ir.ARITHMETIC_OPS, *ir.COMPARISON_OPS) if op != "pow"},
    "and": "&&",
    "or": "||",
    "xor": "!=",
}
# C++ operators of the logical operators on integers: bitwise.
BITWISE = {"and": "&", "or": "|", "xor": "^"}
_UNSIGNED = {"int32": "std::uint32_t", "int64": "std::uint64_t"}
# Nodes emitted in place: never bound to a name, so never shared.
_IN_PLACE = (ir.Literal, ir.Ref, ir.Shift, ir.Broadcast, ir.Index)


def dtype_of(t: ir.Type) -> ScalarType:
    """The element type of a field or scalar type."""
    if isinstance(t, ir.FieldType):
        return t.dtype
    if isinstance(t, ir.TupleType):
        raise TypeError(f"a tuple {t!r} has no single dtype")
    return t


def cpp_type(t: ir.Type) -> str:
    """The C++ type of one value of `t` (a tuple of the elements' types for a tuple)."""
    if isinstance(t, ir.TupleType):
        return f"{TUPLE_NAMESPACE}::tuple<{', '.join(e.dtype.cpp for e in t.elems)}>"
    return dtype_of(t).cpp


def wrapping(dtype: ScalarType, left: str, op: str, right: str) -> str:
    """`left op right` in the integer `dtype`, wrapping around like NumPy (in the unsigned
    type, where overflow is defined)."""
    unsigned = _UNSIGNED[dtype.name]
    return (
        f"static_cast<{dtype.cpp}>(static_cast<{unsigned}>({left}) {op} "
        f"static_cast<{unsigned}>({right}))"
    )


def _negated(dtype: ScalarType, a: str) -> str:
    return wrapping(dtype, "0", "-", a)


def _floordiv(dtype: ScalarType, a: str, b: str) -> str:
    """`a // b` rounded towards -inf; 0 for b == 0, and -a (wrapping) for b == -1, where
    C++'s `/` is undefined or overflows."""
    t = dtype.cpp
    rounded_down = f"((({a} % {b}) != 0 && (({a} < 0) != ({b} < 0))) ? 1 : 0)"
    return (
        f"({b} == 0 ? {t}(0) : {b} == -1 ? {_negated(dtype, a)} : "
        f"static_cast<{t}>({a} / {b} - {rounded_down}))"
    )


def _mod(dtype: ScalarType, a: str, b: str) -> str:
    """`a % b` with the sign of b; 0 for b == 0 and b == -1 (C++'s `%` is undefined there)."""
    t = dtype.cpp
    r = f"({a} % {b})"
    return (
        f"(({b} == 0 || {b} == -1) ? {t}(0) : "
        f"static_cast<{t}>(({r} != 0 && (({r} < 0) != ({b} < 0))) ? {r} + {b} : {r}))"
    )


def _shift_count_ok(dtype: ScalarType, b: str) -> str:
    bits = 8 * dtype.numpy.itemsize
    return f"(static_cast<{_UNSIGNED[dtype.name]}>({b}) < {bits}u)"


def _lshift(dtype: ScalarType, a: str, b: str) -> str:
    """`a << b` in the unsigned type (wrapping); 0 for a count outside [0, bits)."""
    t, u = dtype.cpp, _UNSIGNED[dtype.name]
    return (
        f"({_shift_count_ok(dtype, b)} ? static_cast<{t}>(static_cast<{u}>({a}) << {b}) : {t}(0))"
    )


def _rshift(dtype: ScalarType, a: str, b: str) -> str:
    """`a >> b`, arithmetic; for a count outside [0, bits) -1 if a < 0, else 0."""
    t = dtype.cpp
    return (
        f"({_shift_count_ok(dtype, b)} ? static_cast<{t}>({a} >> {b}) : "
        f"({a} < 0 ? {t}(-1) : {t}(0)))"
    )


# The C++ of each integer-only binary operation, from its dtype and its operands' C++.
INTEGER_OPERATIONS: dict[str, Callable[[ScalarType, str, str], str]] = {
    "floordiv": _floordiv,
    "mod": _mod,
    "lshift": _lshift,
    "rshift": _rshift,
}


def _integer_fmod(dtype: ScalarType, a: str, b: str) -> str:
    """C's `a % b` (truncated, the sign of a), 0 for b == 0 and b == -1, as numpy.fmod."""
    return f"(({b} == 0 || {b} == -1) ? {dtype.cpp}(0) : static_cast<{dtype.cpp}>({a} % {b}))"


def _abs(dtype: ScalarType, args: list[str]) -> str:
    (a,) = args
    if dtype.is_float:
        return f"std::fabs({a})"  # +0.0 for -0.0, as numpy.abs
    return f"({a} < 0 ? {wrapping(dtype, '0', '-', a)} : {a})"  # abs(min) wraps to min


def _pick(smaller: bool) -> Callable[[ScalarType, list[str]], str]:
    def pick(dtype: ScalarType, args: list[str]) -> str:
        a, b = args
        chosen = f"({b} < {a} ? {b} : {a})" if smaller else f"({a} < {b} ? {b} : {a})"
        if dtype.is_float:  # NaN propagates, as in numpy.minimum/maximum
            return f"(({a} != {a} || {b} != {b}) ? {a} + {b} : {chosen})"
        return chosen

    return pick


def _std(function: str) -> Callable[[ScalarType, list[str]], str]:
    def call(dtype: ScalarType, args: list[str]) -> str:
        return f"{function}({', '.join(args)})"

    return call


def _fmod(dtype: ScalarType, args: list[str]) -> str:
    a, b = args
    return f"std::fmod({a}, {b})" if dtype.is_float else _integer_fmod(dtype, a, b)


def _predicate(function: str, of_integers: bool) -> Callable[[ScalarType, list[str]], str]:
    """A float classification (std::isnan, ...); of an integer, the constant it gives."""

    def call(dtype: ScalarType, args: list[str]) -> str:
        (a,) = args
        if dtype.is_float:
            return f"{function}({a})"
        return "true" if of_integers else "false"

    return call


# The C++ of each math function, from its arguments' dtype and C++.
MATH: dict[str, Callable[[ScalarType, list[str]], str]] = {
    "sqrt": _std("std::sqrt"),
    "exp": _std("std::exp"),
    "log": _std("std::log"),
    "sin": _std("std::sin"),
    "cos": _std("std::cos"),
    "tan": _std("std::tan"),
    "arcsin": _std("std::asin"),
    "arccos": _std("std::acos"),
    "arctan": _std("std::atan"),
    "arctan2": _std("std::atan2"),
    "sinh": _std("std::sinh"),
    "cosh": _std("std::cosh"),
    "tanh": _std("std::tanh"),
    "arcsinh": _std("std::asinh"),
    "arccosh": _std("std::acosh"),
    "arctanh": _std("std::atanh"),
    "cbrt": _std("std::cbrt"),
    "gamma": _std("std::tgamma"),
    "floor": _std("std::floor"),
    "ceil": _std("std::ceil"),
    "trunc": _std("std::trunc"),
    "fmod": _fmod,
    "isnan": _predicate("std::isnan", of_integers=False),
    "isinf": _predicate("std::isinf", of_integers=False),
    "isfinite": _predicate("std::isfinite", of_integers=True),
    "abs": _abs,
    "minimum": _pick(smaller=True),
    "maximum": _pick(smaller=False),
}


class ExpressionEmitter(ir.ExprVisitor[str]):
    """Emits the SSA statements of expressions into `statements`; `emit` gives the C++ of a
    value (a literal, a read, or the name of a statement's result).

    `cse` shares a node already emitted at the same position; `decimal_literals` writes
    floats in shortest decimal form instead of hex; `tuples` allows tuple values (else
    they are an error: DaCe's tasklets are flat); `call_field_operator` writes calls of
    field operators (else a call is an error: it should have been inlined); `mesh` reads
    neighbour tables (None: neighbour reads are an UnsupportedError);
    `scalar_branches` emits a `sc.where` whose condition is a scalar (in a field operator:
    loop-invariant, from an `if` on a scalar parameter) as `if`/`else` blocks, so only the
    side taken runs; off, it is a select of both sides' values (a scan body, where every
    value is a scalar and a select keeps the column loop vectorized).
    """

    def __init__(
        self,
        read_field: FieldReader,
        read_scalar: ScalarReader,
        *,
        cse: bool,
        decimal_literals: bool = False,
        tuples: bool = True,
        call_field_operator: CallWriter | None = None,
        prefix: str = "t",
        scalar_branches: bool = True,
        mesh: MeshTables | None = None,
    ) -> None:
        self.read_field = read_field
        self.scalar_branches = scalar_branches
        self.mesh = mesh
        self.read_scalar = read_scalar
        self.cse = cse
        self.decimal_literals = decimal_literals
        self.tuples = tuples
        self.call_field_operator = call_field_operator
        self.prefix = prefix
        self.statements: list[str] = []
        self._memo: dict[tuple[ir.Expr, Position], str] = {}
        # by the id of a node (kept alive here): whether it holds an sc.as_offset read
        self._offset_reads: dict[int, tuple[ir.Expr, bool]] = {}
        # without `cse`: by object and position, with the object kept alive (its id is its)
        self._shared: dict[tuple[int, Position], tuple[ir.Expr, str]] = {}
        self._count = 0
        # the dimensions of the concat_where branches being emitted: their reads happen only
        # where the branch is selected (DaCe keeps the other points' memlets inside the array)
        self.guarded: tuple[Dimension, ...] = ()

    def nested(self, prefix: str) -> ExpressionEmitter:
        """An emitter with the same readers and policy and statements of its own, for a
        nested scope (a lambda); its names start with `prefix`."""
        return ExpressionEmitter(
            self.read_field,
            self.read_scalar,
            cse=self.cse,
            decimal_literals=self.decimal_literals,
            tuples=self.tuples,
            call_field_operator=self.call_field_operator,
            prefix=prefix,
            scalar_branches=self.scalar_branches,
            mesh=self.mesh,
        )

    def fresh(self) -> str:
        """A name no other statement of this emitter has."""
        name = f"{self.prefix}{self._count}"
        self._count += 1
        return name

    def bind(self, ctype: str, value: str) -> str:
        """The name of a new statement `const ctype name = value;`."""
        name = self.fresh()
        self.statements.append(f"const {ctype} {name} = {value};")
        return name

    def emit(self, expr: ir.Expr, pos: Pos) -> str:
        """The C++ of `expr` at `pos`, after the statements it needs. The same object at
        the same position is emitted once even without `cse`: a shared sub-expression of
        the IR (a DAG) is one statement, not one per path to it (docs/adr/0056)."""
        if isinstance(expr, _IN_PLACE):
            return self.visit(expr, pos)
        at = _position_key(expr, pos)
        if not self.cse:
            known = self._shared.get((id(expr), at))
            if known is None:
                known = self._shared[(id(expr), at)] = (expr, self.visit(expr, pos))
            return known[1]
        key = (expr, at)
        name = self._memo.get(key)
        if name is None:
            name = self._memo[key] = self.visit(expr, pos)
        return name

    def _bind(self, expr: ir.Expr, value: str) -> str:
        tuple_typed = isinstance(expr.type, ir.TupleType)
        return self.bind("auto" if tuple_typed else cpp_type(expr.type), value)

    # --- values in place ---------------------------------------------------------------

    def visit_Literal(self, expr: ir.Literal, pos: Pos) -> str:
        return literal(expr.value, expr.type, decimal=self.decimal_literals)

    def visit_Ref(self, expr: ir.Ref, pos: Pos) -> str:
        if isinstance(expr.type, ir.FieldType):
            return self.read_field(expr.name, pos)
        return self.read_scalar(expr.name)

    def visit_Shift(self, expr: ir.Shift, pos: Pos) -> str:
        moved = dict(pos)
        for dim, amount in expr.offsets:
            current = moved.get(dim, 0)
            if isinstance(current, Absolute):
                raise ValueError(f"a shift along {dim.name} at a neighbour's index: {expr!r}")
            moved[dim] = current + amount
        return self.emit(expr.expr, moved)

    def visit_Broadcast(self, expr: ir.Broadcast, pos: Pos) -> str:
        # a read of a field over fewer dimensions ignores the offsets along the others
        return self.emit(expr.expr, pos)

    def visit_Index(self, expr: ir.Index, pos: Pos) -> str:
        # every scope that evaluates a field over `dim` has its index in `i_<dim>` (GTFN's
        # loops and function parameters, DaCe's map parameters), of whatever integer type
        return f"static_cast<std::int64_t>({index_at(expr.dim, pos)})"

    def visit_NeighborShift(self, expr: ir.NeighborShift, pos: Pos) -> str:
        """The operand read at the neighbour the table lists (at the slot of `expr`, or of
        the enclosing reduction): at index 0 where the entry is -1, and 0 there."""
        conn = expr.connectivity
        mesh = self._mesh(f"a neighbour read through {conn.name}")
        slot = Absolute(str(expr.slot)) if expr.slot is not None else pos.get(conn.local, 0)
        entry = mesh.read(conn, {conn.entity: pos.get(conn.entity, 0), conn.local: slot})
        neighbour = self.bind("std::int64_t", f"static_cast<std::int64_t>({entry})")
        at = self.bind("std::int64_t", f"({neighbour} < 0 ? 0 : {neighbour})")
        inner = {d: a for d, a in pos.items() if d not in conn.target}
        inner[conn.source] = Absolute(at)
        value = self.emit(expr.expr, inner)
        zero = literal(0, dtype_of(expr.type), decimal=self.decimal_literals)
        return self._bind(expr, f"({neighbour} < 0 ? {zero} : {value})")

    def visit_NeighborReduce(self, expr: ir.NeighborReduce, pos: Pos) -> str:
        """The reduction unrolled over the slots (max_neighbors is known when translating),
        skipping the slots that the table of the connectivity over the axis marks -1."""
        mesh = self._mesh(f"a neighbour reduction over {expr.axis.name}")
        conn = mesh.over.get(expr.axis)
        if conn is None:
            raise ValueError(f"no table numbers the slots of {expr.axis.name}: {expr!r}")
        dtype = dtype_of(expr.type)
        operand = expr.expr.type
        # like the embedded executor: the table masks the slots where the operand is over
        # its entity dimension (not the inner slots of a chain such as v(E2V)(C2E))
        masked = isinstance(operand, ir.FieldType) and conn.entity in operand.dims
        identity = neighbor_identity(expr.op, dtype.numpy).item()  # the embedded executor's
        total = literal(identity, dtype, decimal=self.decimal_literals)
        for slot in range(conn.width):
            at = {**pos, expr.axis: Absolute(str(slot))}
            value = self.emit(expr.expr, at)
            if expr.op == "sum":
                combined = (
                    wrapping(dtype, total, "+", value)
                    if dtype.is_integer
                    else f"({total} + {value})"
                )
            else:
                combined = MATH["maximum" if expr.op == "max" else "minimum"](dtype, [total, value])
            if masked:
                present = mesh.read(
                    conn, {conn.entity: pos.get(conn.entity, 0), conn.local: Absolute(str(slot))}
                )
                combined = f"({present} < 0 ? {total} : {combined})"
            total = self.bind(dtype.cpp, combined)
        return total

    def visit_LocalSlot(self, expr: ir.LocalSlot, pos: Pos) -> str:
        """The operand at the constant slot along its local dimension (as a reduction
        reads each slot); no table is read."""
        return self.emit(expr.expr, {**pos, expr.axis: Absolute(str(expr.slot))})

    def visit_DynamicShift(self, expr: ir.DynamicShift, pos: Pos) -> str:
        """The operand at the index along `dim` moved by the offset read at the point (the
        offsets are checked to keep it inside the array before the native call)."""
        offset = self.emit(expr.offset, pos)
        at = self.bind(
            "std::int64_t",
            f"static_cast<std::int64_t>({index_at(expr.dim, pos)}) + "
            f"static_cast<std::int64_t>({offset})",
        )
        return self.emit(expr.expr, {**pos, expr.dim: Absolute(at)})

    def _mesh(self, what: str) -> MeshTables:
        if self.mesh is None:
            raise UnsupportedError(
                f"{what}: this emitter was given no neighbour tables (MeshTables); the "
                "GTFN and DaCe toolchains and the embedded executor "
                "(stencilchain.backends.run_embedded) compile or run unstructured-mesh reads"
            )
        return self.mesh

    # --- operations: one statement each --------------------------------------------------

    def visit_ConcatWhere(self, expr: ir.ConcatWhere, pos: Pos) -> str:
        """`if (cond) { true branch } else { false branch }`: each branch's statements are
        emitted inside its block, so nothing of it runs (or reads) where it is not selected;
        sharing (CSE) reaches into a branch, never out of it."""
        index = f"static_cast<std::int64_t>({index_at(expr.dim, pos)})"
        cond = self.bind("bool", _condition(expr, index, self.read_scalar))
        return self._if_else(cond, expr, expr.true, expr.false, pos, (expr.dim,))

    def _if_else(
        self,
        cond: str,
        expr: ir.Expr,
        true: ir.Expr,
        false: ir.Expr,
        pos: Pos,
        guard: tuple[Dimension, ...],
        hoist: bool = True,
    ) -> str:
        """The name of `expr`'s value, `true` if `cond` else `false`, each side's statements
        in its own block (reads along `guard` happen only where that side is selected).
        Without a guard (a condition on a scalar), what both sides compute from the same
        objects at the same point is emitted before the blocks, once: a value that joined
        `if`s update from itself would otherwise be emitted again in every block below
        (not with `hoist` False: a side's reads through offsets run only where it is taken)."""
        if not guard and hoist:
            in_true = _pointwise_below(true)
            for node in _pointwise_below(false).values():
                if id(node) in in_true and not isinstance(node, _IN_PLACE):
                    self.emit(node, pos)
        name = self.fresh()
        self.statements.append(f"{cpp_type(expr.type)} {name};")
        for keyword, branch in ((f"if ({cond}) {{", true), ("} else {", false)):
            self.statements.append(keyword)
            self.statements += ["    " + line for line in self._branch(branch, pos, guard, name)]
        self.statements.append("}")
        return name

    def _branch(
        self,
        branch: ir.Expr,
        pos: Pos,
        guard: tuple[Dimension, ...],
        result: str,
    ) -> list[str]:
        """The statements of `branch` at `pos` ending with its value stored in `result`,
        without leaving any of them (or their sharing) to the enclosing scope."""
        statements, memo, shared, guarded = self.statements, self._memo, self._shared, self.guarded
        self.statements, self._memo, self._shared = [], dict(memo), dict(shared)
        self.guarded = (*guarded, *guard)
        try:
            value = self.emit(branch, pos)
            return [*self.statements, f"{result} = {value};"]
        finally:
            self.statements, self._memo, self._shared = statements, memo, shared
            self.guarded = guarded

    def visit_Unary(self, expr: ir.Unary, pos: Pos) -> str:
        operand = self.emit(expr.operand, pos)
        dtype = dtype_of(expr.type)
        if expr.op == "not":
            if dtype.is_integer:
                return self._bind(expr, f"static_cast<{dtype.cpp}>(~{operand})")
            return self._bind(expr, f"(!{operand})")
        if dtype.is_integer:
            return self._bind(expr, wrapping(dtype, "0", "-", operand))
        return self._bind(expr, f"(-{operand})")

    def visit_Binary(self, expr: ir.Binary, pos: Pos) -> str:
        left, right = self.emit(expr.left, pos), self.emit(expr.right, pos)
        dtype = dtype_of(expr.type)
        if expr.op == "pow":
            if dtype.is_float:
                return self._bind(expr, f"std::pow({left}, {right})")
            if not isinstance(expr.right, ir.Literal):
                raise ValueError(f"an integer power needs a literal exponent: {expr!r}")
            return self._integer_power(dtype, left, int(expr.right.value))
        if expr.op in INTEGER_OPERATIONS:
            return self._bind(expr, INTEGER_OPERATIONS[expr.op](dtype, left, right))
        if expr.op in BITWISE and dtype.is_integer:
            return self._bind(expr, f"static_cast<{dtype.cpp}>({left} {BITWISE[expr.op]} {right})")
        if dtype.is_integer:  # + - * of integers
            return self._bind(expr, wrapping(dtype, left, INFIX[expr.op], right))
        return self._bind(expr, f"({left} {INFIX[expr.op]} {right})")

    def _integer_power(self, dtype: ScalarType, base: str, exponent: int) -> str:
        """`base ** exponent` by squaring, wrapping around like NumPy's integer power."""
        result: str | None = None
        square = base
        while exponent:
            if exponent & 1:
                result = (
                    square
                    if result is None
                    else self.bind(dtype.cpp, wrapping(dtype, result, "*", square))
                )
            exponent >>= 1
            if exponent:
                square = self.bind(dtype.cpp, wrapping(dtype, square, "*", square))
        return result if result is not None else literal(1, dtype)

    def visit_MathCall(self, expr: ir.MathCall, pos: Pos) -> str:
        args = [self.emit(a, pos) for a in expr.args]
        return self._bind(expr, MATH[expr.fn](dtype_of(expr.args[0].type), args))

    def visit_Where(self, expr: ir.Where, pos: Pos) -> str:
        """A select of both sides' values; `if`/`else` blocks where the condition is a
        scalar (with `scalar_branches`) or where a side reads through a data-dependent
        offset (or calls a field operator that may): such a read is checked only where its
        side is taken (program/dynamic_offsets.py), so it must not run elsewhere."""
        cond = self.emit(expr.cond, pos)
        scalar = self.scalar_branches and isinstance(expr.cond.type, ScalarType)
        fields = isinstance(expr.type, ir.FieldType)  # not a scan body's scalars
        if fields and self._reads_through_offsets(expr.true, expr.false):
            # nothing hoisted out of the blocks: a read in both is checked only where taken
            return self._if_else(cond, expr, expr.true, expr.false, pos, (), hoist=False)
        if scalar:
            return self._if_else(cond, expr, expr.true, expr.false, pos, ())
        true, false = self.emit(expr.true, pos), self.emit(expr.false, pos)
        return self._bind(expr, f"({cond} ? {true} : {false})")

    def _reads_through_offsets(self, *exprs: ir.Expr) -> bool:
        """Whether one of `exprs` holds an `sc.as_offset` read or a call of a field
        operator (whose body may hold one); a node shared by several is looked at once."""
        memo = self._offset_reads
        todo: list[tuple[ir.Expr, bool]] = [(e, False) for e in exprs]
        while todo:
            expr, expanded = todo.pop()
            if id(expr) in memo:
                continue
            children = ir.children(expr)
            if expanded:
                here = isinstance(expr, (ir.DynamicShift, ir.Call))
                memo[id(expr)] = (expr, here or any(memo[id(c)][1] for c in children))
            else:
                todo.append((expr, True))
                todo.extend((c, False) for c in children if id(c) not in memo)
        return any(memo[id(e)][1] for e in exprs)

    def visit_Cast(self, expr: ir.Cast, pos: Pos) -> str:
        value = self.emit(expr.expr, pos)
        return self._bind(expr, f"static_cast<{dtype_of(expr.type).cpp}>({value})")

    def visit_Call(self, expr: ir.Call, pos: Pos) -> str:
        if self.call_field_operator is None:
            raise ValueError(f"call of {expr.callee} left in an inlined body: {expr!r}")
        return self._bind(expr, self.call_field_operator(expr, pos, self))

    def visit_MakeTuple(self, expr: ir.MakeTuple, pos: Pos) -> str:
        self._require_tuples(expr)
        elems = ", ".join(self.emit(e, pos) for e in expr.elems)
        return self._bind(expr, f"{TUPLE_NAMESPACE}::make_tuple({elems})")

    def visit_TupleGet(self, expr: ir.TupleGet, pos: Pos) -> str:
        self._require_tuples(expr)
        value = self.emit(expr.expr, pos)
        return self._bind(expr, f"{TUPLE_NAMESPACE}::get<{expr.index}>({value})")

    def _require_tuples(self, expr: ir.Expr) -> None:
        if not self.tuples:
            raise ValueError(
                f"{type(expr).__name__} left in a flat body (this emitter takes no tuple "
                f"values; inline the calls and emit each element of a tuple result): {expr!r}"
            )


def _condition(expr: ir.ConcatWhere, index: str, scalar: Callable[[str], str]) -> str:
    """The C++ condition that `index` (an int64 expression) lies in `expr`'s intervals;
    `scalar` reads a scalar that a bound names (`K < k_start`)."""
    parts = []
    for interval in expr.intervals:
        tests = [f"{index} >= {bound_value(expr.dim, b, scalar)}" for b in interval.starts]
        tests += [f"{index} < {bound_value(expr.dim, b, scalar)}" for b in interval.stops]
        parts.append("(" + " && ".join(tests) + ")" if tests else "true")
    return " || ".join(parts) if parts else "false"


# The nodes whose operands are evaluated at their own point (no shift, no branch of their
# own that guards reads): what both sides of a scalar branch may share before it.
_POINTWISE = (ir.Unary, ir.Binary, ir.Where, ir.MathCall, ir.Cast, ir.MakeTuple, ir.TupleGet)


def _pointwise_below(expr: ir.Expr) -> dict[int, ir.Expr]:
    """`expr` and the nodes below it reached through pointwise nodes only, by id, each
    object once, in the order a depth-first walk meets them first."""
    found: dict[int, ir.Expr] = {}
    stack = [expr]
    while stack:
        e = stack.pop()
        if id(e) in found:
            continue
        found[id(e)] = e
        if isinstance(e, _POINTWISE):
            stack.extend(reversed(ir.children(e)))
    return found


def position(pos: Pos) -> Position:
    """A position as a key: its non-zero offsets, ordered by dimension name."""
    return tuple(sorted(((d, a) for d, a in pos.items() if a != 0), key=lambda x: x[0].name))


def _position_key(expr: ir.Expr, pos: Pos) -> Position:
    """The part of a position that matters for a node: its offsets along its own
    dimensions (none for a scalar value)."""
    if isinstance(expr.type, ir.FieldType):
        dims = expr.type.dims
        return position({d: a for d, a in pos.items() if d in dims})
    return () if isinstance(expr.type, ScalarType) else position(pos)
