"""Field operators as C++ function templates: the GTFN translation without transforms.

Each field operator `f` becomes `sc_fop_f(<fields>, <scalars>, <indices>)`: a field
parameter is any callable taking the indices of the parameter's own dimensions (a lambda
at the call site), a scalar is a value, and the indices are those of the result's
dimensions. A parameter over a dimension the result lacks is only passed on, never read
at the result's indices.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from stencilchain.program import ir
from stencilchain.program.connectivity import Connectivity
from stencilchain.program.dimensions import Dimension
from stencilchain.program.ir_walk import nodes
from stencilchain.steps.cpp.expressions import (
    ExpressionEmitter,
    MeshTables,
    Pos,
    TableReader,
    cpp_type,
    index_at,
)
from stencilchain.steps.cpp.signature import FieldArg, ProgramSignature, index_var, size_var


def function_name(fop: str) -> str:
    return f"sc_fop_{fop}"


def result_dims(t: ir.FieldType | ir.TupleType) -> tuple[Dimension, ...]:
    """The dimensions of a field operator's result (every element's, for a tuple)."""
    return t.dims if isinstance(t, ir.FieldType) else t.elems[0].dims


def _indices(dims: tuple[Dimension, ...], pos: Pos) -> list[str]:
    return [index_at(d, pos) for d in dims]


def table_reader(
    tables: Mapping[str, FieldArg], stride: Callable[[FieldArg, int], str]
) -> TableReader:
    """How the entry (entity index, slot) of a connectivity's table is read, by the table
    parameters' pointers and strides (`stride(field, axis)`), in a scope where they are
    variables: the program function, or a field operator's function taking them."""

    def read(conn: Connectivity, at: Pos) -> str:
        table = tables[conn.name]
        entity, slot = index_at(conn.entity, at), index_at(conn.local, at)
        return f"{table.pointer}[({entity}) * {stride(table, 0)} + ({slot}) * {stride(table, 1)}]"

    return read


class FieldOperatorFunctions:
    """The function templates of a program's field operators, and their calls."""

    def __init__(self, program: ir.Program) -> None:
        self.program = program
        self.fops = {f.name: f for f in program.field_operators}
        signature = ProgramSignature.of(program)
        # the arrays' sizes, passed on to every function (concat_where's conditions)
        self.sizes = [size_var(d) for d in signature.dims]
        # the neighbour tables (pointer and strides), passed on to every function too
        self.tables = {
            f.type.connectivity.name: f
            for f in signature.fields
            if isinstance(f.type, ir.TableType)
        }
        self.mesh = (
            MeshTables.of(program, table_reader(self.tables, lambda f, axis: f.stride(axis)))
            if self.tables
            else None
        )

    def table_arguments(self) -> list[str]:
        return [n for t in self.tables.values() for n in (t.pointer, t.stride(0), t.stride(1))]

    def table_parameters(self) -> list[str]:
        params = []
        for t in self.tables.values():
            params.append(f"const {t.type.dtype.cpp}* {t.pointer}")
            params += [f"std::int64_t {t.stride(axis)}" for axis in (0, 1)]
        return params

    def emit_call(self, call: ir.Call, pos: Pos, emitter: ExpressionEmitter) -> str:
        """The C++ of `call` at `pos` from the scope of `emitter`: each field argument a
        lambda over its parameter's dimensions, evaluated in that scope."""
        callee = self.fops[call.callee]
        args = []
        for param, arg in zip(callee.params, call.args):
            if isinstance(param.type, ir.FieldType):
                sub = emitter.nested(prefix=f"{emitter.fresh()}_")
                value = sub.emit(arg, {})
                body = " ".join([*sub.statements, f"return {value};"])
                params = ", ".join(f"std::int64_t {index_var(d)}" for d in param.type.dims)
                args.append(f"[&]({params}) {{ {body} }}")
            else:
                args.append(emitter.emit(arg, pos))
        args += _indices(result_dims(callee.return_type), pos)
        args += self.sizes
        args += self.table_arguments()
        return f"{function_name(callee.name)}({', '.join(args)})"

    def definitions(self) -> list[str]:
        """Every field operator's function template, each after the ones it calls."""
        return [self._definition(fop) for fop in _callees_first(self.program)]

    def _definition(self, fop: ir.FieldOperatorDef) -> str:
        dims = result_dims(fop.return_type)
        field_dims = {p.name: p.type.dims for p in fop.params if isinstance(p.type, ir.FieldType)}
        template = ", ".join(f"class A_{name}" for name in field_dims)
        params = []
        for p in fop.params:
            if isinstance(p.type, ir.FieldType):
                params.append(f"const A_{p.name}& a_{p.name}")
            else:
                params.append(f"{cpp_type(p.type)} s_{p.name}")
        params += [f"std::int64_t {index_var(d)}" for d in dims]
        params += [f"std::int64_t {n}" for n in self.sizes]
        params += self.table_parameters()

        def read_field(name: str, pos: Pos) -> str:
            return f"a_{name}({', '.join(_indices(field_dims[name], pos))})"

        emitter = ExpressionEmitter(
            read_field,
            lambda name: f"s_{name}",
            cse=False,
            call_field_operator=self.emit_call,
            mesh=self.mesh,
        )
        result = emitter.emit(fop.body, {})
        header = f"template <{template}>\n" if template else ""
        unused = " ".join(f"(void){n};" for n in (*self.sizes, *self.table_arguments()))
        lines = (
            [unused, *emitter.statements, f"return {result};"]
            if unused
            else [*emitter.statements, f"return {result};"]
        )
        body = "\n".join(f"    {s}" for s in lines)
        return (
            f"{header}SC_HD inline {cpp_type(fop.return_type)} "
            f"{function_name(fop.name)}({', '.join(params)}) {{\n{body}\n}}\n"
        )


def _callees_first(program: ir.Program) -> list[ir.FieldOperatorDef]:
    """Field operators ordered so that each comes after the ones it calls."""
    fops = {f.name: f for f in program.field_operators}
    done: list[ir.FieldOperatorDef] = []
    seen: set[str] = set()

    def calls_in(expr: ir.Expr) -> list[str]:
        return [node.callee for node in nodes(expr) if isinstance(node, ir.Call)]

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for callee in calls_in(fops[name].body):
            visit(callee)
        done.append(fops[name])

    for fop in program.field_operators:
        visit(fop.name)
    return done
