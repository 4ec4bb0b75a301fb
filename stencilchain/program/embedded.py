"""The embedded executor: runs a program with vectorized NumPy, by the meaning of the
operations (program/semantics.py) and of the domains (program/domains.py).

Each call evaluates its field operator over the call's domain (a box of index ranges),
or runs its scan operator level by level along the axis, vectorized over the columns.
A field expression evaluated over a box gives an array of the box's shape; a shift
evaluates its operand over the box moved by the offset; a call of another field
operator binds its field parameters lazily, so the callee reads its arguments over
whatever boxes its own shifts ask for.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from stencilchain.errors import EmptyDomainWarning
from stencilchain.program import ir
from stencilchain.program.arguments import ArgumentChecker, FieldParam, bind_arguments
from stencilchain.program.dimensions import Dimension
from stencilchain.program.domains import empty_domain_message, resolve_domain, selected
from stencilchain.program.dynamic_offsets import (
    OffsetArgument,
    check_offsets,
    offset_arguments,
)
from stencilchain.program.ir_walk import shared_nodes
from stencilchain.program.own_ranges import RangeKey, specialise_ranges
from stencilchain.program.records import frozen
from stencilchain.program.semantics import REDUCTIONS, literal_value, neighbor_identity, operate
from stencilchain.program.table_reads import table_read_check

if TYPE_CHECKING:
    from stencilchain.program.program import Program

Box = Mapping[Dimension, tuple[int, int]]
Value = Union[np.ndarray, np.generic, tuple[Any, ...]]
FieldSource = Callable[[Box], np.ndarray]


class Evaluator(ir.ExprVisitor[Value]):
    """Evaluates field-operator bodies of one program over boxes: `visit(expr, env, box)`
    gives the value of `expr` over `box`, with parameters bound in `env`."""

    def __init__(
        self,
        fops: Mapping[str, ir.FieldOperatorDef],
        sizes: Mapping[Dimension, int] | None = None,
        tables: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        self.fops = fops
        # the size of every dimension, and the table of every connectivity by name (both
        # needed only by neighbour reads and reductions)
        self.sizes = sizes or {}
        self.tables = tables or {}
        self.tables_over: dict[Dimension, tuple[Dimension, np.ndarray]] = {}
        # inputs starting below 0 (program/own_ranges.py): per parameter, a copy that also
        # holds its points below 0, and the index in it of the index space's point 0
        self.below: Mapping[str, tuple[np.ndarray, tuple[int, ...]]] = {}
        # the nodes (by id) that more than one node holds, in the bodies this evaluator runs,
        # and their values while one body runs: a shared sub-expression is evaluated once per
        # environment and box, so a DAG costs its own size (docs/adr/0056)
        self.shared: set[int] = set()
        self.roots: list[ir.Expr] = []  # kept alive: the ids in `shared` stay theirs
        self.memo: dict[tuple[int, int, tuple[Any, ...]], tuple[Any, ...]] = {}
        for fop in fops.values():
            self.share(fop.body)

    def share(self, *roots: ir.Expr) -> None:
        """Evaluate the shared nodes of `roots` once per environment and box."""
        self.roots += roots
        self.shared |= shared_nodes(*roots)

    def run_call(self, call: ir.ProgramCall, values: Mapping[str, Any], box: Box) -> Value:
        fop = self.fops[call.callee]
        env: dict[str, Any] = {}
        for param, arg in zip(fop.params, call.args):
            if isinstance(arg, ir.Literal):
                env[param.name] = arg.type.numpy.type(arg.value)
            elif isinstance(param.type, ir.FieldType):
                name = arg.name  # type: ignore[union-attr]
                array, origin = self.below.get(name, (values[name], None))
                env[param.name] = _array_source(array, param.type.dims, origin)
            else:
                env[param.name] = values[arg.name]  # type: ignore[union-attr]
        try:
            with np.errstate(all="ignore"):
                return self.eval(fop.body, env, box)
        finally:
            self.memo.clear()

    def eval(self, expr: ir.Expr, env: Mapping[str, Any], box: Box) -> Value:
        """The value of `expr` over `box`."""
        if id(expr) not in self.shared:
            return self.visit(expr, env, box)
        key = (id(expr), id(env), tuple(box.items()))
        known = self.memo.get(key)
        if known is None:
            # the environment is kept with the value: its id is not reused while it is here
            known = self.memo[key] = (self.visit(expr, env, box), env)
        return known[0]  # type: ignore[no-any-return]

    def visit_Literal(self, expr: ir.Literal, env: Mapping[str, Any], box: Box) -> Value:
        return literal_value(expr)

    def _pointwise(self, expr: ir.Expr, env: Mapping[str, Any], box: Box) -> Value:
        # a loop, not a comprehension: one Python frame less per level of a deep expression
        operands = []
        for operand in ir.children(expr):
            operands.append(self.eval(operand, env, box))
        return operate(expr, operands)  # type: ignore[no-any-return]

    visit_Unary = visit_Binary = visit_Where = visit_MathCall = visit_Cast = _pointwise

    def visit_Ref(self, expr: ir.Ref, env: Mapping[str, Any], box: Box) -> Value:
        value = env[expr.name]
        return value(box) if isinstance(expr.type, ir.FieldType) else value  # type: ignore[no-any-return]

    def visit_Shift(self, expr: ir.Shift, env: Mapping[str, Any], box: Box) -> Value:
        moved = dict(box)
        for dim, amount in expr.offsets:
            start, stop = moved[dim]
            moved[dim] = (start + amount, stop + amount)
        return self.eval(expr.expr, env, moved)

    def visit_Broadcast(self, expr: ir.Broadcast, env: Mapping[str, Any], box: Box) -> Value:
        value = np.asarray(self.eval(expr.expr, env, box))
        target = expr.type.dims
        inner = expr.expr.type.dims if isinstance(expr.expr.type, ir.FieldType) else ()
        # the operand's axes in the target's order, and a length-1 axis for each new one
        kept = [d for d in target if d in inner]
        value = np.transpose(value, [inner.index(d) for d in kept])
        value = value.reshape([value.shape[kept.index(d)] if d in inner else 1 for d in target])
        return np.broadcast_to(value, tuple(box[d][1] - box[d][0] for d in target))

    def visit_Index(self, expr: ir.Index, env: Mapping[str, Any], box: Box) -> Value:
        start, stop = box[expr.dim]
        return np.arange(start, stop, dtype=np.int64)

    def visit_NeighborShift(
        self, expr: ir.NeighborShift, env: Mapping[str, Any], box: Box
    ) -> Value:
        conn = expr.connectivity
        rows = slice(*box[conn.entity])
        table = self.tables[conn.name]
        slots = (
            table[rows, expr.slot]
            if expr.slot is not None
            else table[rows, slice(*box[conn.local])]
        )
        inner_dims = expr.expr.type.dims  # type: ignore[union-attr]
        inner_box = {d: r for d, r in box.items() if d not in (conn.entity, conn.local)}
        inner_box[conn.source] = (0, self.sizes[conn.source])
        inner = np.asarray(self.eval(expr.expr, env, inner_box))
        axis = inner_dims.index(conn.source)
        missing = slots < 0
        gathered = np.take(inner, np.where(missing, 0, slots), axis=axis)
        # missing neighbours read as 0; `slots` sits where the source axis was
        shape = [1] * gathered.ndim
        shape[axis : axis + slots.ndim] = slots.shape
        gathered = np.where(missing.reshape(shape), np.zeros((), inner.dtype), gathered)
        if expr.slot is None:  # the local dimension comes last
            gathered = np.moveaxis(gathered, axis + 1, -1)
        return gathered

    def visit_NeighborReduce(
        self, expr: ir.NeighborReduce, env: Mapping[str, Any], box: Box
    ) -> Value:
        operand_dims = expr.expr.type.dims  # type: ignore[union-attr]
        inner_box = dict(box)
        inner_box[expr.axis] = (0, self.sizes[expr.axis])
        value = np.asarray(self.eval(expr.expr, env, inner_box))
        axis = operand_dims.index(expr.axis)
        dtype = value.dtype
        identity = neighbor_identity(expr.op, dtype)
        over = self.tables_over.get(expr.axis)
        if over is not None and over[0] in operand_dims:
            entity, table = over
            present = table[slice(*box[entity]), :] >= 0
            # the table's axes (entity, local) placed where the operand has them
            order = [operand_dims.index(entity), axis]
            present = np.transpose(present, np.argsort(order))
            shape = [1] * value.ndim
            for dim_axis, size in zip(sorted(order), present.shape):
                shape[dim_axis] = size
            value = np.where(present.reshape(shape), value, identity)
        return np.asarray(REDUCTIONS[expr.op](value, axis=axis), dtype=dtype)

    def visit_LocalSlot(self, expr: ir.LocalSlot, env: Mapping[str, Any], box: Box) -> Value:
        """The operand over `box` at the one slot along its local dimension."""
        axis = expr.expr.type.dims.index(expr.axis)  # type: ignore[union-attr]
        value = np.asarray(
            self.eval(expr.expr, env, {**box, expr.axis: (expr.slot, expr.slot + 1)})
        )
        slot: np.ndarray = np.take(value, 0, axis=axis)
        return slot

    def visit_DynamicShift(self, expr: ir.DynamicShift, env: Mapping[str, Any], box: Box) -> Value:
        """The operand over all of `dim`, picked at `k + offset` for each point of `box`
        (the offsets were checked to stay inside the array before the program ran, where
        the read is used: in a branch of `sc.where` not taken an index may leave it, and is
        clipped, its value unused)."""
        dims = expr.type.dims
        axis = dims.index(expr.dim)
        whole = np.asarray(self.eval(expr.expr, env, {**box, expr.dim: (0, self.sizes[expr.dim])}))
        offset = np.asarray(self.eval(expr.offset, env, box))
        offset_dims = expr.offset.type.dims  # type: ignore[union-attr]
        # the offsets over the box's shape, in the operand's axis order
        kept = [d for d in dims if d in offset_dims]
        offset = np.transpose(offset, [offset_dims.index(d) for d in kept])
        offset = offset.reshape([offset.shape[kept.index(d)] if d in kept else 1 for d in dims])
        shape = tuple(box[d][1] - box[d][0] for d in dims)
        start = box[expr.dim][0]
        levels = np.arange(start, start + shape[axis]).reshape(
            [shape[axis] if d == expr.dim else 1 for d in dims]
        )
        at = np.clip(levels + offset.astype(np.int64), 0, whole.shape[axis] - 1)
        at = np.broadcast_to(at, shape)
        picked: np.ndarray = np.take_along_axis(whole, at, axis=axis)
        return picked

    def visit_ConcatWhere(self, expr: ir.ConcatWhere, env: Mapping[str, Any], box: Box) -> Value:
        """Each branch over the parts of `box` along the dimension where it is selected, and
        only there: it never reads where the other branch applies."""
        start, stop = box[expr.dim]
        size = self.sizes[expr.dim]
        inside = selected(expr.intervals, start, stop, size, env)
        axis = expr.type.dims.index(expr.dim)
        parts = []
        cuts = sorted({start, stop, *(b for part in inside for b in part)})
        for lo, hi in itertools.pairwise(cuts):
            chosen = expr.true if any(a <= lo and hi <= b for a, b in inside) else expr.false
            part = {**box, expr.dim: (lo, hi)}
            value = self.eval(chosen, env, part)
            shape = tuple(part[d][1] - part[d][0] for d in expr.type.dims)
            parts.append(np.broadcast_to(value, shape))
        if not parts:
            shape = tuple(box[d][1] - box[d][0] for d in expr.type.dims)
            return np.empty(shape, dtype=expr.type.dtype.numpy)
        return np.concatenate(parts, axis=axis)

    def visit_Call(self, expr: ir.Call, env: Mapping[str, Any], box: Box) -> Value:
        callee = self.fops[expr.callee]
        inner: dict[str, Any] = {}
        for param, arg in zip(callee.params, expr.args):
            if isinstance(param.type, ir.FieldType):
                inner[param.name] = _lazy(self, arg, env)
            else:
                inner[param.name] = self.eval(arg, env, box)
        return self.eval(callee.body, inner, box)

    def visit_MakeTuple(self, expr: ir.MakeTuple, env: Mapping[str, Any], box: Box) -> Value:
        return tuple(self.eval(e, env, box) for e in expr.elems)

    def visit_TupleGet(self, expr: ir.TupleGet, env: Mapping[str, Any], box: Box) -> Value:
        result = self.eval(expr.expr, env, box)
        assert isinstance(result, tuple)
        return result[expr.index]  # type: ignore[no-any-return]


def _lazy(evaluator: Evaluator, expr: ir.Expr, env: Mapping[str, Any]) -> FieldSource:
    def source(box: Box) -> np.ndarray:
        value = evaluator.eval(expr, env, box)
        assert isinstance(value, np.ndarray)
        return value

    return source


def _array_source(
    array: np.ndarray, dims: tuple[Dimension, ...], origin: tuple[int, ...] | None = None
) -> FieldSource:
    """The field over `array`, whose index `origin` (per axis; 0 when None) is the index
    space's point 0."""
    if origin is None:

        def source(box: Box) -> np.ndarray:
            return array[tuple(slice(*box[d]) for d in dims)]

        return source

    def shifted(box: Box) -> np.ndarray:
        return array[tuple(slice(box[d][0] + o, box[d][1] + o) for d, o in zip(dims, origin))]

    return shifted


