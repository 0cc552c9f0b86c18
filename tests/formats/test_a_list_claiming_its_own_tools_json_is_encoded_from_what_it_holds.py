"""Threat: a tools list that carries a ``tools_json`` attribute of its own decides what the model is told.

``ModelFormat.render`` took any list's ``tools_json`` string as the tools' JSON without encoding the
list, so a list subclass whose attribute was stale or false (a registry list caching its JSON, then
appended to) rendered tools other than the ones it held, from the first call. Only the prompter's own
immutable tool set (``ReadOnlyList``) is taken at its word now; every other list is encoded from what it
holds, as transformers does.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from transformers.utils.chat_template_utils import render_jinja_template

from prompter.formats.fixed import template_source
from prompter.formats.model_format import ModelFormat

WEATHER = {
    "type": "function",
    "function": {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object", "properties": {}}},
}
ADD = {"type": "function", "function": {"name": "add", "description": "Sum.", "parameters": {"type": "object", "properties": {}}}}
MESSAGES = [{"role": "user", "content": "hi"}]


class Claims(list):  # type: ignore[type-arg]
    """A list whose ``tools_json`` names only its first tool."""

    tools_json: str


def transformers_says(fmt: ModelFormat, tools: list[Any]) -> str:
    specials = {k: v for k, v in (("bos_token", fmt.bos_token), ("eos_token", fmt.eos_token)) if v is not None}
    out = render_jinja_template(
        [MESSAGES], tools=tools, chat_template=template_source(fmt, tools), add_generation_prompt=True, **specials
    )
    rendered = out[0] if isinstance(out, tuple) else out
    return str(rendered[0] if isinstance(rendered, list) else rendered)


@pytest.mark.parametrize("family", ["qwen2.5", "hermes-2-pro", "llama-3.1", "mistral-v0.3-tools"])
def test_a_false_tools_json_never_replaces_the_tools_held(family: str) -> None:
    fmt = ModelFormat.get(family)
    tools = Claims([WEATHER, ADD])
    tools.tools_json = json.dumps([WEATHER])
    for _ in range(3):  # the first render and the cached paths after it
        assert fmt.render(MESSAGES, tools=tools) == transformers_says(fmt, [WEATHER, ADD])


def test_a_list_appended_to_after_its_claim_renders_what_it_now_holds() -> None:
    fmt = ModelFormat.get("qwen2.5")
    tools = Claims([WEATHER])
    tools.tools_json = json.dumps([WEATHER])
    for _ in range(3):
        fmt.render(MESSAGES, tools=tools)
    tools.append(ADD)
    assert '"add"' in fmt.render(MESSAGES, tools=tools)
