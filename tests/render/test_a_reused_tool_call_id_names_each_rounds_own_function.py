"""A tool result answers the nearest call before it with its id, so a reused id never misattributes a result.

Clients that number their calls per round send ``call_0`` in every round. Gemini, Ollama and DashScope
name the function a result answers, and so do the merged history's ``<tool_result>`` lines; the name
was looked up in one table of the whole conversation, where the last call with an id won: the first
round's weather reading went to Gemini as the answer of ``get_time``, paired with a ``get_weather``
call. Each result now names the function of the call it answers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from prompter import ChatPrompter

FUNCTIONS = ["get_weather", "get_time", "get_news"]


def rounds(functions: list[str], named: bool) -> list[dict[str, Any]]:
    """One round per function, every call with the id ``call_0`` (*named*: results carry their own name)."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "Weather, time and news in Paris?"}]
    for k, function in enumerate(functions):
        call = {"id": "call_0", "type": "function", "function": {"name": function, "arguments": "{}"}}
        history.append({"role": "assistant", "content": None, "tool_calls": [call]})
        result = {"role": "tool", "tool_call_id": "call_0", "content": f"result {k}"}
        history.append({**result, "name": function} if named else result)
    return history


def result_names(dialect: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """(function, output) of each tool result in *body*."""
    if dialect == "gemini":
        parts = [p["functionResponse"] for c in body["contents"] for p in c["parts"] if "functionResponse" in p]
        return [(p["name"], p["response"]["content"]) for p in parts]
    messages = body["input"]["messages"] if dialect == "dashscope" else body["messages"]
    key = "tool_name" if dialect == "ollama" else "name"
    return [(m[key], m["content"]) for m in messages if m["role"] == "tool"]


@pytest.mark.parametrize("named", [True, False], ids=["results-named", "results-unnamed"])
@pytest.mark.parametrize("dialect", ["gemini", "ollama", "dashscope"])
def test_each_result_names_the_function_of_its_own_round(dialect: str, named: bool) -> None:
    body = ChatPrompter(system="S").generate_prompt("Thanks.", history=rounds(FUNCTIONS, named), format=dialect)
    assert result_names(dialect, body) == [(f, f"result {k}") for k, f in enumerate(FUNCTIONS)]


def test_gemini_pairs_each_call_with_a_response_of_its_function() -> None:
    body = ChatPrompter(system="S").generate_prompt("Thanks.", history=rounds(FUNCTIONS, False), format="gemini")
    calls = [p["functionCall"]["name"] for c in body["contents"] for p in c["parts"] if "functionCall" in p]
    responses = [p["functionResponse"]["name"] for c in body["contents"] for p in c["parts"] if "functionResponse" in p]
    assert calls == responses == FUNCTIONS


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "gemini", "ollama", "dashscope", "zhipu"])
def test_the_merged_history_names_each_rounds_function(dialect: str) -> None:
    history = [{**m, "name": "Al"} if m["role"] == "user" else m for m in rounds(FUNCTIONS, False)]
    body = ChatPrompter(system="S").generate_prompt(
        {"role": "user", "name": "Al", "content": "Thanks."}, history=history, format=dialect, strategy="multi_agent"
    )
    text = json.dumps(body, ensure_ascii=False)
    found = [json.loads(line.split("<tool_result>", 1)[1].split("</tool_result>", 1)[0]) for line in _lines(text)]
    assert [(r["name"], r["output"]) for r in found] == [(f, f"result {k}") for k, f in enumerate(FUNCTIONS)]


def _lines(text: str) -> list[str]:
    decoded = json.loads(text)
    strings: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            strings.extend(line for line in value.splitlines() if line.startswith("<tool_result>"))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(decoded)
    return strings