def run_scan(
    scan: ir.ScanOperatorDef, call: ir.ProgramCall, values: Mapping[str, Any], box: Box
) -> tuple[np.ndarray, ...]:
    """The scan's result over `box`, one array per state element: a Python loop over the
    levels of the axis, each level vectorized over all the columns of the box."""
    axis = scan.dims.index(scan.axis)
    shape = tuple(box[d][1] - box[d][0] for d in scan.dims)
    column_shape = shape[:axis] + shape[axis + 1 :]
    columns = tuple(d for d in scan.dims if d != scan.axis)
    state = [np.full(column_shape, lit.value, dtype=lit.type.numpy) for lit in scan.init]
    results = [np.empty(shape, dtype=lit.type.numpy) for lit in scan.init]
    evaluator = Evaluator({})
    evaluator.share(*scan.body)
    start, stop = box[scan.axis]
    levels = range(start, stop) if scan.forward else range(stop - 1, start - 1, -1)
    for k in levels:
        env: dict[str, Any] = {}
        for param, arg in zip(scan.params, call.args):
            if isinstance(arg, ir.Literal):
                env[param.name] = arg.type.numpy.type(arg.value)
            elif isinstance(param.type, ir.FieldType):
                array = values[arg.name]  # type: ignore[union-attr]
                index = tuple(k if d == scan.axis else slice(*box[d]) for d in param.type.dims)
                env[param.name] = _in_columns(array[index], param.type.dims, columns)
            else:
                env[param.name] = values[arg.name]  # type: ignore[union-attr]
        for s, current in zip(scan.state, state):
            env[s.name] = current
        with np.errstate(all="ignore"):
            new = [evaluator.eval(e, env, {}) for e in scan.body]
        evaluator.memo.clear()
        state = [
            np.broadcast_to(np.asarray(v, dtype=lit.type.numpy), column_shape)
            for v, lit in zip(new, scan.init)
        ]
        level = (slice(None),) * axis + (k - start,)
        for result, current in zip(results, state):
            result[level] = current
    return tuple(results)


