"""A training example teaches the label and the token that ends the model's turn, nothing after it.

Built on tiny models of families whose template writes more after the turn's closing token
(Phi's ``<|end|>\\n<|endoftext|>``, InternLM2's ``<|im_end|>\\n</s>``) and of families whose
closing token is the last thing written: the unmasked tokens decode to the label plus that
one closing token, the token the model's generation stops at.
"""

from __future__ import annotations

import pytest

from prompter import ChatPrompter

ENDS = {
    "qwen2.5": "<|im_end|>",
    "llama-3.1": "<|eot_id|>",
    "gemma-3": "<end_of_turn>",
    "mistral-nemo": "</s>",
    "phi-3": "<|end|>",
    "phi-3.5": "<|end|>",
    "phi-4-mini": "<|end|>",
    "internlm2": "<|im_end|>",
}


@pytest.mark.parametrize("family", sorted(ENDS))
def test_the_unmasked_tokens_are_the_label_and_the_turn_end(family: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    from modules.local.tiny_model import cached_tiny_model
    from modules.local.trainable import TrainableModule

    path = cached_tiny_model(family, cache_dir=str(tmp_path_factory.getbasetemp() / "tiny-families"))
    module = TrainableModule(path).prompt(ChatPrompter("Answer briefly.", enable_system=False))
    example = module.training_example("What is the capital of Peru?", label="Lima")
    learnt = [t for t, label in zip(example["input_ids"], example["labels"], strict=True) if label != -100]
    assert module.tokenizer.decode(learnt) == "Lima" + ENDS[family]
    assert learnt[-1] in module._stop_ids()  # the model's generation ends on the token it learnt last
