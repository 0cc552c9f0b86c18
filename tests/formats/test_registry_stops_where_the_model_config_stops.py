"""A registered format stops at every token its model's ``generation_config.json`` stops at.

A loaded model adds its generation config's eos ids to the stop list, which hid the gap there; every
other reader of ``stop_words`` (eval's cut of an answer, an engine before the model loads, an online
user of the format) let an answer run past them: Llama 3.1 on past ``<|eom_id|>`` after a built-in
tool call, Qwen past ``<|endoftext|>``, Phi-3 past ``<|assistant|>``. The first stop word stays the
token that closes an answer in the template (what training appends after an answer).
"""

from __future__ import annotations

import pytest

from prompter.formats.model_format import ModelFormat

GENERATION_CONFIG_STOPS = {
    # family: the tokens of its model's generation_config.json eos_token_id, the first the turn's own end
    "llama-3": ("<|eot_id|>", "<|end_of_text|>"),  # 128009, 128001
    "llama-3.1": ("<|eot_id|>", "<|eom_id|>", "<|end_of_text|>"),  # 128009, 128008, 128001
    "llama-3.2": ("<|eot_id|>", "<|eom_id|>", "<|end_of_text|>"),
    "qwen1.5": ("<|im_end|>", "<|endoftext|>"),  # 151645, 151643
    "qwen2": ("<|im_end|>", "<|endoftext|>"),
    "qwen2.5": ("<|im_end|>", "<|endoftext|>"),
    "qwen3": ("<|im_end|>", "<|endoftext|>"),
    "phi-3": ("<|end|>", "<|endoftext|>", "<|assistant|>"),  # 32007, 32000, 32001
    "phi-3.5": ("<|end|>", "<|endoftext|>", "<|assistant|>"),
    "phi-4-mini": ("<|end|>", "<|endoftext|>"),  # 200020, 199999
    "gemma-2": ("<end_of_turn>", "<eos>"),  # 107, 1
    "gemma-3": ("<end_of_turn>", "<eos>"),  # 106, 1
    "internlm2": ("<|im_end|>", "</s>"),  # 92542, 2
    "glm-4": ("<|endoftext|>", "<|user|>", "<|observation|>"),  # 151329, 151336, 151338
}


@pytest.mark.parametrize("family", sorted(GENERATION_CONFIG_STOPS))
def test_the_format_stops_at_every_token_its_model_stops_at(family: str) -> None:
    stops = ModelFormat.get(family).stop_words
    assert set(stops) == set(GENERATION_CONFIG_STOPS[family])
    assert stops[0] == GENERATION_CONFIG_STOPS[family][0]


@pytest.mark.parametrize(
    ("model_id", "stop"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "<|eom_id|>"),
        ("meta-llama/Meta-Llama-3-8B-Instruct", "<|end_of_text|>"),
        ("Qwen/Qwen2.5-7B-Instruct", "<|endoftext|>"),
        ("microsoft/Phi-3-mini-4k-instruct", "<|assistant|>"),
        ("THUDM/glm-4-9b-chat", "<|user|>"),
    ],
)
def test_a_model_id_finds_the_format_with_its_config_stops(model_id: str, stop: str) -> None:
    assert stop in ModelFormat.get(model_id).stop_words


def test_a_llama_built_in_tool_call_is_cut_at_its_end() -> None:
    generated = '<|python_tag|>brave_search.call(query="x")<|eom_id|><|start_header_id|>ipython'
    stops = ModelFormat.get("llama-3.1").stop_words
    cut = min(i for i in (generated.find(s) for s in stops) if i >= 0)
    assert generated[:cut] == '<|python_tag|>brave_search.call(query="x")'
