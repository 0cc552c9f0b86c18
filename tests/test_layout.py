"""The tree shows the architecture: one folder per concept, layers that point one way.

Every import counts here — top-level, inside functions and under ``TYPE_CHECKING`` —
because a lazy import is still a dependency a reader has to follow.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("prompter", "modules")
LONG_FILE = 400
WHY_LONG = "Why this file is long:"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules ``name`` imports, resolved to the longest known module name."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    # `from prompter.x import y` resolves to `prompter.x.y` when y is a module, else to `prompter.x`
    return found


@functools.cache
def _graph() -> dict[str, set[str]]:
    sources = _sources()
    known = set(sources)
    return {name: _imports(name, path, known) for name, path in sources.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _without_package_inits(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Edges into a package's ``__init__`` that only re-exports are how a package is entered,
    not a dependency of its parts; edges out of it are real and stay."""
    inits = {n for n in graph if (ROOT / n.replace(".", "/") / "__init__.py").exists()}
    return {n: {t for t in targets if t not in inits or not n.startswith(t + ".")} for n, targets in graph.items()}


def test_the_import_graph_has_no_cycle() -> None:
    assert _cycles(_without_package_inits(_graph())) == []


def test_the_cycle_finder_sees_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_nothing_in_prompter_imports_modules() -> None:
    offenders = {
        name: sorted(t for t in targets if t.split(".")[0] == "modules")
        for name, targets in _graph().items()
        if name.split(".")[0] == "prompter"
    }
    assert {k: v for k, v in offenders.items() if v} == {}


@pytest.mark.parametrize(
    ("lower", "upper"),
    [
        ("prompter.messages", "prompter.conversation"),
        ("prompter.conversation", "prompter.render"),
        ("prompter.conversation", "prompter.formats"),
        ("prompter.render", "prompter.prompters"),
        ("prompter.formats", "prompter.prompters"),
        ("prompter.formats", "prompter.templates"),
    ],
    ids=lambda s: s.split(".")[-1],
)
def test_layers_point_one_way(lower: str, upper: str) -> None:
    back = {
        name: sorted(t for t in targets if t == upper or t.startswith(upper + "."))
        for name, targets in _graph().items()
        if name == lower or name.startswith(lower + ".")
    }
    assert {k: v for k, v in back.items() if v} == {}, f"{lower} must not import {upper}"


def test_each_concept_has_its_folder() -> None:
    where = {
        "prompter/prompters": {"base.py", "alpaca.py", "chat.py", "empty.py", "fastpath.py"},
        "prompter/formats": {"model_format.py", "registry.py", "derive.py", "sandbox.py", "spans.py"},
        "modules/online": {"module.py", "sources.py", "retry.py", "sse.py"},
        "modules/local": {"trainable.py", "safe_tokens.py", "tiny_model.py"},
        "modules/server": {"__init__.py"},
    }
    for folder, files in where.items():
        assert files <= {p.name for p in (ROOT / folder).glob("*.py")}, folder
    assert (ROOT / "prompter" / "formats" / "chat_templates" / "index.json").is_file()


def test_prompter_has_few_plain_files() -> None:
    plain = {p.name for p in (ROOT / "prompter").glob("*.py")} - {"__init__.py", "errors.py", "settings.py"}
    assert len(plain) <= 8, sorted(plain)


def test_a_long_file_says_why_at_its_top() -> None:
    unexplained = []
    for path in _sources().values():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > LONG_FILE and WHY_LONG not in (ast.get_docstring(ast.parse(text)) or ""):
            unexplained.append(f"{path.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    assert unexplained == [], f"over {LONG_FILE} lines without '{WHY_LONG}' in the module docstring"
