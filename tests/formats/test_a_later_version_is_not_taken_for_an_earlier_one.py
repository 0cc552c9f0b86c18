"""A model name whose version goes on past a family's (``qwen25``, ``llama31``, ``glm-4.5``, ``gemma-4``) is
another model, whose template may differ: ModelFormat.get must refuse it with close matches, never render
another model's format silently (it gave qwen2, llama-3, glm-4 and gemma-2)."""

from __future__ import annotations

import pytest

from prompter import ModelFormat
from prompter.errors import UnknownModelFormatError

OTHER_MODELS = [
    "qwen25", "llama31", "llama32", "qwen3.5", "gemma-4", "google/gemma-4-31b-it", "zai-org/GLM-4.5",
    "deepseek-ai/DeepSeek-V3.1", "ibm-granite/granite-3.1-8b-instruct", "phi-35-mini",
]  # fmt: skip

KNOWN = {
    "Qwen/Qwen2.5-7B-Instruct": "qwen2.5",
    "Qwen/Qwen2-7B-Instruct": "qwen2",
    "Qwen/Qwen3-8B": "qwen3",
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1",
    "meta-llama/Llama-3.3-70B-Instruct": "llama-3.1",
    "meta-llama/Meta-Llama-3-8B-Instruct": "llama-3",
    "google/gemma-7b-it": "gemma-2",
    "google/gemma-1.1-2b-it": "gemma-2",
    "google/gemma-2-9b-it": "gemma-2",
    "google/gemma-3-27b-it": "gemma-3",
    "ibm-granite/granite-3.0-8b-instruct": "granite-3.0",
    "THUDM/glm-4-9b-chat": "glm-4",
    "deepseek-ai/DeepSeek-V3-0324": "deepseek-v3",
    "internlm/internlm2_5-7b-chat": "internlm2",
    "01-ai/Yi-1.5-9B-Chat": "yi-1.5",
    "microsoft/Phi-3.5-mini-instruct": "phi-3.5",
    "mistralai/Mistral-7B-Instruct-v0.2": "mixtral",
}


@pytest.mark.parametrize("name", OTHER_MODELS)
def test_a_name_whose_version_goes_on_is_refused_with_close_matches(name: str) -> None:
    with pytest.raises(UnknownModelFormatError, match="close matches"):
        ModelFormat.get(name)


@pytest.mark.parametrize(("name", "family"), sorted(KNOWN.items()))
def test_the_model_ids_of_each_family_still_find_it(name: str, family: str) -> None:
    assert ModelFormat.get(name).name == family
