"""Rows of a ``datasets.Dataset`` train on the same text as the same records given as a list.

An Arrow column has one schema for all rows, so ``datasets`` fills every key that only other rows
have with ``None``: one row's tool gets ``"properties": {"city": ..., "zone": None}``, one row's
call arguments ``{"city": "Lima", "zone": None}``. Before the fix those nulls were rendered into
the training text (``"zone": null``), which inference never sees, and even learnt as part of the
answer's tool call.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from prompter import ChatPrompter

datasets = pytest.importorskip("datasets")

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}  # fmt: skip
TIME = {"type": "function", "function": {"name": "get_time", "description": "Time in a zone",
        "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}}}}  # fmt: skip


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}]}  # fmt: skip


ROWS = [
    {"id": 1, "messages": [{"role": "user", "content": "Weather in Lima?"}, {"role": "assistant", "content": "Sunny"}],
     "tools": [WEATHER]},
    {"id": 2, "messages": [{"role": "user", "content": "Time in UTC?"}, {"role": "assistant", "content": "Noon"}],
     "tools": [TIME]},
]  # fmt: skip
CALLS = [
    {"messages": [{"role": "user", "content": "Weather in Lima?"}, call("get_weather", {"city": "Lima"})],
     "tools": [WEATHER]},
    {"messages": [{"role": "user", "content": "Time in UTC?"}, call("get_time", {"zone": "UTC"})], "tools": [TIME]},
]  # fmt: skip


@cache
def module() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter(None, enable_system=False))


def test_rows_of_a_dataset_train_on_the_text_of_the_same_records_as_a_list() -> None:
    m = module()
    dataset = datasets.Dataset.from_list(ROWS)
    assert dataset[0]["tools"][0]["function"]["parameters"]["properties"]["zone"] is None  # what Arrow does
    got = m.training_examples(dataset, progress=False)
    assert got == m.training_examples(ROWS, progress=False)
    assert "null" not in m.tokenizer.decode(got[0]["input_ids"])


def test_tool_call_answers_of_a_dataset_learn_the_arguments_the_record_holds() -> None:
    m = module()
    dataset = datasets.Dataset.from_list(CALLS)
    assert dataset[0]["messages"][1]["tool_calls"][0]["function"]["arguments"]["zone"] is None  # what Arrow does
    got = m.training_examples(dataset, progress=False)
    assert got == m.training_examples(CALLS, progress=False)
    learnt = [t for t, label in zip(got[0]["input_ids"], got[0]["labels"]) if label != -100]
    assert '"arguments": {"city": "Lima"}}' in m.tokenizer.decode(learnt)


def test_arguments_as_json_text_keep_a_null_meant_as_data() -> None:
    m = module()
    row = {"messages": [{"role": "user", "content": "Weather?"}, call("get_weather", {})], "tools": [WEATHER]}
    row["messages"][1]["tool_calls"][0]["function"]["arguments"] = json.dumps({"city": None})
    [example] = m.training_examples(datasets.Dataset.from_list([row]), progress=False)
    learnt = [t for t, label in zip(example["input_ids"], example["labels"]) if label != -100]
    assert '{"city": null}' in m.tokenizer.decode(learnt)
