"""``from prompter.modules import OnlineChatModule, TrainableModule`` — the I/O side, by a name nobody shadows.

The I/O package is the top-level ``modules`` folder installed beside ``prompter``.
``modules`` is a common name: an application with its own ``modules/`` package
on ``sys.path`` hides ours from ``from modules import ...``. This facade finds
ours by file location instead of by name:

- when the name ``modules`` is ours (the usual case), it re-exports from it, so
  ``prompter.modules.OnlineChatModule is modules.OnlineChatModule``;
- when another package holds the name, it loads a private copy of ours as
  ``prompter._modules`` (its own absolute ``modules.`` imports pointed there),
  leaving the application's ``modules`` package untouched.

Submodules are reached by their dotted name too (``from prompter.modules.playground import
create_playground_app``, ``import prompter.modules.server.lifecycle``): ``prompter.modules.X`` is
the very module object ``modules.X`` (or the private copy's), never a second copy of it.

``import prompter`` never imports this file: the pure package stays pure, and
nothing below runs until a name is asked for.
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

_OURS = Path(__file__).resolve().parent.parent / "modules"
_PRIVATE = "prompter._modules"
_OUR_NAME = re.compile(r"modules(\.[A-Za-z_][A-Za-z0-9_]*)*")
_FACADE = __name__

__path__: list[str] = []  # a package to the import system, so that `prompter.modules.X` is looked up (by _AliasFinder)


def __getattr__(name: str) -> Any:
    if name.startswith("__") and name not in ("__version__", "__all__"):
        raise AttributeError(name)
    package = _package()
    if not hasattr(package, name) and ((_OURS / f"{name}.py").is_file() or (_OURS / name / "__init__.py").is_file()):
        # a submodule or subpackage: `from prompter.modules import testing`, `... import eval`
        importlib.import_module(f"{package.__name__}.{name}")
    value = getattr(package, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_package().__all__))


def _package() -> ModuleType:
    """Our ``modules`` package: the one named ``modules`` if it is ours, else the private copy."""
    if not (_OURS / "__init__.py").is_file():
        raise ImportError(f"prompter.modules: the I/O package is not installed beside prompter (looked in {_OURS})")
    loaded = sys.modules.get("modules")
    if loaded is None:
        spec = importlib.util.find_spec("modules")
        if spec is not None and _is_ours(spec.origin):
            return importlib.import_module("modules")
    elif _is_ours(getattr(loaded, "__file__", None)):
        return loaded
    return _private_copy()


def _is_ours(origin: str | None) -> bool:
    return origin is not None and Path(origin).resolve() == (_OURS / "__init__.py").resolve()


def _private_copy() -> ModuleType:
    if _PRIVATE not in sys.modules:
        if not any(isinstance(finder, _PrivateFinder) for finder in sys.meta_path):
            sys.meta_path.insert(0, _PrivateFinder())
    return importlib.import_module(_PRIVATE)


class _PrivateFinder(importlib.abc.MetaPathFinder):
    """Finds ``prompter._modules`` and its submodules in our ``modules`` folder."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _PRIVATE and not fullname.startswith(_PRIVATE + "."):
            return None
        relative = fullname[len(_PRIVATE) :].lstrip(".").split(".") if fullname != _PRIVATE else []
        base = _OURS.joinpath(*relative)
        if (base / "__init__.py").is_file():
            origin, search = base / "__init__.py", [str(base)]
        elif base.with_suffix(".py").is_file():
            origin, search = base.with_suffix(".py"), None
        else:
            return None
        loader = _RenamingLoader(fullname, str(origin))
        return importlib.util.spec_from_file_location(
            fullname, origin, loader=loader, submodule_search_locations=search
        )


class _RenamingLoader(importlib.machinery.SourceFileLoader):
    """Compiles our source with its ``modules`` imports renamed to the private name.

    Never cached to ``__pycache__``: the cache belongs to the normal ``modules`` import.
    """

    def get_code(self, fullname: str) -> CodeType:
        path = self.get_filename(fullname)
        tree = _Rename().visit(ast.parse(self.get_data(path), path))
        return compile(ast.fix_missing_locations(tree), path, "exec", dont_inherit=True)


class _Rename(ast.NodeTransformer):
    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.ImportFrom:
        if node.level == 0 and node.module and _OUR_NAME.fullmatch(node.module):
            node.module = _PRIVATE + node.module[len("modules") :]
        return node

    def visit_Import(self, node: ast.Import) -> ast.stmt | list[ast.stmt]:
        ours = [alias for alias in node.names if _OUR_NAME.fullmatch(alias.name)]
        if not ours:
            return node
        statements: list[ast.stmt] = []
        for alias in node.names:
            if alias not in ours:
                statements.append(ast.Import(names=[alias]))
            elif alias.asname is not None:  # `import modules.x as y` binds the submodule itself
                statements.append(ast.Import(names=[ast.alias(_PRIVATE + alias.name[len("modules") :], alias.asname)]))
            else:  # `import modules.x` loads the submodule and binds the name `modules` to the package
                # (an alias, so that the name `prompter` is not bound in the importing module)
                target = _PRIVATE + alias.name[len("modules") :]
                statements.append(ast.Import(names=[ast.alias(target, "_prompter_private_import")]))
                statements.append(ast.ImportFrom(module="prompter", names=[ast.alias("_modules", "modules")], level=0))
        return [ast.copy_location(statement, node) for statement in statements]

    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        # dotted names handed to importlib.import_module (the lazy attribute tables)
        if isinstance(node.value, str) and node.value.startswith("modules.") and _OUR_NAME.fullmatch(node.value):
            node.value = _PRIVATE + node.value[len("modules") :]
        return node


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``prompter.modules.X`` as our ``X`` submodule itself: the same module object, loaded once."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_FACADE + "."):
            return None
        real = _package().__name__ + fullname[len(_FACADE) :]
        if real in sys.modules:
            found = sys.modules[real]
        elif importlib.util.find_spec(real) is None:
            return None
        else:
            found = importlib.import_module(real)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(found))


class _AliasLoader(importlib.abc.Loader):
    """Hands the import system a module already loaded under its own name, keeping that module's spec."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self.spec  # the import system set the alias's spec on it; the module keeps its own


if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())  # before the path finder, which would load a second copy
