"""`if` statements and conditional expressions on traced bool scalars joined where they end,
so that a function with many of them is traced once instead of once per path.

program/branches.py traces a function once per path through its conditions: n `if`s one
after another take 2**n runs. Here the function's source is rewritten (its AST, compiled
with the same file and lines, so errors point at the user's lines) so that each `if` whose
condition turns out to be a traced bool scalar runs both of its branches, one after the
other from the same variables, and then binds every variable either branch assigns to
`sc.where(cond, then, else)`; `a if c else b` becomes the join of both sides. A condition
that is a Python value still picks one branch, as Python does; one on a field or a
non-bool scalar raises the usual error.

A join is made only where it is exact, i.e. gives what the paths would give: both values
the same dtype (a Python literal counts with the dtype gt4py gives it, float64 for a float),
tuples of the same length, a variable bound on both sides or on neither. Otherwise, or
where the rewrite does not apply (no source, an `if` with `return`, `break`, `continue` or
`yield` inside, which stays a Python `if` traced per path; `global`, `nonlocal`, a closure
over `__class__`), tracing falls back to the paths (branches.py).
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
import textwrap
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.constructs import where
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.literal_rules import fixed_literal
from stencilchain.program.tracing import Symbol

_HELPER = "__sc_ifj"
_PREFIX = "__sc_"


class NotJoinable(BaseException):
    """A join that would not be exact: branches.py traces the paths instead. A
    BaseException so that a user's `except Exception` does not swallow it."""


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()  # a variable not bound (before the `if`, or after one branch)


def traced(cond: object) -> bool:
    """Whether `cond` is a traced bool scalar: its `if` runs both branches."""
    if not isinstance(cond, Symbol):
        return False
    t = cond.type
    return isinstance(t, ScalarType) and t.name == "bool"


def _dtype_name(value: object) -> str | None:
    if isinstance(value, Symbol):
        t = value.type
        return t.dtype.name if isinstance(t, ir.FieldType) else t.name
    if isinstance(value, (bool, int, float, np.generic)):
        return str(np.asarray(fixed_literal(value)).dtype)
    return None


def merge(cond: Symbol, then: object, otherwise: object) -> object:
    """The value of a variable after an `if` on `cond` whose branches left `then` and
    `otherwise`; NotJoinable where the join would not be what the paths give."""
    if then is otherwise:
        return then
    if then is UNSET or otherwise is UNSET:
        return UNSET  # a later use is a NameError, and the paths report it where it is
    if isinstance(then, tuple) or isinstance(otherwise, tuple):
        if not (
            isinstance(then, tuple)
            and isinstance(otherwise, tuple)
            and type(then) is type(otherwise)
            and len(then) == len(otherwise)
        ):
            raise NotJoinable
        joined = tuple(merge(cond, a, b) for a, b in zip(then, otherwise, strict=True))
        if hasattr(then, "_fields"):  # a NamedTuple stays one
            named: Any = type(then)
            return named(*joined)
        return joined
    if isinstance(then, Symbol) and isinstance(otherwise, Symbol) and then.expr == otherwise.expr:
        return then
    a, b = _dtype_name(then), _dtype_name(otherwise)
    if a is None or b is None or a != b:
        raise NotJoinable
    plain = not isinstance(then, Symbol) and not isinstance(otherwise, Symbol)
    if plain and type(then) is type(otherwise) and then == otherwise:
        return then
    try:
        joined_value = where(cond, then, otherwise)
    except DefinitionError:
        raise NotJoinable from None
    if _dtype_name(joined_value) != a:
        raise NotJoinable
    return joined_value


def ifexp(cond: object, then: Callable[[], object], otherwise: Callable[[], object]) -> object:
    """`then() if cond else otherwise()`, both sides joined if `cond` is traced."""
    if traced(cond):
        assert isinstance(cond, Symbol)
        return merge(cond, then(), otherwise())
    return then() if cond else otherwise()


