"""A model whose attention slides over a window (Mistral, Gemma-2, Gemma-3) answers a prompt longer than the window.

The prefill of a lone request zeroed its padding columns in every layer's keys and values, with a mask as
wide as the prompt; a sliding-window layer keeps only the window's columns, so every prompt longer than
the window failed with a shape error (the tiny model's chat template alone is longer than the window
here, so even ``m("hi")`` did, batched). A lone request keeps the model's own cache and reads none of them.
Answers are compared with transformers' own greedy ``generate``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tiny_model_fixture import tiny_model_path  # noqa: F401 - fixture

from modules.local.trainable import TrainableModule

WINDOW = 12


@pytest.fixture(scope="module")
def sliding_model(tiny_model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    out = tmp_path_factory.mktemp("sliding") / "qwen2.5-sliding"
    shutil.copytree(tiny_model_path, out)
    config = AutoConfig.from_pretrained(out)
    config.use_sliding_window, config.sliding_window, config.max_window_layers = True, WINDOW, 0
    config.layer_types = ["sliding_attention"] * config.num_hidden_layers
    source = AutoModelForCausalLM.from_pretrained(tiny_model_path)
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(source.state_dict())
    with torch.no_grad():
        model.save_pretrained(out)
    return out


@pytest.mark.parametrize("batch", [1, 4], ids=["one-at-a-time", "batched"])
def test_a_prompt_longer_than_the_window_gets_transformers_greedy_answer(sliding_model: Path, batch: int) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    reference = AutoModelForCausalLM.from_pretrained(sliding_model).eval()
    module = TrainableModule(sliding_model, max_new_tokens=12, max_batch_size=batch).start()
    try:
        stop = list(module._stop_ids())
        for text in ("hi", "one two three four five six seven eight nine ten eleven twelve thirteen"):
            request = module.prepare([{"role": "user", "content": text}])
            assert len(request.input_ids) > WINDOW
            with torch.no_grad():
                ids = torch.tensor([request.input_ids])
                want = reference.generate(ids, max_new_tokens=12, do_sample=False, eos_token_id=stop, pad_token_id=0)
            expected = module.tokenizer.decode(want[0, len(request.input_ids) :].tolist(), skip_special_tokens=True)
            assert module.generate(request).text == expected, text
    finally:
        module.stop()
