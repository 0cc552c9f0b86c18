"""``train_on_history=True`` learns each history answer and nothing of the user's words or the template's scaffolding.

Before the fix, the history regions came only from two prefix renders, which some real templates
do not agree with: Mistral-Nemo moves the system prompt into the last user turn, so the user's
earlier questions were learnt (``QQQone[/INST]AAAone</s>...``); Alpaca learnt its
``### Response:`` scaffolding; Qwen3 (a think block only on the last answer) and Mistral v0.3
with tools (the tools block before the last user turn) silently learnt no history answer at all.
"""

from __future__ import annotations

import pytest
from test_training_example import learnt_text as learnt  # one tiny model per family, shared
from test_training_example import module

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
HISTORY = [["QQQone", "AAAone"], ["QQQtwo", "AAAtwo"]]

# (family, tools) -> the learnt text: each history answer through its stop token, then the label's
CASES = {
    ("qwen2.5", False): "AAAone<|im_end|>AAAtwo<|im_end|>LLL<|im_end|>",
    ("llama-3.1", True): "AAAone<|eot_id|>AAAtwo<|eot_id|>LLL<|eot_id|>",
    ("qwen3", False): "AAAone<|im_end|>AAAtwo<|im_end|><think>\n\n</think>\n\nLLL<|im_end|>",
    ("qwen3", True): "AAAone<|im_end|>AAAtwo<|im_end|><think>\n\n</think>\n\nLLL<|im_end|>",
    ("mistral-nemo", False): "AAAone</s>AAAtwo</s>LLL</s>",
    ("mistral-nemo", True): "AAAone</s>AAAtwo</s>LLL</s>",
    ("mistral-v0.3-tools", True): " AAAone </s> AAAtwo </s> LLL </s>",
    ("alpaca", False): "AAAoneAAAtwoLLL</s>",  # the template closes no history answer with a stop token
}


@pytest.mark.parametrize(("family", "with_tools"), sorted(CASES), ids=[f"{f}-{'tools' if t else 'plain'}" for f, t in sorted(CASES)])
def test_history_answers_are_learnt_and_nothing_else(family: str, with_tools: bool) -> None:
    m = module(family)
    tools = [WEATHER] if with_tools else None
    example = m.training_example("QQQthree", HISTORY, tools, label="LLL", train_on_history=True)
    text = learnt(m, example)
    for word in ("QQQ", "Answer briefly", "Response", "INST", "get_weather"):
        assert word not in text, f"learnt the prompt's {word!r}: {text!r}"
    assert text == CASES[(family, with_tools)]
    # the prompt is still exactly the inference prompt
    assert example["input_ids"][: example.prompt_length] == list(m.build_request("QQQthree", HISTORY, tools).input_ids)


@pytest.mark.parametrize("family", ["qwen3", "mistral-nemo", "alpaca"])
def test_without_train_on_history_only_the_label_is_learnt(family: str) -> None:
    m = module(family)
    example = m.training_example("QQQthree", HISTORY, label="LLL")
    assert "AAA" not in learnt(m, example) and "LLL" in learnt(m, example)
