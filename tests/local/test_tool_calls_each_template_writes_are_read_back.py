"""Every shipped family that writes tool calls gets them back as tool calls, whole and streamed.

The oracle is the family's own chat template: an assistant turn with tool calls, rendered
after the inference prompt and cut at the stop words, is what a model trained on that
template generates. The module must read it back as the same calls (names and arguments),
with the same text and calls whether streamed in any piece size or not. Before the fix
DeepSeek V2.5/V3/R1 (``<｜tool▁calls▁begin｜>...function<｜tool▁sep｜>NAME```json...``) and Llama
3.1/3.2 (a bare ``{"name": ..., "parameters": ...}``) came back as text.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from modules.local.streaming import DeltaCutter
from modules.local.tool_calls import parse_tool_calls
from prompter import ChatPrompter

TOOLS = [
    {"type": "function", "function": {"name": name, "description": f"{name} of a city",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
    for name in ("get_weather", "get_time")
]  # fmt: skip
CALLS = [("get_weather", {"city": "Lima"}), ("get_time", {"city": "Oslo \u00e9 \"q\""})]
# the families whose templates write an assistant turn's tool calls (each must be read back)
FAMILIES = ["deepseek-r1", "deepseek-v2.5", "deepseek-v3", "hermes-2-pro", "llama-3.1", "llama-3.2",
            "mistral-nemo", "mistral-v0.3-tools", "qwen2.5", "qwen3"]  # fmt: skip
# Llama 3.1/3.2 take one call a turn (their templates raise on two); Hermes 2 Pro's opens only the first
PARALLEL = [f for f in FAMILIES if not f.startswith(("llama", "hermes"))]


@cache
def module(family: str) -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model(family)).prompt(ChatPrompter(None, enable_system=False))


def written(family: str, n: int) -> tuple[Any, str]:
    m = module(family)
    request = m.build_request("Weather and time in Lima?", tools=TOOLS)
    calls = [{"id": f"abcdefgh{i}", "type": "function",
              "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
             for i, (name, args) in enumerate(CALLS[:n])]  # fmt: skip
    turn = {"role": "assistant", "content": None, "tool_calls": calls}
    whole = m.model_format.render([*request.messages, turn], tools=list(request.tools), add_generation_prompt=False)
    assert whole.startswith(request.text)
    answer = whole[len(request.text) :]
    for stop in m.model_format.stop_words:
        answer = answer.split(stop)[0]
    return request, answer


def read(calls: Any) -> list[tuple[str, Any]]:
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


@pytest.mark.parametrize(
    ("family", "n"), [(f, 1) for f in FAMILIES] + [(f, 2) for f in PARALLEL],
    ids=[f"{f}-one-call" for f in FAMILIES] + [f"{f}-two-calls" for f in PARALLEL],
)
def test_the_calls_a_template_writes_are_read_back_whole_and_streamed(family: str, n: int) -> None:
    m = module(family)
    request, answer = written(family, n)
    completion = m._completion(answer, "stop", request, 9)
    assert read(completion.tool_calls) == CALLS[:n]
    assert completion.finish_reason == "tool_calls"
    for size in (1, 2, 7, len(answer)):
        cutter = DeltaCutter(m._stop_strings(request), m._tool_syntax(request))
        deltas = [cutter.feed(answer[i : i + size]) for i in range(0, len(answer), size)]
        last = cutter.finish(request, {"ids": [0], "finish": "stop"}, None)
        assert "".join(d.text for d in [*deltas, last] if d is not None) == completion.text
        assert read(last.tool_calls) == CALLS[:n]


def test_every_family_whose_template_writes_calls_is_covered() -> None:
    from modules.local.tiny_model import list_families
    from modules.local.training.history import calls_written

    writing = []
    for family in list_families():
        try:
            _, answer = written(family, 1)
        except Exception:  # noqa: BLE001 - a template that refuses this conversation writes no call for it
            continue
        if calls_written({"tool_calls": [{"function": {"name": "get_weather"}}]}, answer):
            writing.append(family)
    assert sorted(writing) == FAMILIES


@pytest.mark.parametrize(
    "body",
    ["<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\nnot json\n```<｜tool▁call▁end｜>",
     "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n{}<｜tool▁call▁end｜>",
     "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```<｜tool▁call▁end｜>trailing words"],
    ids=["arguments-not-json", "no-fence", "text-after-the-call"],
)  # fmt: skip
def test_a_deepseek_block_that_is_not_all_calls_stays_text(body: str) -> None:
    text = "Sure.<｜tool▁calls▁begin｜>" + body + "<｜tool▁calls▁end｜>"
    assert parse_tool_calls(text, "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>") == (text, [])


def test_a_deepseek_format_bound_by_name_reads_the_whole_block() -> None:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    m = TrainableModule(cached_tiny_model("deepseek-v3"), model_format="deepseek-v3")
    request = m.build_request("Weather in Lima?", tools=TOOLS)
    assert m._tool_syntax(request) == ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")
