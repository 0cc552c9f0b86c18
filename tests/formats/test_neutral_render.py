"""A conversation is validated once: model formats read the neutral messages a prompter built.

``ModelFormat.render_messages`` takes :class:`~prompter.messages.Message` values and gives
exactly what ``ModelFormat.render`` gives for their OpenAI dicts, without turning them back
into dicts to validate them a second time.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import prompter.formats.prepare as prepare
from prompter import ChatPrompter
from prompter.errors import PromptError
from prompter.formats.model_format import ModelFormat
from prompter.messages import Message, message_from_dict
from prompter.render.openai import message_dict

FAMILIES = ["qwen2.5", "llama-3.1", "mistral-v0.3-tools", "gemma-2", "deepseek-r1", "glm-4", "phi-4-mini", "chatml"]
TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
]
HISTORY: list[Any] = [
    ["q1", "a1"],
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}],
    },
    {"role": "tool", "tool_call_id": "call12345", "name": "get_weather", "content": "21"},
]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_bound_prompter_validates_its_conversation_once(family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def counting(raw: Any, where: str = "message") -> Message:
        calls.append(where)
        return message_from_dict(raw, where)

    monkeypatch.setattr(prepare, "message_from_dict", counting)
    fmt = ModelFormat.get(family)
    for _ in range(2):  # the second call may take the derived fast path; neither validates again
        try:
            ChatPrompter("Answer about {topic}.").generate_prompt(
                {"topic": "weather", "input": "And tomorrow?"}, history=HISTORY, tools=TOOLS, model_format=fmt
            )
        except PromptError:
            pass
    assert calls == [], f"the model format validated the prompter's messages again at {calls[:3]}"


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=10)
_args = st.dictionaries(st.sampled_from(["city", "a", "b"]), st.one_of(_text, st.integers(-5, 5)), max_size=2)
_call = st.builds(
    lambda name, args, as_text: {
        "id": "call12345",
        "type": "function",
        "function": {"name": name, "arguments": __import__("json").dumps(args) if as_text else args},
    },
    st.sampled_from(["get_weather", "add"]),
    _args,
    st.booleans(),
)
_message = st.one_of(
    st.builds(lambda r, c: {"role": r, "content": c}, st.sampled_from(["system", "user", "assistant", "tool"]), _text),
    st.builds(lambda calls: {"role": "assistant", "content": None, "tool_calls": calls}, st.lists(_call, min_size=1, max_size=2)),
    st.builds(
        lambda texts: {"role": "user", "content": [{"type": "text", "text": t} for t in texts]},
        st.lists(_text, min_size=1, max_size=2),
    ),
    st.builds(lambda c: {"role": "tool", "tool_call_id": "call12345", "name": "get_weather", "content": c}, _text),
)


@settings(max_examples=150, deadline=None)
@given(
    family=st.sampled_from(FAMILIES),
    dicts=st.lists(_message, min_size=1, max_size=5),
    tools=st.sampled_from([None, TOOLS]),
    add=st.booleans(),
)
def test_neutral_messages_render_as_their_openai_dicts_render(
    family: str, dicts: list[dict[str, Any]], tools: Any, add: bool
) -> None:
    fmt = ModelFormat.get(family)
    messages = [message_from_dict(d, f"messages[{i}]") for i, d in enumerate(dicts)]
    try:
        expected: str | type[PromptError] = fmt.render([message_dict(m) for m in messages], tools=tools, add_generation_prompt=add)
    except PromptError as exc:
        expected = type(exc)
    try:
        got: str | type[PromptError] = fmt.render_messages(messages, tools=tools, add_generation_prompt=add)
    except PromptError as exc:
        got = type(exc)
    assert got == expected
