"""Fine-tuned on conversations that end in a tool call, the model calls the tool, in process and over the server.

The proof for tool-call answers end to end: the call is learnt as the template writes it
(``<tool_call>{...}</tool_call><|im_end|>`` for Qwen), so the trained model generates it and the
module's tool-call parser returns it as ``tool_calls``, the same through the OpenAI-compatible server.
Before the fix such records were learnt as empty answers (only ``<|im_end|>``), and ``id`` and
``source`` columns beside them were fine but beside an Alpaca record refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prompter import ChatPrompter

TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}  # fmt: skip
CITIES = ["Lima", "Oslo", "Rome", "Cairo"]


def record(i: int, city: str) -> dict[str, Any]:
    call = {"id": f"call_{i}", "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}  # fmt: skip
    question = {"role": "user", "content": f"Weather in {city}?"}
    return {"id": i, "source": "synthetic", "messages": [question, {"role": "assistant", "content": None,
            "tool_calls": [call]}], "tools": [TOOL]}  # fmt: skip


def called(answer: Any) -> Any:
    if not isinstance(answer, dict) or not answer.get("tool_calls"):
        return answer
    function = answer["tool_calls"][0]["function"]
    return function["name"], json.loads(function["arguments"])


def test_a_model_tuned_on_tool_call_answers_calls_the_tool_in_process_and_over_the_server(tmp_path: Path) -> None:
    from transformers.utils import logging as hf_logging

    from modules import OnlineChatModule
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    hf_logging.disable_progress_bar()
    base = TrainableModule(cached_tiny_model("qwen2.5"), max_new_tokens=32)
    base.prompt(ChatPrompter(None, enable_system=False))
    data = [record(i, city) for i, city in enumerate(CITIES)]
    tuned = base.finetune(data, tmp_path / "tuned", epochs=30, lr=2e-3, progress=False)
    try:
        expected = [("get_weather", {"city": city}) for city in CITIES]
        assert [called(tuned(f"Weather in {city}?", tools=[TOOL])) for city in CITIES] == expected
        tuned.start(serve=True)
        client = OnlineChatModule(source="openai-compatible", base_url=tuned.url, model=tuned.name, api_key="unused")
        client.prompt(tuned.prompter)
        assert [called(client(f"Weather in {city}?", tools=[TOOL])) for city in CITIES] == expected
    finally:
        tuned.stop()
