"""Each package exports exactly the names docs/reference.md documents."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference.md"


def documented(package: str) -> set[str]:
    text = REFERENCE.read_text(encoding="utf-8")
    section = re.search(rf"^## `{package}`\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section, f"docs/reference.md has no section for {package}"
    return set(re.findall(r"^\| `(\w+)` \|", section.group(1), re.M))


@pytest.mark.parametrize("package", ["prompter", "modules"])
def test_exports_are_exactly_the_documented_names(package: str) -> None:
    module = importlib.import_module(package)
    assert set(module.__all__) == documented(package)
    for name in module.__all__:
        assert getattr(module, name) is not None


def test_prompter_package_has_type_information() -> None:
    root = REFERENCE.parent.parent
    assert (root / "prompter" / "py.typed").exists()
    assert (root / "modules" / "py.typed").exists()


def test_importing_prompter_loads_no_heavy_dependency() -> None:
    import subprocess
    import sys

    code = "import sys, prompter; print(sorted(m for m in ('jinja2', 'requests', 'torch', 'transformers', 'logging') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


@pytest.mark.parametrize("package", ["prompter", "modules"])
def test_every_exported_name_is_in_the_generated_reference(package: str) -> None:
    # each name has a mkdocstrings directive of its own, or its whole defining module has one
    text = REFERENCE.read_text(encoding="utf-8")
    directives = set(re.findall(r"^::: ([\w.]+)$", text, re.M))
    module = importlib.import_module(package)
    missing = []
    for name in module.__all__:
        defined_in = getattr(module, name).__module__
        if not any(d.endswith(f".{name}") or d == defined_in for d in directives):
            missing.append(f"{name} (from {defined_in})")
    assert not missing, f"add a `::: path.Name` line to docs/reference.md for: {missing}"


@pytest.mark.parametrize("name", ["ChatPrompter", "AlpacaPrompter", "ModelFormat", "PromptError"])
@pytest.mark.parametrize("package", ["modules", "prompter.modules"])
def test_importing_a_prompter_name_from_the_io_package_names_where_it_is(package: str, name: str) -> None:
    with pytest.raises(ImportError, match=rf"from prompter import {name}$"):
        exec(f"from {package} import {name}", {})


def test_other_missing_names_of_the_io_package_keep_pythons_messages() -> None:
    with pytest.raises(ImportError, match="cannot import name 'NoSuchThing'"):
        exec("from prompter.modules import NoSuchThing", {})
