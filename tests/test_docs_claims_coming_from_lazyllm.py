"""docs/coming-from-lazyllm.md: the sentences that claim a behaviour, each checked on the real parts."""

from __future__ import annotations

import json

import pytest

from prompter import ChatPrompter
from prompter.errors import UnsupportedContentError
from prompter.modules import ModuleConfigError, OnlineChatModule, testing

TOOLS = [{"type": "function", "function": {"name": "purr_rate", "description": "Ronronnements par minute.",
                                           "parameters": {"type": "object", "properties": {}}}}]


def test_text_tools_are_json_dumps_under_the_header_without_lazyllms_tool_token_preamble() -> None:
    text = ChatPrompter("Pick a tool.", system="S", tools=TOOLS).generate_prompt("q")
    assert "### Function-call Tools. \n\n" + json.dumps(TOOLS, ensure_ascii=False) + "\n\n" in text
    assert "tool name (one of" not in text and "<tool_call>" not in text


def test_a_doubled_brace_is_no_escape_and_only_identifiers_are_slots() -> None:
    p = ChatPrompter("{{topic}} {0} {a.b} {topic!r} {topic}", system="")
    content = p.generate_prompt({"topic": "T", "input": "q"}, format="openai")["messages"][0]["content"]
    assert content == "{T} {0} {a.b} {topic!r} T\n\n"


def test_a_key_listed_twice_in_extra_keys_gives_one_block() -> None:
    body = ChatPrompter("I", extra_keys=["c", "c"], system="S").generate_prompt({"c": "v", "input": "q"}, format="openai")
    assert body["messages"][0]["content"].count("### c:\n") == 1


def test_text_history_joins_text_parts_and_refuses_an_image_part_naming_an_api_format() -> None:
    p = ChatPrompter("I", system="S")
    text_parts = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert "<|Human|>:a\nb<|Assistant|>:x" in p.generate_prompt(
        "q", history=[{"role": "user", "content": text_parts}, {"role": "assistant", "content": "x"}])
    image = [*text_parts, {"type": "image_url", "image_url": {"url": "http://127.0.0.1/a.png"}}]
    with pytest.raises(UnsupportedContentError, match="format='openai'"):
        p.generate_prompt("q", history=[{"role": "user", "content": image}, {"role": "assistant", "content": "x"}])


def test_a_system_message_among_the_turns_of_text_history_is_rendered_where_it_stands() -> None:
    history = [{"role": "user", "content": "a"}, {"role": "system", "content": "SYS2"}, {"role": "assistant", "content": "b"}]
    text = ChatPrompter("I", system="S").generate_prompt("q", history=history)
    assert "<|Human|>:a<|start_system|>SYS2<|end_system|><|Assistant|>:b" in text


def test_skills_is_a_type_error_and_there_is_no_pre_hook() -> None:
    with pytest.raises(TypeError, match="skills"):
        ChatPrompter("x", skills=["a"])  # type: ignore[call-arg]
    assert not hasattr(ChatPrompter("x"), "pre_hook")


@pytest.mark.parametrize(("keyword", "replacement"), [
    ("format", "parse it yourself"), ("stream", "m.stream(input)"), ("history", "m(input, history=[...])"),
])
def test_share_with_a_lazyllm_keyword_is_a_config_error_naming_its_replacement(keyword: str, replacement: str) -> None:
    with testing.FakeOpenAIServer() as server:
        m = OnlineChatModule(source="openai", model="m", base_url=server.base_url, api_key="sk-demo")
        with pytest.raises(ModuleConfigError, match=f"share\\({keyword}=") as err:
            m.share(**{keyword: True})
        assert replacement in str(err.value)
        assert server.requests == []


def test_share_without_a_prompt_keeps_the_modules_prompter() -> None:
    p = ChatPrompter("You answer questions about {topic}.", system="S")
    with testing.FakeOpenAIServer(replies=["a", "b"]) as server:
        m = OnlineChatModule(source="openai", model="m", base_url=server.base_url, api_key="sk-demo").prompt(p)
        m.share()({"topic": "cats", "input": "Why?"})
        m({"topic": "cats", "input": "Why?"})
        first, second = (r.json()["messages"] for r in server.requests)
    assert first == second == p.generate_prompt({"topic": "cats", "input": "Why?"}, format="openai")["messages"]


@pytest.mark.parametrize("name", ["OnlineChatModule", "TrainableModule"])
def test_importing_a_module_from_prompter_names_the_import_line(name: str) -> None:
    with pytest.raises(ImportError, match=f"from prompter.modules import {name}"):
        exec(f"from prompter import {name}", {})
