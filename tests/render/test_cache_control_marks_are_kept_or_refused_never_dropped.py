"""A ``cache_control`` mark (Anthropic's prompt caching) on a content part or a tool is kept, or refused by name.

Before, every dialect dropped it without a word: a caller who marked a long system prompt or document for
caching sent an Anthropic request with no mark, and paid for the whole prompt on every call. Now Anthropic's
body carries each mark on the block made from its part (system blocks, text, images, tool results) and on
its tool, and refuses a fifth; OpenAI's carries it as given; the dialects whose APIs have no such field
refuse it naming where it was; a malformed mark is refused where it was written; a local model's text is
the same with or without marks.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from prompter import ChatPrompter
from prompter.errors import MessageError, ToolsError, UnsupportedContentError

MARK = {"type": "ephemeral"}
HOUR = {"type": "ephemeral", "ttl": "1h"}
IMAGE = "data:image/png;base64,iVBORw0KGgo="


def _text(text: str, mark: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "text", "text": text, **({"cache_control": mark} if mark else {})}


def _tool(mark: dict[str, Any] | None = None) -> dict[str, Any]:
    function = {"name": "lookup", "description": "Look it up.", "parameters": {"type": "object", "properties": {}}}
    return {"type": "function", "function": function, **({"cache_control": mark} if mark else {})}


HISTORY = [
    {"role": "system", "content": [_text("A long shared policy.", MARK)]},
    {"role": "user", "content": [_text("A long document."), {"type": "image_url", "image_url": {"url": IMAGE}, "cache_control": HOUR}]},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": [_text("the result", MARK)]},
]


def _render(dialect: str, history: list[Any], tools: list[Any] | None = None, system: str = "Be brief.") -> Any:
    return ChatPrompter(system).generate_prompt("hi", format=dialect, history=history, tools=tools)


def test_anthropic_puts_each_mark_on_its_block_and_its_tool() -> None:
    body = _render("anthropic", HISTORY, [_tool(MARK)])
    own = _render("anthropic", [])["system"]  # the prompter's own system text
    assert body["system"] == [{"type": "text", "text": own}, {"type": "text", "text": "A long shared policy.", "cache_control": MARK}]
    user = body["messages"][0]["content"]
    assert user[0] == {"type": "text", "text": "A long document."}  # unmarked: no key
    assert user[1]["type"] == "image" and user[1]["cache_control"] == HOUR
    result = body["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["content"] == [{"type": "text", "text": "the result", "cache_control": MARK}]
    assert body["tools"][0]["cache_control"] == MARK and body["tools"][0]["name"] == "lookup"


def test_anthropic_system_stays_a_string_without_a_mark() -> None:
    body = _render("anthropic", [{"role": "system", "content": [_text("policy")]}])
    assert isinstance(body["system"], str) and body["system"].endswith("Be brief.\n\n\npolicy")


def test_anthropic_refuses_a_fifth_mark_as_the_api_would() -> None:
    four = [{"role": "user", "content": [_text(f"part {i}", MARK) for i in range(3)]}, {"role": "assistant", "content": "ok"}]
    assert "tools" in _render("anthropic", four, [_tool(MARK)])
    with pytest.raises(UnsupportedContentError, match="5 parts and tools carry it.*at most 4"):
        _render("anthropic", four, [_tool(MARK), {**_tool(MARK), "function": {"name": "other"}}])


def test_anthropic_refuses_a_mark_on_an_empty_text_part_naming_it() -> None:
    with pytest.raises(UnsupportedContentError, match=r"^history\[0\]\.content\[1\]: an empty text part cannot carry"):
        _render("anthropic", [{"role": "user", "content": [_text("doc"), _text("", MARK)]}, {"role": "assistant", "content": "ok"}])


def test_merging_the_turns_refuses_a_marked_text_part_and_keeps_a_marked_image() -> None:
    """strategy='multi_agent' makes one message of 'name: text' lines: a text part's mark would have no block."""
    text = [{"role": "user", "content": [_text("doc", MARK)]}, {"role": "assistant", "content": "ok"}]
    with pytest.raises(UnsupportedContentError, match=r"^history\[0\]\.content\[0\]\.cache_control: .*strategy='chat'"):
        ChatPrompter("x").generate_prompt("hi", format="anthropic", history=text, strategy="multi_agent")
    image = [{"role": "user", "content": [_text("doc"), {"type": "image_url", "image_url": {"url": IMAGE}, "cache_control": MARK}]}]
    body = ChatPrompter("x").generate_prompt("hi", format="anthropic", history=image, strategy="multi_agent")
    assert [block.get("cache_control") for block in body["messages"][0]["content"]] == [None, MARK]


def test_openai_sends_the_marks_as_given() -> None:
    body = _render("openai", HISTORY, [_tool(HOUR)])
    assert body["messages"][1]["content"] == [_text("A long shared policy.", MARK)]
    assert body["messages"][2]["content"][1]["cache_control"] == HOUR
    assert body["tools"] == [_tool(HOUR)]