def joined(fn: Callable[..., object]) -> Callable[..., object] | None:
    """`fn` with its `if`s joined where they end, or None where the rewrite does not apply
    or changes nothing."""
    if not isinstance(fn, types.FunctionType):
        return None
    maker = _maker(fn.__code__)
    if maker is None:
        return None
    try:
        cells = [c.cell_contents for c in fn.__closure__ or ()]
    except ValueError:  # a closure variable not bound yet
        return None
    made = types.FunctionType(maker, fn.__globals__)(sys.modules[__name__], *cells)
    assert isinstance(made, types.FunctionType)
    made.__defaults__ = fn.__defaults__
    made.__kwdefaults__ = fn.__kwdefaults__
    made.__annotations__ = dict(fn.__annotations__)
    made.__qualname__ = fn.__qualname__
    made.__module__ = fn.__module__
    return made


@functools.lru_cache(maxsize=256)
def _maker(code: types.CodeType) -> types.CodeType | None:
    """The code of `def maker(helper, *free): def fn...; return fn` for the rewritten
    function of `code`, or None."""
    if "__class__" in code.co_freevars or code.co_name == "<lambda>":
        return None
    if not _may_branch(code):
        return None  # no `if` to join: its source is not read (findsource, on its first use
        # in a process, looks at the file of every module loaded: milliseconds)
    try:
        lines, first = inspect.findsource(code)
        source = textwrap.dedent("".join(inspect.getblock(lines[first:])))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    fn_def = tree.body[0]
    if fn_def.name != code.co_name:
        return None
    for node in ast.walk(fn_def):
        if isinstance(node, (ast.Global, ast.Nonlocal)) or (
            isinstance(node, ast.Name) and node.id.startswith(_PREFIX)
        ):
            return None
    ast.increment_lineno(tree, first)
    rewriter = _Rewriter()
    rewriter.generic_visit(fn_def)
    if not rewriter.changed:
        return None
    fn_def.decorator_list = []
    args = fn_def.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            arg.annotation = None
    args.defaults = []
    args.kw_defaults = [None] * len(args.kwonlyargs)
    fn_def.returns = None
    maker_args = [ast.arg(_HELPER), *(ast.arg(name) for name in code.co_freevars)]
    maker_def = ast.FunctionDef(
        name=_PREFIX + "make",
        args=ast.arguments(
            posonlyargs=[], args=maker_args, kwonlyargs=[], kw_defaults=[], defaults=[]
        ),
        body=[fn_def, ast.Return(ast.Name(fn_def.name, ast.Load()))],
        decorator_list=[],
    )
    ast.copy_location(maker_def, fn_def)
    module = ast.Module(body=[maker_def], type_ignores=[])
    ast.fix_missing_locations(module)
    compiled = compile(module, code.co_filename, "exec", dont_inherit=True)
    for const in compiled.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == maker_def.name:
            return const
    return None  # pragma: no cover - the maker is always there


@functools.cache
def _conditional_jumps() -> frozenset[int]:
    """The opcodes of this Python's conditional jumps."""
    import opcode

    return frozenset(k for k, name in enumerate(opcode.opname) if "_IF_" in name)


def _may_branch(code: types.CodeType) -> bool:
    """Whether `code`, or code inside it (a comprehension, a nested function), has a
    conditional jump: every `if` statement and conditional expression compiles to one (but
    an `if` on a constant, whose branch Python picks at compile time as a join would)."""
    jumps = _conditional_jumps()
    if any(op in jumps for op in code.co_code[::2]):  # an instruction is two bytes, opcode first
        return True
    return any(isinstance(c, types.CodeType) and _may_branch(c) for c in code.co_consts)


def _escapes(node: ast.AST, in_loop: bool = False) -> bool:
    """Whether `node` has a `return`, `yield` or `await`, or a `break`/`continue` of a loop
    outside it (nested functions and classes excluded)."""
    if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await)):
        return True
    if isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
        return True
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        loop = in_loop or (isinstance(node, (ast.For, ast.While)) and child in node.body)
        if _escapes(child, loop):
            return True
    return False


