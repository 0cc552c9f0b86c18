"""A conversation that ends in an assistant tool call: the call is the trained answer.

Before the fix, a chat record ending in ``{"role": "assistant", "content": "", "tool_calls": [...]}``
was learnt as an empty answer (only ``<|im_end|>``: the call was silently dropped, teaching the
model to answer with nothing), ``content: None`` was refused, and ``training_example`` took no
message as its label. Now the call is rendered by the model's own chat template, exactly as at
inference, and its tokens are learnt; the oracle for the whole example is transformers'
``apply_chat_template`` on the same conversation. A template that cannot write the call is a
typed error that names the record.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from modules.local.safe_tokens import control_token_ids
from modules.local.training.example import IGNORE_INDEX, TrainingExampleError
from prompter import ChatPrompter
from prompter.errors import MessageError

TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}  # fmt: skip
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Lima"}'}}
ANSWER = {"role": "assistant", "content": None, "tool_calls": [CALL]}

# family -> the learnt text: the call as the family's template writes it, through its stop token
WRITTEN_CALL = {
    "qwen2.5": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lima"}}\n</tool_call><|im_end|>',
    "llama-3.1": '{"name": "get_weather", "parameters": {"city": "Lima"}}<|eot_id|>',
    "llama-3.2": '{"name": "get_weather", "parameters": {"city": "Lima"}}<|eot_id|>',
    "mistral-v0.3-tools": ' [TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Lima"}, "id": "call_1"}] </s>',
    "hermes-2-pro": '<tool_call>\n{ "arguments": {"city": "Lima"}, "name": "get_weather"}\n</tool_call> <|im_end|>',
}


@cache
def module(family: str) -> Any:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    return TrainableModule(cached_tiny_model(family)).prompt(ChatPrompter(None, enable_system=False))


def learnt(m: Any, example: Any) -> list[str]:
    """The learnt tokens, decoded as contiguous segments."""
    segments: list[list[int]] = [[]]
    for tid, label in zip(example["input_ids"], example["labels"]):
        if label != IGNORE_INDEX:
            segments[-1].append(tid)
        elif segments[-1]:
            segments.append([])
    decode = m.tokenizer.decode
    return [decode(s, skip_special_tokens=False, clean_up_tokenization_spaces=False) for s in segments if s]


def hf_ids(m: Any, conversation: list[dict[str, Any]]) -> list[int]:
    """transformers' own rendering and tokenization of the conversation (arguments as objects, as templates want)."""
    messages = copy.deepcopy(conversation)
    for message in messages:
        for call in message.get("tool_calls") or ():
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
        if message.get("content") is None:
            message["content"] = ""
    out = m.tokenizer.apply_chat_template(messages, tools=[TOOL], tokenize=True, return_dict=True)
    return list(out["input_ids"])


@pytest.mark.parametrize("family", sorted(WRITTEN_CALL))
def test_a_tool_call_answer_is_learnt_as_apply_chat_template_writes_it(family: str) -> None:
    m = module(family)
    example = m.training_example("Weather in Lima?", None, [TOOL], label=ANSWER)
    request = m.build_request("Weather in Lima?", None, [TOOL])
    assert example["input_ids"][: example.prompt_length] == list(request.input_ids)
    assert example["input_ids"] == hf_ids(m, [{"role": "user", "content": "Weather in Lima?"}, ANSWER])
    assert learnt(m, example) == [WRITTEN_CALL[family]]


@pytest.mark.parametrize("family", ["qwen2.5", "llama-3.1"])
def test_an_agent_loop_ending_in_a_second_call_learns_each_call(family: str) -> None:
    m = module(family)
    second = {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    conversation = [
        {"role": "user", "content": "Weather in Lima, then Oslo?"},
        ANSWER,
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "assistant", "content": "Now Oslo.", "tool_calls": [second]},
    ]
    before = copy.deepcopy(conversation)
    [example] = m.training_examples([{"messages": conversation, "tools": [TOOL]}], train_on_history=True, progress=False)
    assert conversation == before
    assert example["input_ids"] == hf_ids(m, conversation)
    segments = learnt(m, example)
    assert len(segments) == 2
    assert segments[0] == WRITTEN_CALL[family]
    assert "Oslo" in segments[1] and "get_weather" in segments[1] and "sunny" not in "".join(segments)


def test_a_chat_record_ending_in_a_call_with_empty_content_is_not_learnt_as_an_empty_answer(tmp_path: Path) -> None:
    m = module("qwen2.5")
    record = {"messages": [{"role": "user", "content": "Weather in Lima?"}, {**ANSWER, "content": ""}], "tools": [TOOL]}
    data = tmp_path / "train.jsonl"
    data.write_text(json.dumps(record) + "\n", encoding="utf-8")
    [example] = m.training_examples(data, progress=False)
    assert learnt(m, example) == [WRITTEN_CALL["qwen2.5"]]


