"""Imports inside ``prompter/formats`` point one way: no module imports one that imports it back.

Every import counts, wherever it is written: at the top, inside a function (a lazy
import) or under ``TYPE_CHECKING``, because each is a dependency a reader must follow.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "prompter" / "formats"
PREFIX = "prompter.formats."


def imports_of(path: Path) -> set[str]:
    """The ``prompter.formats`` modules ``path`` imports, anywhere in the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(PREFIX):
                found.add(node.module[len(PREFIX) :].split(".")[0])
            elif node.module == "prompter.formats":
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name[len(PREFIX) :].split(".")[0] for a in node.names if a.name.startswith(PREFIX))
    return found


def graph() -> dict[str, set[str]]:
    modules = {p.stem: p for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    return {name: imports_of(path) & set(modules) - {name} for name, path in modules.items()}


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the list of modules along it, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_graph_is_read() -> None:
    edges = graph()
    assert {"model_format", "registry", "fixed", "prepare", "derive", "sandbox", "spans"} <= set(edges)
    assert "fixed" in edges["model_format"]


def test_formats_modules_import_each_other_one_way_only() -> None:
    found = cycle(graph())
    assert found is None, "import cycle: " + " -> ".join(found or ())
