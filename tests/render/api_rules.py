"""What each API accepts, written from the providers' public docs, as small validators.

Each ``check_<dialect>(body)`` raises AssertionError naming the first rule a body breaks:
the roles a message may have, the part types a role may carry, alternation and the final
turn where the API demands them, tool results answering an earlier call, base64 that
decodes. They check shape, not meaning; the tests check meaning.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from typing import Any

__all__ = ["CHECKS"]


def _b64(data: Any, where: str) -> bytes:
    assert isinstance(data, str) and data, f"{where}: base64 data must be a non-empty str"
    assert not data.startswith("data:"), f"{where}: raw base64 expected, not a data: URL"
    try:
        return base64.b64decode(data, validate=True)
    except binascii.Error as exc:
        raise AssertionError(f"{where}: not base64 ({exc})") from None


def _data_url(url: str, where: str) -> None:
    match = re.fullmatch(r"data:([a-z]+/[\w.+-]+);base64,(.+)", url, re.S)
    assert match, f"{where}: malformed data URL {url[:40]!r}"
    _b64(match.group(2), where)


def _url(url: Any, where: str) -> None:
    assert isinstance(url, str), f"{where}: URL must be a str"
    if url.startswith("data:"):
        _data_url(url, where)
    else:
        assert re.match(r"https?://", url), f"{where}: the API cannot fetch {url[:40]!r}"


# OpenAI chat completions: https://platform.openai.com/docs/api-reference/chat/create
_OPENAI_NAME = re.compile(r"[a-zA-Z0-9_-]+")  # the API's pattern since 2024


def check_openai(body: dict[str, Any], names: bool = True) -> None:
    messages = body["messages"]
    assert isinstance(messages, list) and messages, "messages must be a non-empty list"
    pending: set[str] = set()
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        assert m["role"] in ("system", "user", "assistant", "tool"), f"{where}: role {m['role']!r}"
        allowed = (
            {"role", "content", "name", "tool_calls", "tool_call_id"}
            if names
            else {"role", "content", "tool_calls", "tool_call_id"}
        )
        assert set(m) <= allowed, f"{where}: unknown keys {set(m) - allowed}"
        if "name" in m and m["role"] != "tool":
            assert _OPENAI_NAME.fullmatch(m["name"]), f"{where}: name {m['name']!r} breaks the API's pattern"
        content = m["content"]
        if m["role"] == "tool":
            assert m.get("tool_call_id") in pending, f"{where}: tool result answers no open call"
            pending.discard(m["tool_call_id"])
        else:
            assert not pending, f"{where}: tool calls {pending} left unanswered"
        if m.get("tool_calls"):
            assert m["role"] == "assistant", f"{where}: only assistant messages call tools"
            for call in m["tool_calls"]:
                assert call["type"] == "function" and isinstance(call["function"]["arguments"], str)
                pending.add(call["id"])
        elif m["role"] == "assistant":
            assert content is not None, f"{where}: assistant content may be null only with tool calls"
        if isinstance(content, list):
            kinds = {"text", "image_url", "input_audio"} if m["role"] == "user" else {"text"}
            for k, part in enumerate(content):
                assert part["type"] in kinds, f"{where}.content[{k}]: {part['type']} not allowed for {m['role']}"
                if part["type"] == "image_url":
                    _url(part["image_url"]["url"], f"{where}.content[{k}]")
                if part["type"] == "input_audio":
                    assert part["input_audio"]["format"] in ("wav", "mp3")
                    _b64(part["input_audio"]["data"], f"{where}.content[{k}]")
        else:
            assert content is None or isinstance(content, str), f"{where}: content must be str or parts"


def check_zhipu(body: dict[str, Any]) -> None:
    check_openai(body, names=False)


# Anthropic Messages: https://docs.anthropic.com/en/api/messages
_ANTHROPIC_IMAGES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def check_anthropic(body: dict[str, Any]) -> None:
    assert set(body) <= {"system", "messages", "tools"}
    assert "system" not in body or isinstance(body["system"], str)
    messages = body["messages"]
    # No rule on the first message's role: the reference asks for alternating turns (it combines consecutive
    # ones) and shows "a single user-role message, or ... multiple user and assistant messages"; the older
    # "the first message must always use the user role" is gone from it, so an assistant turn may open.
    # Nor on two messages of one role in a row: "Consecutive user or assistant turns in your request will be
    # combined into a single turn", so the blocks below are checked as the one turn they become.
    assert messages, "messages must not be empty"
    open_calls: set[str] = set()
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        assert m["role"] in ("user", "assistant"), f"{where}: role {m['role']!r}"
        blocks = m["content"]
        if isinstance(blocks, str):
            assert blocks, f"{where}: empty text"
            blocks = [{"type": "text", "text": blocks}]
        assert blocks, f"{where}: empty content"
        kinds = {"text", "image", "tool_result"} if m["role"] == "user" else {"text", "tool_use"}
        answered = set()
        for k, block in enumerate(blocks):
            here = f"{where}.content[{k}]"
            assert block["type"] in kinds, f"{here}: {block['type']} not allowed for {m['role']}"
            if block["type"] == "text":
                assert block["text"], f"{here}: empty text block"
            elif block["type"] == "image":
                source = block["source"]
                if source["type"] == "base64":
                    assert source["media_type"] in _ANTHROPIC_IMAGES
                    _b64(source["data"], here)
                else:
                    assert source["type"] == "url"
                    _url(source["url"], here)
            elif block["type"] == "tool_use":
                assert isinstance(block["input"], dict)
                open_calls.add(block["id"])
            else:
                assert block["tool_use_id"] in open_calls, f"{here}: tool_result answers no tool_use"
                answered.add(block["tool_use_id"])
        if m["role"] == "user":
            open_calls -= answered
        # "text content blocks must contain non-whitespace text": a turn of whitespace text and nothing else
        assert not all(b["type"] == "text" and not b["text"].strip() for b in blocks), f"{where}: only whitespace"
    last = messages[-1]["content"]
    last_text = last if isinstance(last, str) else last[-1].get("text", "") if last[-1]["type"] == "text" else ""
    if messages[-1]["role"] == "assistant":  # "final assistant content cannot end with trailing whitespace"
        assert last_text == last_text.rstrip(), "the final assistant content ends in whitespace"


# Gemini generateContent: https://ai.google.dev/api/generate-content
def check_gemini(body: dict[str, Any]) -> None:
    assert set(body) <= {"system_instruction", "contents", "tools"}
    contents = body["contents"]
    assert contents and contents[0]["role"] == "user", "the first turn must be the user's"
    assert contents[-1]["role"] == "user", "the last turn must be the user's"
    for i, c in enumerate(contents):
        where = f"contents[{i}]"
        assert c["role"] in ("user", "model"), f"{where}: role {c['role']!r}"
        if i:
            assert c["role"] != contents[i - 1]["role"], f"{where}: user and model must alternate"
        assert c["parts"], f"{where}: no parts"
        for k, part in enumerate(c["parts"]):
            here = f"{where}.parts[{k}]"
            (kind,) = part
            # Media may stand in either role: Content's parts carry no rule by role, and image models answer
            # with inline_data parts in model turns that multi-turn editing sends back as history.
            allowed = (
                {"text", "inline_data", "file_data", "functionResponse"}
                if c["role"] == "user"
                else {"text", "inline_data", "file_data", "functionCall"}
            )
            assert kind in allowed, f"{here}: {kind} not allowed for {c['role']}"
            if kind == "text":
                assert part["text"], f"{here}: empty text"
            elif kind == "inline_data":
                assert re.fullmatch(r"(image|audio|video)/[\w.+-]+", part["inline_data"]["mime_type"])
                _b64(part["inline_data"]["data"], here)
            elif kind == "file_data":
                _url(part["file_data"]["file_uri"], here)
            elif kind == "functionResponse":
                assert isinstance(part["functionResponse"]["response"], dict)


# Ollama /api/chat and /api/generate: https://github.com/ollama/ollama/blob/main/docs/api.md
def check_ollama(body: dict[str, Any]) -> None:
    assert set(body) <= {"messages", "tools"}
    for i, m in enumerate(body["messages"]):
        where = f"messages[{i}]"
        assert m["role"] in ("system", "user", "assistant", "tool"), f"{where}: role {m['role']!r}"
        assert isinstance(m["content"], str), f"{where}: content must be a str"
        assert set(m) <= {"role", "content", "images", "tool_calls", "tool_name"}, f"{where}: keys {set(m)}"
        for k, image in enumerate(m.get("images", ())):
            _b64(image, f"{where}.images[{k}]")
        for call in m.get("tool_calls", ()):
            assert isinstance(call["function"]["arguments"], dict)


def check_ollama_generate(body: dict[str, Any]) -> None:
    assert set(body) <= {"prompt", "images"} and isinstance(body["prompt"], str) and body["prompt"]
    for k, image in enumerate(body.get("images", ())):
        _b64(image, f"images[{k}]")


# DashScope generation: https://help.aliyun.com/zh/model-studio/developer-reference/use-qwen-by-calling-api
def check_dashscope(body: dict[str, Any]) -> None:
    assert set(body) <= {"input", "parameters"}
    messages = body["input"]["messages"]
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        assert m["role"] in ("system", "user", "assistant", "tool"), f"{where}: role {m['role']!r}"
        if m["role"] == "system":
            assert i == 0, f"{where}: the system message must come first"
        content = m["content"]
        if isinstance(content, list):
            for k, item in enumerate(content):
                (kind,) = item
                assert kind in ("text", "image", "audio", "video"), f"{where}.content[{k}]: {kind}"
                if kind != "text":
                    url = item[kind]
                    if url.startswith("file://"):
                        assert os.path.isabs(url[7:]) and os.path.isfile(url[7:]), f"{where}: no file {url}"
                    else:
                        _url(url, f"{where}.content[{k}]")
        else:
            assert isinstance(content, str)
    turns = [m for m in messages if m["role"] in ("user", "assistant")]
    assert turns and turns[0]["role"] == "user", "the first turn must be the user's"
    for before, after in zip(turns, turns[1:]):
        assert before["role"] != after["role"], "user and assistant must alternate"
    assert messages[-1]["role"] in ("user", "tool"), "the last message must be the user's (or a tool result)"


CHECKS = {
    "openai": check_openai,
    "zhipu": check_zhipu,
    "anthropic": check_anthropic,
    "gemini": check_gemini,
    "ollama": check_ollama,
    "ollama_generate": check_ollama_generate,
    "dashscope": check_dashscope,
}
