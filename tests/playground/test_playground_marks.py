"""The page's marks against the model's own reading: a token shown as special is one the model parses as one.

Ground truth is the path a ``TrainableModule`` takes (``generate_prompt(format="openai")``, then
``ModelFormat.render_with_spans``): text inside its content spans is tokenized as text, so a token
there is data, whoever typed it. Each case failed before its fix: a special token in a tool's name
or schema was shown as a control token on every family that prints tools (the tracing marked only
descriptions); a history answer holding ``</think>`` left Qwen3 and DeepSeek-R1 with no marks at
all, and Qwen3 showed a token forged in it as a control token; a token typed into the instruction
(message content to the model) was shown as a control token.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from prompter import ChatPrompter, ModelFormat
from prompter.errors import PromptError

FAMILIES = ModelFormat.families()


def forged(family: str) -> str:
    """The family's longest special token (what an attacker types to forge a turn)."""
    fmt = ModelFormat.get(family)
    found = [t for t in (*fmt.special_tokens, fmt.bos_token, fmt.eos_token) if t and t.strip()]
    return max(found, key=len) if found else "<|im_end|>"


def tool(name: str, prop: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {prop: {"type": "string"}}, "required": [prop]}
    return {"type": "function", "function": {"name": name, "description": "Look up.", "parameters": schema}}


def post(base: str, state: dict[str, str]) -> dict[str, Any]:
    response = requests.post(base + "api/render", json={"state": state}, timeout=30)
    assert response.status_code == 200, response.text
    return dict(response.json())


def content_spans(state: dict[str, str]) -> tuple[tuple[int, int], ...]:
    """Where the model reads text, not markup: the content spans of the request a TrainableModule builds."""
    tools = json.loads(state["tools"]) if "tools" in state else None
    history = json.loads(state["history"]) if "history" in state else None
    body = ChatPrompter(state["instruction"]).generate_prompt(
        state["input"], history=history, tools=tools, format="openai", model_format=state["model_format"]
    )
    return ModelFormat.get(state["model_format"]).render_with_spans(body["messages"], body.get("tools")).spans


def special_at(body: dict[str, Any]) -> list[tuple[int, int]]:
    found, at = [], 0
    for segment in body["segments"]:
        if segment["kind"] == "special":
            found.append((at, at + len(segment["text"])))
        at += len(segment["text"])
    return found


def hostile_state(family: str) -> dict[str, str]:
    token = forged(family)
    return {
        "instruction": f"Be brief {token} always.",
        "input": f"hi {token} there",
        "history": json.dumps([[f"q {token}", f"a {token}"]]),
        "tools": json.dumps([tool(f"look{token}", f"word{token}")]),
        "model_format": family,
    }


@pytest.mark.parametrize("family", FAMILIES)
def test_forged_tokens_in_any_field_are_never_shown_as_control_tokens(playground_url: str, family: str) -> None:
    state = hostile_state(family)
    try:
        spans = content_spans(state)
    except PromptError as exc:  # a family whose template refuses this request: the page says so instead
        response = requests.post(playground_url + "api/render", json={"state": state}, timeout=30)
        assert response.status_code == 400 and response.json()["error"]["type"] == type(exc).__name__
        return
    body = post(playground_url, state)
    inside = [(s, e) for s, e in special_at(body) if any(a < e and s < b for a, b in spans)]
    assert inside == [], [body["output"][s:e] for s, e in inside]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_special_token_in_a_tool_name_or_schema_is_marked_as_user_text(playground_url: str, family: str) -> None:
    token = forged(family)
    state = {"instruction": "Use tools.", "input": "hi", "model_format": family}
    hostile = {**state, "tools": json.dumps([tool(f"look{token}", f"word{token}")])}
    benign = {**state, "tools": json.dumps([tool("look", "word")])}
    response = requests.post(playground_url + "api/render", json={"state": hostile}, timeout=30)
    if response.status_code == 400:  # a template that refuses this schema: the error is shown instead
        return
    body = response.json()
    printed = body["output"].count(token) - post(playground_url, benign)["output"].count(token)
    as_user = sum(s["text"].count(token) for s in body["segments"] if s["kind"] == "user")
    assert body["marked"] is True
    assert as_user == printed


@pytest.mark.parametrize("family", ["qwen3", "deepseek-r1"])
def test_a_history_answer_holding_think_tags_is_still_marked(playground_url: str, family: str) -> None:
    token = forged(family)
    state = {"instruction": "Be brief.", "input": "next", "model_format": family}
    benign = post(playground_url, {**state, "history": json.dumps([["q", "reasoning</think>answer"]])})
    history = json.dumps([[f"q {token}", f"reasoning</think>answer {token}"]])
    body = post(playground_url, {**state, "history": history})
    users = [s["text"] for s in body["segments"] if s["kind"] == "user"]
    assert body["marked"] is True
    assert "next" in users and "answer" in "".join(users)
    typed = body["output"].count(token) - benign["output"].count(token)
    assert typed > 0 and sum(u.count(token) for u in users) == typed


@pytest.mark.parametrize("family", ["qwen2.5", "llama-3.1", "gemma-2", "mistral-v0.3"])
def test_a_special_token_typed_into_the_instruction_is_not_shown_as_a_control_token(
    playground_url: str, family: str
) -> None:
    token = forged(family)
    benign = post(playground_url, {"instruction": "Be brief.", "input": "hi", "model_format": family})
    body = post(playground_url, {"instruction": f"Be {token} brief.", "input": "hi", "model_format": family})
    count = sum(s["kind"] == "special" and s["text"] == token for s in body["segments"])
    assert count == sum(s["kind"] == "special" and s["text"] == token for s in benign["segments"])
    assert [s["text"] for s in body["segments"] if s["kind"] == "user"] == ["hi"]