def _in_columns(
    value: np.ndarray, dims: tuple[Dimension, ...], columns: tuple[Dimension, ...]
) -> np.ndarray:
    """A level of a scan argument over `dims` (a subset of the scan's) laid out to
    broadcast over the scan's `columns`: its axes in their order, length 1 where it lacks
    one."""
    own = tuple(d for d in dims if d in columns)
    if own == columns:
        return value
    kept = [d for d in columns if d in own]
    value = np.transpose(value, [own.index(d) for d in kept])
    return value.reshape([value.shape[kept.index(d)] if d in own else 1 for d in columns])


def _user_stacklevel() -> int:
    """The stacklevel of `warnings.warn` from run_program that names the first frame outside
    the package (the user's call)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def run_program(
    program: ir.Program,
    checker: ArgumentChecker,
    args: tuple[Any, ...],
    offsets: tuple[OffsetArgument, ...] = (),
    below: Mapping[str, tuple[np.ndarray, tuple[int, ...]]] | None = None,
) -> None:
    """Check the arguments (and the `offsets`, `offset_arguments(program)`), then run every
    call of `program` with NumPy; fields over their own ranges run the program specialised
    for them (program/own_ranges.py). `below`: the inputs whose reads reach below the
    index space's point 0 (`Evaluator.below`; the argument is then the part from 0 on)."""
    plain, key = checker.keys.of(args)
    if key is not None and key != checker.key:
        _run_over_own_ranges(program, checker, plain, key, offsets)
        return
    sizes, checked = checker.check(args)
    if offsets:
        check_offsets(program.name, offsets, checked)
    values = {p.name: v for p, v in zip(program.params, checked)}
    tables = {
        p.type.connectivity.name: values[p.name]
        for p in program.params
        if isinstance(p.type, ir.TableType)
    }
    evaluator = Evaluator({f.name: f for f in program.field_operators}, sizes, tables)
    evaluator.below = below or {}
    for p in program.params:
        if isinstance(p.type, ir.TableType):
            conn = p.type.connectivity
            evaluator.tables_over[conn.local] = (conn.entity, values[p.name])
    # every domain is checked before any call runs: a DomainError leaves the outputs as they were
    boxes = [resolve_domain(call, sizes, program.name, values) for call in program.calls]
    empty = (
        empty_domain_message(call, sizes, program.name, values)
        for call, box in zip(program.calls, boxes)
        if box is None
    )
    message = next((m for m in empty if m is not None), None)
    for temporary in program.temporaries:
        ttype = program.field_type(temporary.name)
        shape = tuple(sizes[d] for d in ttype.dims)
        try:
            # uninitialized, like a compiled backend's: no call reads where none wrote
            values[temporary.name] = np.empty(shape, dtype=ttype.dtype.numpy)
        except (MemoryError, ValueError) as err:  # ValueError: more bytes than NumPy counts
            # what the compiled backends say: at most SIZE_MAX (more does not fit a size_t)
            nbytes = min(math.prod(shape) * ttype.dtype.numpy.itemsize, 2**64 - 1)
            raise MemoryError(
                f"cannot allocate {nbytes} bytes for temporary {temporary.name} of {program.name}()"
            ) from err
    if message is not None:  # the first, as the compiled backends report it, after any error
        warnings.warn(message, EmptyDomainWarning, stacklevel=_user_stacklevel())
    for call, box in zip(program.calls, boxes):
        if box is None:
            continue
        scan = program.scan_operator(call.callee)
        if scan is not None:
            result: Value = run_scan(scan, call, values, box)
        else:
            result = evaluator.run_call(call, values, box)
        # a tuple element may be a view of a field that another element overwrites
        results = tuple(np.array(r) for r in result) if isinstance(result, tuple) else (result,)
        for name, res in zip(call.outs, results):
            out = values[name]
            dims = program.field_type(name).dims
            out[tuple(slice(*box[d]) for d in dims)] = res


