"""General walks over IR expressions: their nodes, their size, the names they read, and
the expression with some of its nodes replaced."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from stencilchain.program import ir


def nodes(expr: ir.Expr) -> Iterator[ir.Expr]:
    """`expr` and every expression below it, in the order a walk of the tree meets them
    first (depth first, children in field order), each object once: a shared
    sub-expression is not walked again (docs/adr/0056)."""
    seen: set[int] = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        stack.extend(reversed(ir.children(e)))


def shared_nodes(*roots: ir.Expr) -> set[int]:
    """The ids of the nodes below `roots` that more than one node (or root) holds: where
    a walk that goes by the tree would visit the same object again."""
    seen: set[int] = set()
    shared: set[int] = set()
    stack = list(roots)
    while stack:
        e = stack.pop()
        if id(e) in seen:
            shared.add(id(e))
            continue
        seen.add(id(e))
        stack.extend(ir.children(e))
    return shared


def node_count(expr: ir.Expr) -> int:
    """The nodes of `expr` as a tree (a shared sub-expression counted where it occurs),
    counted in the DAG's time (each object's count once)."""
    counts: dict[int, int] = {}
    for e in _post_order(expr):
        counts[id(e)] = 1 + sum(counts[id(c)] for c in ir.children(e))
    return counts[id(expr)]


def _post_order(expr: ir.Expr) -> Iterator[ir.Expr]:
    """Each distinct node below `expr` once, after all of its children."""
    done: set[int] = set()
    stack: list[tuple[ir.Expr, bool]] = [(expr, False)]
    while stack:
        e, expanded = stack.pop()
        if id(e) in done:
            continue
        if expanded:
            done.add(id(e))
            yield e
            continue
        stack.append((e, True))
        stack.extend((c, False) for c in ir.children(e) if id(c) not in done)


def replace(expr: ir.Expr, target: ir.Expr, replacement: ir.Expr) -> ir.Expr:
    """`expr` with every sub-expression equal to `target` replaced by `replacement` (each
    shared sub-expression once: the result shares what `expr` shares)."""

    def step(e: ir.Expr, again: Callable[[ir.Expr], ir.Expr]) -> ir.Expr:
        return replacement if e == target else ir.map_children(e, again)

    return rewrite(expr, step)


def rewrite(
    expr: ir.Expr, step: Callable[[ir.Expr, Callable[[ir.Expr], ir.Expr]], ir.Expr]
) -> ir.Expr:
    """`step(expr, again)`, where `again` rewrites a sub-expression the same way, once per
    object: a bottom-up or top-down rewrite that costs the DAG's size and keeps its sharing.
    `step` must give the same result for the same object wherever it occurs."""
    done: dict[int, tuple[ir.Expr, ir.Expr]] = {}

    def again(e: ir.Expr) -> ir.Expr:
        known = done.get(id(e))
        if known is None:
            known = done[id(e)] = (e, step(e, again))  # `e` kept: its id stays its own
        return known[1]

    return again(expr)


def refs_in(*exprs: ir.Expr) -> tuple[ir.Ref, ...]:
    """The names `exprs` read, each once, in the order they first appear."""
    found: dict[str, ir.Ref] = {}
    for expr in exprs:
        for node in nodes(expr):
            if isinstance(node, ir.Ref):
                found.setdefault(node.name, node)
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
