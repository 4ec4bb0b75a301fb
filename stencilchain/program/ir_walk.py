"""General walks over IR expressions: their nodes, their size, the names they read, and
the expression with some of its nodes replaced."""

from __future__ import annotations

from collections.abc import Iterator

from stencilchain.program import ir


def nodes(expr: ir.Expr) -> Iterator[ir.Expr]:
    """`expr` and every expression below it (a shared sub-expression where it occurs)."""
    yield expr
    for child in ir.children(expr):
        yield from nodes(child)


def distinct_nodes(expr: ir.Expr) -> Iterator[ir.Expr]:
    """`expr` and every expression below it, each shared sub-expression (the same object)
    once: a walk that stays linear on the DAGs that inlining makes."""
    seen: set[int] = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        stack.extend(ir.children(e))


def node_count(expr: ir.Expr) -> int:
    """The nodes of `expr` as a tree (a shared sub-expression counted where it occurs)."""
    return 1 + sum(node_count(c) for c in ir.children(expr))


def replace(expr: ir.Expr, target: ir.Expr, replacement: ir.Expr) -> ir.Expr:
    """`expr` with every sub-expression equal to `target` replaced by `replacement`."""
    if expr == target:
        return replacement
    return ir.map_children(expr, lambda e: replace(e, target, replacement))


def refs_in(*exprs: ir.Expr) -> tuple[ir.Ref, ...]:
    """The names `exprs` read, each once, in the order they first appear."""
    found: dict[str, ir.Ref] = {}

    def walk(node: ir.Expr) -> None:
        if isinstance(node, ir.Ref):
            found.setdefault(node.name, node)
        for child in ir.children(node):
            walk(child)

    for expr in exprs:
        walk(expr)
    return tuple(found.values())


def written_fields(program: ir.Program) -> frozenset[str]:
    """The fields (parameters and temporaries) that a call of `program` writes."""
    return frozenset(name for call in program.calls for name in call.outs)


def condition_scalars(*exprs: ir.Expr) -> tuple[str, ...]:
    """The scalars that the bounds of `exprs`' concat_where conditions name (`K < k_start`),
    each once, in the order they first appear."""
    found: dict[str, None] = {}
    for expr in exprs:
        for node in nodes(expr):
            if isinstance(node, ir.ConcatWhere):
                for interval in node.intervals:
                    for b in (*interval.starts, *interval.stops):
                        if isinstance(b.param, str):
                            found.setdefault(b.param)
                        elif b.param is not None:
                            found.update(dict.fromkeys(b.param.params()))
    return tuple(found)


def params_of(body: ir.Expr, program_params: tuple[ir.Param, ...]) -> tuple[ir.Param, ...]:
    """The parameters of a field operator made of `body`, written in a program's names:
    the names it reads, in the order they first appear, then the scalar parameters that
    only its conditions' bounds name (`K < k_start`)."""
    params = [ir.Param(ref.name, ref.type) for ref in refs_in(body)]
    named = {p.name for p in params}
    for name in condition_scalars(body):
        if name not in named:
            named.add(name)
            params += [p for p in program_params if p.name == name]
    return tuple(params)
