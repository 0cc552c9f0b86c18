"""LazyLLM exports its modules from its top package; here ``from prompter import OnlineChatModule`` says where
they are, and ``import prompter`` still loads no module code."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("name", ["OnlineChatModule", "TrainableModule"])
def test_importing_a_module_class_from_prompter_names_prompter_modules(name: str) -> None:
    code = f"from prompter import {name}"
    with pytest.raises(ImportError, match=rf"from prompter\.modules import {name}"):
        exec(code, {})


def test_other_missing_names_keep_pythons_messages() -> None:
    import prompter

    with pytest.raises(ImportError, match="cannot import name 'NoSuchThing'"):
        exec("from prompter import NoSuchThing", {})
    assert not hasattr(prompter, "NoSuchThing")


def test_the_hint_imports_nothing_from_the_modules_side() -> None:
    code = (
        "import sys, prompter\n"
        "try:\n    from prompter import OnlineChatModule\nexcept ImportError:\n    pass\n"
        "print(sorted(m for m in sys.modules if m == 'modules' or m.startswith(('modules.', 'prompter.modules'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
