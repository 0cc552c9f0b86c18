"""A declaration's flags, markers and implicit input key are checked when the class is defined.

Before, ``implicit_input_key = "a b"`` (or ``5``) was accepted and the extra-keys block then carried a
literal ``{a b}`` that no input could fill; ``response_split = 5`` and ``dict_extra_keys_separator = 5``
failed later with a bare ``TypeError`` from inside the library; ``allows_history = "no"`` was read as
true. Each is now a ``DeclarationError`` naming the attribute.
"""

from __future__ import annotations

from typing import Any

import pytest

from prompter import PrompterBase
from prompter.errors import DeclarationError


@pytest.mark.parametrize(
    ("attribute", "value"),
    [
        ("implicit_input_key", "a b"),
        ("implicit_input_key", "0"),
        ("implicit_input_key", 5),
        ("response_split", 5),
        ("dict_extra_keys_separator", 5),
        ("allows_history", "no"),
        ("allows_tools", None),
        ("allows_free_input", 1),
        ("uses_system", "yes"),
    ],
    ids=lambda value: repr(value),
)
def test_a_declared_value_of_the_wrong_kind_is_a_declaration_error(attribute: str, value: Any) -> None:
    with pytest.raises(DeclarationError, match=rf"\.{attribute} must be"):
        type("Declared", (PrompterBase,), {attribute: value})


def test_a_valid_implicit_input_key_receives_the_input() -> None:
    Declared = type("Declared", (PrompterBase,), {"implicit_input_key": "text", "response_split": "A:"})
    prompt = Declared(system="").generate_prompt({"text": "hi"})
    assert prompt == "Here are some extra messages you can referred to:\n\n### text:\nhi\n\n"
    assert Declared().get_response("Q: x A: y") == " y"
