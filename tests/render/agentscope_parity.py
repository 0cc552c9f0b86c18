"""Renders the AgentScope corpus cases (``benchmarks/agentscope_corpus.py``) through prompter and
compares them with upstream's recorded outputs; used by ``test_agentscope_parity.py`` and the benchmark."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from prompter import ChatPrompter

_KIND = {".mp3": "audio_url", ".wav": "audio_url", ".mp4": "video_url"}
#: the dialect each upstream entry point renders for
DIALECT = {"dashscope_mm": "dashscope", "common": "zhipu", "litellm": "openai", "post_api": "openai"}


def _part(url: str) -> dict[str, Any]:
    kind = _KIND.get(Path(url).suffix.lower(), "image_url")
    return {"type": kind, kind: {"url": url}}


def _blocks(msg: dict[str, Any]) -> list[dict[str, Any]]:
    """A Msg whose content is AgentScope blocks: text, then tool calls, or tool results."""
    text = "\n".join(b["text"] for b in msg["content"] if b["type"] == "text")
    calls = [
        {"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
        for b in msg["content"]
        if b["type"] == "tool_use"
    ]
    results = [
        {"role": "tool", "tool_call_id": b["id"], "name": b["name"], "content": str(b["output"])}
        for b in msg["content"]
        if b["type"] == "tool_result"
    ]
    if results:
        return results
    out: dict[str, Any] = {"role": msg["role"], "name": msg["name"], "content": text}
    if calls:
        out["tool_calls"] = calls
    return [out]


def to_messages(msg: dict[str, Any]) -> list[dict[str, Any]]:
    """An AgentScope Msg (as JSON) as prompter message dicts."""
    if isinstance(msg["content"], list):
        return _blocks(msg)
    return [to_message(msg)]


def to_message(msg: dict[str, Any]) -> dict[str, Any]:
    """An AgentScope Msg (as JSON) as a prompter message dict: its urls become content parts."""
    urls = msg.get("url") or []
    urls = [urls] if isinstance(urls, str) else urls
    content: Any = msg["content"]
    if urls:
        content = [{"type": "text", "text": content if isinstance(content, str) else json.dumps(content)}]
        content += [_part(u) for u in urls]
    return {"role": msg["role"], "name": msg["name"], "content": content}


def render(case: dict[str, Any]) -> Any:
    """Prompter's output for ``case``, shaped as upstream returns it."""
    # every Msg is a message dict, the system Msg included: its name travels with it where the
    # dialect has a name field (OpenAI), as AgentScope sends it
    said = [y for x in case["msgs"] for y in to_messages(x)]
    dialect = DIALECT.get(case["api"], case["api"])
    options: dict[str, Any] = {}
    if case["version"] == "0.0.6a2":
        if dialect != "openai" or case["api"] == "litellm":
            options = {"strategy": "multi_agent", "history_header": "## Dialogue History"}
    elif dialect != "openai":
        options = {"strategy": case["strategy"]}
    else:
        # 0.1.x's OpenAIFormatter keeps the turns under every method (its name field tells speakers
        # apart): docs/agents.md maps all three to format="openai", strategy="chat"
        options = {"strategy": "chat"}
    body = ChatPrompter(system="").generate_prompt(said, format=dialect, **options)
    if dialect == "dashscope":
        return body["input"]["messages"]
    if dialect == "gemini":
        return body["contents"]
    if dialect == "ollama_generate":
        return body["prompt"]
    if dialect == "anthropic":
        return ([{"role": "system", "content": body["system"]}] if "system" in body else []) + body["messages"]
    return body["messages"]


def on_the_wire(case: dict[str, Any], output: Any) -> Any:
    """Upstream's output as its SDK sends it, where the SDK rewrites it:

    * AgentScope's Gemini formatters return google-generativeai's Python input, whose bare-string
      parts the SDK sends as ``{"text": ...}`` (``content_types.to_content``);
    * 0.0.x's Ollama wrapper hands ``images`` to the ``ollama`` client library, which sends an
      existing file's path as the file's base64 (``_client._encode_image``, ollama>=0.1.7 as
      AgentScope requires); anything else it sends as it is or refuses.

    Every other output is already the request body's JSON."""
    dialect = DIALECT.get(case["api"], case["api"])
    if dialect == "ollama" and isinstance(output, list):
        return [{**m, "images": [_ollama_image(i) for i in m["images"]]} if "images" in m else m for m in output]
    if dialect != "gemini" or not isinstance(output, list):
        return output
    wire = []
    for turn in output:
        parts = turn.get("parts")
        parts = [parts] if isinstance(parts, str) else parts
        wire.append({**turn, "parts": [{"text": p} if isinstance(p, str) else p for p in parts or []]})
    return wire


def _ollama_image(image: str) -> str:
    path = Path(image)
    return base64.b64encode(path.read_bytes()).decode("ascii") if path.is_file() else image