@pytest.mark.parametrize("dialect", ["gemini", "ollama", "ollama_generate", "zhipu", "dashscope"])
def test_a_dialect_without_the_field_refuses_a_marked_part_naming_it(dialect: str) -> None:
    history = [{"role": "user", "content": [_text("doc"), _text("more", MARK)]}, {"role": "assistant", "content": "ok"}]
    with pytest.raises(UnsupportedContentError, match=r"^history\[0\]\.content\[1\]\.cache_control: .* takes no cache_control"):
        _render(dialect, history)


@pytest.mark.parametrize("dialect", ["gemini", "ollama", "zhipu", "dashscope"])
def test_a_dialect_without_the_field_refuses_a_marked_tool_naming_it(dialect: str) -> None:
    with pytest.raises(UnsupportedContentError, match=r"^tools\[1\]\.cache_control: .*format='anthropic'"):
        _render(dialect, [], [_tool(), {**_tool(MARK), "function": {"name": "other"}}])


@pytest.mark.parametrize(
    "mark",
    ["ephemeral", {"type": "persistent"}, {"type": "ephemeral", "ttl": "2h"}, {"type": "ephemeral", "scope": "x"}, {1: "x"}, None],
    ids=["a-str", "another-type", "another-ttl", "another-key", "an-int-key", "none"],
)
def test_a_malformed_mark_is_refused_where_it_was_written(mark: Any) -> None:
    with pytest.raises(MessageError, match=r"history\[0\]\.content\[0\]\.cache_control"):
        _render("anthropic", [{"role": "user", "content": [{"type": "text", "text": "doc", "cache_control": mark}]}])
    with pytest.raises(ToolsError, match=r"tools\[0\]\.cache_control"):
        _render("openai", [], [{**_tool(), "cache_control": mark}])


def test_nothing_the_caller_passed_is_changed() -> None:
    history, tools = copy.deepcopy(HISTORY), [_tool(MARK)]
    before = copy.deepcopy((history, tools))
    for dialect in ("anthropic", "openai"):
        body = _render(dialect, history, tools)
        (body.get("system") if dialect == "anthropic" else body["messages"][1]["content"])[-1]["cache_control"]["type"] = "x"
    assert (history, tools) == before


def test_a_local_model_text_is_the_same_with_or_without_marks() -> None:
    plain = [{"role": "user", "content": [_text("A long document.")]}, {"role": "assistant", "content": "ok"}]
    marked = [{"role": "user", "content": [_text("A long document.", MARK)]}, {"role": "assistant", "content": "ok"}]
    prompter = ChatPrompter("Be brief.")
    assert prompter.generate_prompt("hi", model_format="qwen2.5", history=marked) == prompter.generate_prompt(
        "hi", model_format="qwen2.5", history=plain
    )



def test_a_mark_on_a_whole_message_marks_its_last_block_for_anthropic_and_is_sent_as_given_for_openai() -> None:
    """LiteLLM's form: ``cache_control`` beside ``role`` and ``content``. It was dropped like an unknown key."""
    history = [
        {"role": "system", "content": "A long policy.", "cache_control": MARK},
        {"role": "user", "content": "A long document.", "cache_control": HOUR},
        {"role": "assistant", "content": "ok"},
    ]
    body = _render("anthropic", history)
    assert body["system"][-1] == {"type": "text", "text": "A long policy.", "cache_control": MARK}
    assert body["messages"][0] == {"role": "user", "content": [{"type": "text", "text": "A long document.", "cache_control": HOUR}]}
    assert _render("openai", history)["messages"][2] == {"role": "user", "content": "A long document.", "cache_control": HOUR}
    with pytest.raises(UnsupportedContentError, match=r"^history\[0\]\.cache_control: Gemini takes no cache_control"):
        _render("gemini", history[1:])
    with pytest.raises(MessageError, match=r"history\[1\]\.cache_control\.ttl"):
        _render("openai", [history[0], {**history[1], "cache_control": {"type": "ephemeral", "ttl": "1d"}}])


def test_a_local_model_takes_a_marked_message_as_an_unmarked_one() -> None:
    prompter = ChatPrompter("Be brief.")
    marked = [{"role": "user", "content": "A long document.", "cache_control": MARK}, {"role": "assistant", "content": "ok"}]
    plain = [{"role": "user", "content": "A long document."}, {"role": "assistant", "content": "ok"}]
    assert prompter.generate_prompt("hi", model_format="qwen2.5", history=marked) == prompter.generate_prompt(
        "hi", model_format="qwen2.5", history=plain
    )


class _Sly(str):
    """A str whose == always says yes and whose hash is one of "type"'s."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("type")


def test_a_str_subclass_that_says_yes_to_everything_passes_no_mark() -> None:
    for mark in ({"type": _Sly("persistent")}, {"type": "ephemeral", "ttl": _Sly("forever")}, {_Sly("scope"): "x", "type": "ephemeral"}):
        with pytest.raises(MessageError, match="cache_control"):
            _render("anthropic", [{"role": "user", "content": [{"type": "text", "text": "doc", "cache_control": mark}]}])
    body = _render("anthropic", [{"role": "user", "content": [{"type": "text", "text": "doc", "cache_control": {_Sly("type"): _Sly("ephemeral")}}]}])
    mark = body["messages"][0]["content"][0]["cache_control"]
    assert mark == {"type": "ephemeral"} and all(type(k) is str and type(v) is str for k, v in mark.items())