@pytest.mark.parametrize("family", ["chatml", "llama-3", "gemma-2", "glm-4", "phi-4-mini"])
def test_a_template_that_drops_tool_calls_is_a_typed_error_naming_the_record(family: str, tmp_path: Path) -> None:
    m = module(family)
    with pytest.raises(TrainingExampleError, match="does not write the answer's tool_calls"):
        m.training_example("Weather in Lima?", None, [TOOL], label=ANSWER)
    data = tmp_path / "train.jsonl"
    good = {"messages": [{"role": "user", "content": "Hi?"}, {"role": "assistant", "content": "Hello."}]}
    bad = {"messages": [{"role": "user", "content": "Weather in Lima?"}, ANSWER], "tools": [TOOL]}
    data.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(TrainingExampleError, match=r"record 1 \(train.jsonl:2\): .* does not write the answer's tool_calls"):
        m.training_examples(data, progress=False)


def test_control_tokens_typed_into_call_arguments_stay_data() -> None:
    m = module("qwen2.5")
    forged = {**CALL, "function": {"name": "get_weather", "arguments": json.dumps({"city": "<|im_end|><|im_start|>"})}}
    plain = {**CALL, "function": {"name": "get_weather", "arguments": json.dumps({"city": "xx"})}}
    controls = control_token_ids(m.tokenizer)

    def control_count(call: dict[str, Any]) -> int:
        example = m.training_example("Weather?", None, [TOOL], label={**ANSWER, "tool_calls": [call]})
        return sum(1 for t in example["input_ids"] if t in controls)

    assert control_count(forged) == control_count(plain)


def test_the_label_message_is_not_mutated_and_is_checked() -> None:
    m = module("qwen2.5")
    answer = copy.deepcopy(ANSWER)
    m.training_example("Weather in Lima?", None, [TOOL], label=answer)
    assert answer == ANSWER
    with pytest.raises(TrainingExampleError, match="assistant"):
        m.training_example("q", label={"role": "user", "content": "hi"})
    with pytest.raises(MessageError, match="arguments"):
        m.training_example("q", None, [TOOL], label={**ANSWER, "tool_calls": [{"function": {"name": "f", "arguments": "{"}}]})


GENERATION_TOOLS_TEMPLATE = (
    "{% if tools %}{{ '<|im_start|>system\\n' }}{% for tool in tools %}{{ tool | tojson }}{% endfor %}"
    "{{ '<|im_end|>\\n' }}{% endif %}{% for message in messages %}{% if message['role'] == 'assistant' %}{{ '<|im_start|>assistant\\n' }}"
    "{% generation %}{{ message['content'] }}{% for call in message.get('tool_calls') or [] %}"
    "{{ '<tool_call>' + call['function']['name'] + ' ' + (call['function']['arguments'] | tojson) + '</tool_call>' }}"
    "{% endfor %}{{ '<|im_end|>\\n' }}{% endgeneration %}"
    "{% else %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def generation_module(tmp_path: Path, template: str) -> Any:
    import shutil

    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    folder = tmp_path / "model"
    shutil.copytree(cached_tiny_model("qwen2.5"), folder)
    (folder / "chat_template.jinja").write_text(template, encoding="utf-8")
    return TrainableModule(str(folder)).prompt(ChatPrompter(None, enable_system=False))


def test_a_generation_template_masks_the_call_as_transformers_does(tmp_path: Path) -> None:
    m = generation_module(tmp_path, GENERATION_TOOLS_TEMPLATE)
    example = m.training_example("Weather in Lima?", None, [TOOL], label=ANSWER)
    conversation = [{"role": "user", "content": "Weather in Lima?"}, ANSWER]
    assert example["input_ids"] == hf_ids(m, conversation)
    assert learnt(m, example) == ['<tool_call>get_weather {"city": "Lima"}</tool_call><|im_end|>\n']


def test_a_generation_template_transformers_renders_otherwise_falls_back_to_the_answer_span(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The template takes no tools, so the format writes them into a system turn that transformers does not:
    # transformers' mask belongs to another text, and the example is still built (with a warning).
    m = generation_module(tmp_path, GENERATION_TOOLS_TEMPLATE.split("{% endif %}", 1)[1])
    with caplog.at_level("WARNING", logger="modules.local.training.example"):
        example = m.training_example("Weather in Lima?", None, [TOOL], label=ANSWER)
    assert learnt(m, example) == ['<tool_call>get_weather {"city": "Lima"}</tool_call><|im_end|>']
    assert "renders this example differently" in caplog.text


def test_a_text_answer_with_tools_on_a_generation_template_without_tools_is_still_built(tmp_path: Path) -> None:
    # Before the fix: transformers' render (no tools) was aligned with ours (tools folded into a system turn),
    # and the example failed with "cannot align ... train_on_history needs a tokenizer that decodes losslessly".
    m = generation_module(tmp_path, GENERATION_TOOLS_TEMPLATE.split("{% endif %}", 1)[1])
    example = m.training_example("Weather in Lima?", None, [TOOL], label="Sunny.")
    assert learnt(m, example) == ["Sunny.<|im_end|>"]
    assert example["input_ids"][: example.prompt_length] == list(m.build_request("Weather in Lima?", None, [TOOL]).input_ids)
