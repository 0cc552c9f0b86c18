"""A model's re-hosted and quantised copies resolve to the family its own id resolves to.

``ModelFormat.get`` places a Hugging Face id by an alias table first, then by patterns. A model
placed by an alias (``mistralai/Mistral-7B-Instruct-v0.2`` is the Mixtral template) must not fall
to a pattern that says otherwise when the id is spelled the way users meet it: another
organisation's copy (``TheBloke/...-GGUF``), a quantised suffix (``-AWQ``), the bare model name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompter.formats.model_format import ModelFormat
from prompter.formats.registry import ALIASES

INDEX = Path(__file__).resolve().parents[2] / "prompter" / "formats" / "chat_templates" / "index.json"


def _model_ids() -> dict[str, str]:
    """Model id -> family: the alias table's ids and the model each shipped template comes from."""
    ids = {key: family for key, family in ALIASES.items() if "/" in key}
    for entry in json.loads(INDEX.read_text(encoding="utf-8")):
        model = entry["model"].split(" ")[0]
        if "/" in model:
            ids.setdefault(model.lower(), entry["family"])
    return ids


IDS = _model_ids()


def _variants(model_id: str) -> list[str]:
    org, name = model_id.split("/", 1)
    return [
        model_id,
        model_id.upper(),
        name,
        f"TheBloke/{name}-GGUF",
        f"bartowski/{name}-GGUF",
        f"{model_id}-AWQ",
        f"{org}/{name}-GPTQ-Int4",
    ]


@pytest.mark.parametrize("model_id", sorted(IDS))
def test_every_spelling_of_a_model_id_finds_the_same_family(model_id: str) -> None:
    for variant in _variants(model_id):
        assert ModelFormat.get(variant).name == IDS[model_id], variant


def test_mistral_7b_instruct_v0_2_copies_use_the_mixtral_template() -> None:
    for model_id in ["TheBloke/Mistral-7B-Instruct-v0.2-GGUF", "mistralai/Mistral-7B-Instruct-v0.2-AWQ"]:
        assert ModelFormat.get(model_id).name == "mixtral"
    assert ModelFormat.get("mistralai/Mistral-7B-Instruct-v0.3").name == "mistral-v0.3-tools"
    assert ModelFormat.get("mistralai/Mistral-7B-Instruct-v0.1").name == "mistral-v0.1"
