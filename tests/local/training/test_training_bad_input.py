"""Bad training input is a typed error that names the problem and the remedy; a BOM'd JSONL file is read.

Before the fix: tools that were not a list of dicts escaped as a bare ``ValueError``/``TypeError``
from ``dict(t)`` (in ``training_example`` and in the inference request it builds on); a JSONL file
starting with a UTF-8 byte order mark was refused as "not a JSON line"; a ``DatasetDict`` was told
to be "a list of records, not one dict", without naming the split to pick.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from modules.local.training.example import TrainingExampleError
from prompter import ChatPrompter
from prompter.errors import ToolsError


@cache
def module() -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model("qwen2.5")).prompt(ChatPrompter("Answer briefly.", enable_system=False))


BAD_TOOLS = ["get_weather", 5, {"type": "function"}, [1], [["name", "f"]]]


@pytest.mark.parametrize("tools", BAD_TOOLS, ids=["str", "int", "one-dict", "list-of-int", "list-of-pairs"])
def test_tools_that_are_not_a_list_of_dicts_are_a_tools_error(tools: Any) -> None:
    with pytest.raises(ToolsError, match=r"^tools(\[0\])?: expected"):
        module().training_example("q", None, tools, label="a")
    with pytest.raises(ToolsError, match=r"^tools(\[0\])?: expected"):
        module().build_request("q", None, tools)  # the inference path says the same


def test_a_record_with_bad_tools_is_a_tools_error_too() -> None:
    with pytest.raises(ToolsError, match="tools"):
        module().training_examples([{"input": "q", "output": "a", "tools": "nope"}], progress=False)


def test_tools_as_a_tuple_still_work() -> None:
    tool = {"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}
    example = module().training_example("q", None, (tool,), label="a")
    assert example["input_ids"][: example.prompt_length] == list(module().build_request("q", None, [tool]).input_ids)


def test_a_jsonl_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    records = [{"input": "What is 2+2?", "output": "4"}, {"input": "What is 3+3?", "output": "6"}]
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    bom = tmp_path / "bom.jsonl"
    bom.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8-sig")
    assert bom.read_bytes().startswith(b"\xef\xbb\xbf")
    got = module().training_examples(bom, progress=False)
    assert [dict(e) for e in got] == [dict(e) for e in module().training_examples(plain, progress=False)]


def test_a_dataset_dict_is_told_to_pick_a_split() -> None:
    datasets = pytest.importorskip("datasets")
    data = datasets.DatasetDict({"train": datasets.Dataset.from_list([{"input": "q", "output": "a"}])})
    with pytest.raises(TrainingExampleError, match=r"DatasetDict.*data\['train'\]"):
        module().training_examples(data, progress=False)
