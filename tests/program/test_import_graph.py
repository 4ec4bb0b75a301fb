"""No import circle inside stencilchain/program: every module of the layer imports only
modules below it. Every import statement counts, at module level or inside a function,
except those under `if TYPE_CHECKING:` (annotations only)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

# (`stencilchain.program` as an attribute is the @program decorator)
PROGRAM = Path(importlib.import_module("stencilchain.program").__path__[0])


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """The ids of the nodes under an `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
            ):
                for statement in node.body:
                    skipped.update(id(n) for n in ast.walk(statement))
    return skipped


def import_graph(folder: Path, package: str) -> dict[str, set[str]]:
    """Each module of the package in `folder` (named `package`) and the modules of that
    package it imports."""
    modules = {
        package if p.name == "__init__.py" else f"{package}.{p.stem}": p
        for p in sorted(folder.glob("*.py"))
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_nodes(tree)
        targets: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                targets.add(base)
                targets.update(f"{base}.{alias.name}" for alias in node.names)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_circle_in_program() -> None:
    graph = import_graph(PROGRAM, "stencilchain.program")
    assert len(graph) > 20  # the modules were found
    assert circles(graph) == [], "import circles in stencilchain/program: " + "; ".join(
        " <-> ".join(m.rsplit(".", 1)[-1] for m in c) for c in circles(graph)
    )


def test_a_circle_is_found(tmp_path: Path) -> None:
    """The check sees a circle made by a late import inside a function, and ignores one
    closed only under TYPE_CHECKING."""
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "a.py").write_text("from pkg import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from pkg.c import g\n")
    (tmp_path / "c.py").write_text("from . import a\n")
    (tmp_path / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import e\n"
    )
    (tmp_path / "e.py").write_text("import pkg.d\n")
    graph = import_graph(tmp_path, "pkg")
    assert circles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]
    assert graph["pkg.d"] == set()
    assert graph["pkg.e"] == {"pkg.d"}