def _run_over_own_ranges(
    program: ir.Program,
    checker: ArgumentChecker,
    args: tuple[Any, ...],
    key: RangeKey,
    offsets: tuple[OffsetArgument, ...],
) -> None:
    """Run a call whose fields are over their own ranges (`key`): `program` specialised for
    them, on copies of the fields over the whole index space (each at its own range in
    it; the specialisation reads nothing outside), then the outputs copied back. An input
    starting below 0 is copied over its points below 0 too, and the program runs on the
    part from 0 on, its reads below 0 made in the whole copy (`run_program`'s `below`)."""
    ranges = checker.keys.named(key)
    if offsets:  # against the fields' own ranges: the copies' padding would hide a bad one
        check_offsets(program.name, offsets, args, ranges)
    spec = checker.specialisations.get(key)
    if spec is None:
        made = specialise_ranges(program, ranges)
        # run on whole-space copies: every field spans the index space
        whole = dataclasses.replace(made, ranges=())
        spec = checker.specialisations[key] = (
            whole,
            ArgumentChecker(whole),
            table_read_check(made),
        )
    whole, whole_checker, table_reads = spec
    params = {p.name: p for p in checker.params}
    for p, arg in zip(checker.params, args):
        if isinstance(p, FieldParam):
            checker.field(p, arg)  # what the copies would hide: read-only outputs, say
    checker.check_overlaps(args)
    if table_reads is not None:  # the copies would read their padding for a bad entry
        table_reads(args)
    sizes: dict[Dimension, int] = {}
    for (_, name, dims), axes in zip(checker.keys.fields, key):
        for dim, (s, g), n in zip(dims, axes, args[checker.index[name]].shape):
            sizes[dim] = s + int(n) + g
    copies: list[Any] = list(args)
    below: dict[str, tuple[np.ndarray, tuple[int, ...]]] = {}
    for (_, name, dims), axes in zip(checker.keys.fields, key):
        at = checker.index[name]
        arr = args[at]
        origin = tuple(max(0, -s) for s, _ in axes)  # the points below 0 it holds
        copy = np.zeros(tuple(sizes[d] + o for d, o in zip(dims, origin)), dtype=arr.dtype)
        copy[tuple(slice(s + o, s + o + n) for (s, _), o, n in zip(axes, origin, arr.shape))] = arr
        if any(origin):
            below[name] = (copy, origin)
            copy = copy[tuple(slice(o, None) for o in origin)]
        copies[at] = copy
    run_program(whole, whole_checker, tuple(copies), (), below)
    for (_, name, _dims), axes in zip(checker.keys.fields, key):
        param = params[name]
        if isinstance(param, FieldParam) and param.written:
            at = checker.index[name]
            arr = args[at]
            arr[...] = copies[at][tuple(slice(s, s + n) for (s, _), n in zip(axes, arr.shape))]


@frozen
class EmbeddedBackend:
    """The NumPy backend: no compilation; the reference every compiled result is tested against."""

    name: str = "run_embedded"

    def executor(self, program: Program) -> Callable[..., None]:
        ir_program = program.ir
        checker = ArgumentChecker(ir_program)
        offsets = offset_arguments(ir_program)

        def run(*args: Any, **kwargs: Any) -> None:
            run_program(ir_program, checker, bind_arguments(ir_program, args, kwargs), offsets)

        return run


run_embedded = EmbeddedBackend()
