"""A family's ``special_tokens`` are tokens its real tokenizer has, never tags it reads as plain text.

The registry listed ``<tools>`` and ``<tool_response>`` for Qwen 2.5, ``[INST]`` and ``<<SYS>>`` for
Llama 2, ``[INST]`` for Mistral v0.1 and Mixtral, and ``<|user|>`` for Zephyr: their templates write
them, but their tokenizers have no such tokens, so a list that drives what is shown (and treated)
as control tokens called plain text markup a model never sees as one token. The truth here is the
tokenizers' own added tokens (Qwen 2.5: ids 151643-151664 of its tokenizer.json; Qwen 3: up to
151668), or, for SentencePiece tokenizers with no added tokens, their three specials.
"""

from __future__ import annotations

import pytest

from prompter.formats.model_format import ModelFormat

QWEN2_5_ADDED = (
    "<|endoftext|> <|im_start|> <|im_end|> <|object_ref_start|> <|object_ref_end|> <|box_start|> <|box_end|> "
    "<|quad_start|> <|quad_end|> <|vision_start|> <|vision_end|> <|vision_pad|> <|image_pad|> <|video_pad|> "
    "<tool_call> </tool_call> <|fim_prefix|> <|fim_middle|> <|fim_suffix|> <|fim_pad|> <|repo_name|> <|file_sep|>"
).split()
QWEN3_ADDED = [*QWEN2_5_ADDED, "<tool_response>", "</tool_response>", "<think>", "</think>"]
SENTENCEPIECE = ["<unk>", "<s>", "</s>"]
"""Llama 2, Mistral 7B v0.1 / v0.2, Mixtral 8x7B and Zephyr: no added tokens beyond these."""
HERMES_2_PRO_TAGS = ["<tools>", "</tools>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]

TOKENIZERS = {
    "qwen2.5": QWEN2_5_ADDED,
    "qwen3": QWEN3_ADDED,
    "llama-2": SENTENCEPIECE,
    "mistral-v0.1": SENTENCEPIECE,
    "mixtral": SENTENCEPIECE,
    "zephyr": SENTENCEPIECE,
}


@pytest.mark.parametrize("family", sorted(TOKENIZERS))
def test_every_listed_special_token_is_one_the_tokenizer_has(family: str) -> None:
    listed = ModelFormat.get(family).special_tokens
    assert listed, family
    assert [t for t in listed if t not in TOKENIZERS[family]] == []


@pytest.mark.parametrize(
    ("family", "plain_text"),
    [
        ("qwen2.5", ["<tools>", "</tools>", "<tool_response>", "</tool_response>"]),
        ("qwen3", ["<tools>", "</tools>"]),
        ("llama-2", ["[INST]", "[/INST]", "<<SYS>>", "<</SYS>>"]),
        ("mistral-v0.1", ["[INST]", "[/INST]"]),
        ("mixtral", ["[INST]", "[/INST]"]),
        ("zephyr", ["<|user|>", "<|system|>", "<|assistant|>"]),
    ],
)
def test_tags_the_template_writes_as_plain_text_are_not_special(family: str, plain_text: list[str]) -> None:
    fmt = ModelFormat.get(family)
    assert fmt.chat_template is not None and all(tag in fmt.chat_template for tag in plain_text)
    assert [tag for tag in plain_text if tag in fmt.special_tokens] == []


def test_the_delimiters_a_tokenizer_does_have_stay_listed() -> None:
    assert {"<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"} <= set(ModelFormat.get("qwen2.5").special_tokens)
    assert {"<tool_response>", "</tool_response>", "<think>", "</think>"} <= set(ModelFormat.get("qwen3").special_tokens)
    hermes = ModelFormat.get("hermes-2-pro").special_tokens
    assert set(HERMES_2_PRO_TAGS) | {"<|im_start|>", "<|im_end|>"} <= set(hermes)
    assert {"[INST]", "[/INST]", "[TOOL_CALLS]"} <= set(ModelFormat.get("mistral-v0.3-tools").special_tokens)