def _bound_names(nodes: list[ast.stmt]) -> list[str]:
    """The local names the statements bind or delete (not inside nested scopes, except a
    comprehension's `:=`)."""
    names: set[str] = set()

    def visit(node: ast.AST, in_comprehension: bool) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if not in_comprehension:
                names.add(node.id)
        elif isinstance(node, ast.NamedExpr):
            assert isinstance(node.target, ast.Name)
            names.add(node.target.id)
            visit(node.value, in_comprehension)
            return
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            for d in node.decorator_list:
                visit(d, in_comprehension)
            return
        elif isinstance(node, ast.Lambda):
            return
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        inner = in_comprehension or isinstance(
            node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
        )
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    for stmt in nodes:
        visit(stmt, False)
    return sorted(names)


def _stmts(text: str, at: ast.AST) -> list[ast.stmt]:
    """The statements of `text`, at the location of `at` (the user's `if`)."""
    body = ast.parse(text).body
    for stmt in body:
        for sub in ast.walk(stmt):
            if isinstance(sub, (ast.stmt, ast.expr, ast.excepthandler)):
                ast.copy_location(sub, at)
    return body


class _Rewriter(ast.NodeTransformer):
    def __init__(self) -> None:
        self.count = 0
        self.changed = False

    # nested functions, classes and lambdas keep their `if`s
    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return node

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        if any(
            isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await))
            for n in ast.walk(node)
        ):
            return node
        self.changed = True
        no_args = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
        call = ast.Call(
            func=ast.Attribute(ast.Name(_HELPER, ast.Load()), "ifexp", ast.Load()),
            args=[node.test, ast.Lambda(no_args, node.body), ast.Lambda(no_args, node.orelse)],
            keywords=[],
        )
        return ast.copy_location(call, node)

    def visit_If(self, node: ast.If) -> Any:
        names = _bound_names([*node.body, *node.orelse])
        self.generic_visit(node)
        if _escapes(node):
            return node
        self.changed = True
        self.count += 1
        k = self.count
        h = _HELPER
        c, t, b = f"{_PREFIX}c{k}", f"{_PREFIX}t{k}", f"{_PREFIX}b{k}"
        condition = ast.Assign(targets=[ast.Name(c, ast.Store())], value=node.test)
        out: list[ast.stmt] = [condition]
        out += _stmts(f"{t} = {h}.traced({c})", node)
        save: list[ast.stmt] = []
        then_values: list[ast.stmt] = []
        restore: list[ast.stmt] = []
        join: list[ast.stmt] = []
        for i, v in enumerate(names):
            old, new, other, m = (f"{_PREFIX}{x}{k}_{i}" for x in "onem")
            save += _stmts(f"try:\n {old} = {v}\nexcept NameError:\n {old} = {h}.UNSET", node)
            then_values += _stmts(
                f"try:\n {new} = {v}\nexcept NameError:\n {new} = {h}.UNSET", node
            )
            restore += _stmts(
                f"if {old} is {h}.UNSET:\n try:\n  del {v}\n except NameError:\n  pass\n"
                f"else:\n {v} = {old}",
                node,
            )
            join += _stmts(
                f"try:\n {other} = {v}\nexcept NameError:\n {other} = {h}.UNSET\n"
                f"{m} = {h}.merge({c}, {new}, {other})\n"
                f"if {m} is {h}.UNSET:\n try:\n  del {v}\n except NameError:\n  pass\n"
                f"else:\n {v} = {m}",
                node,
            )
        out += [
            ast.If(
                test=ast.Name(t, ast.Load()),
                body=[*save, *_stmts(f"{b} = True", node)],
                orelse=[
                    ast.If(
                        test=ast.Name(c, ast.Load()),
                        body=_stmts(f"{b} = True", node),
                        orelse=_stmts(f"{b} = False", node),
                    )
                ],
            ),
            ast.If(test=ast.Name(b, ast.Load()), body=node.body, orelse=[]),
        ]
        if node.orelse or names:
            if then_values or restore:
                out.append(ast.If(ast.Name(t, ast.Load()), [*then_values, *restore], []))
            if node.orelse:
                out += _stmts(f"if {t} or not {b}:\n pass", node)
                assert isinstance(out[-1], ast.If)
                out[-1].body = node.orelse
            if join:
                out.append(ast.If(ast.Name(t, ast.Load()), join, []))
        for stmt in out:
            ast.copy_location(stmt, node)
        return out
