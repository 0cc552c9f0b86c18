"""A system message past the first, with whitespace at its edges, renders as the model's template does.

Skeletons learn from probes how a template treats each role's whitespace, but the probes only ever put
a system message first. Gemma 3 keeps the first system text as it is and trims a later one, Command R's
tool-use template likewise: once a conversation of the same shape had been seen, a later system
message's ``"  note  "`` kept its spaces (or a blank one stayed blank instead of empty). Every family,
primed with the same shape, must equal transformers.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_chat_templates_oracle import FAMILIES, normalised, oracle  # type: ignore[import-not-found]

from prompter.formats.model_format import ModelFormat

pytest.importorskip("transformers")

SHAPES = [
    ("system", "user", "system", "user"),
    ("user", "assistant", "system", "user"),
    ("system", "system", "user"),
    ("system", "user", "assistant", "system"),
]
PADDED = ["  note  ", " ", "\n x\n"]


def conversation(shape: tuple[str, ...], later_system: str | None) -> list[dict[str, Any]]:
    return [
        {"role": role, "content": later_system if later_system is not None and role == "system" and i else f"text {i}"}
        for i, role in enumerate(shape)
    ]


@pytest.mark.parametrize("tools", [None, []], ids=["no-tools", "empty-tools"])
@pytest.mark.parametrize("family", FAMILIES)
def test_a_padded_later_system_message_renders_as_transformers_renders_it(family: str, tools: Any) -> None:
    fmt = ModelFormat.get(family)
    for shape in SHAPES:
        for _ in range(2):  # the same shape seen before: later renders of it may take a skeleton
            try:
                fmt.render(conversation(shape, None), tools=tools)
            except Exception:  # noqa: BLE001 - a template that refuses the shape refuses the padded one too
                pass
        for padded in PADDED:
            messages = conversation(shape, padded)
            want_messages, want_tools = normalised(family, messages, tools)
            try:
                expected = oracle(family, want_messages, want_tools, True, {})
            except Exception:  # noqa: BLE001 - refused by transformers: not what this test is about
                continue
            assert fmt.render(messages, tools=tools) == expected, (shape, padded)
