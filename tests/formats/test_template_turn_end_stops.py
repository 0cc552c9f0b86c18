"""A format built from a model's own chat template stops where the model's turn ends.

Phi-3, Phi-3.5, Phi-4-mini and InternLM2 close an assistant turn with a token of their own
(``<|end|>``, ``<|im_end|>``) and write the eos token only after the last turn; their
models stop at that first token. A stop list taken from the eos token alone let
generation run past the turn's end, and fine-tuning learn the eos after it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompter.formats.model_format import ModelFormat
from prompter.formats.registry import CONFIG_STOPS

TEMPLATES = Path(__file__).resolve().parents[2] / "prompter" / "formats" / "chat_templates"
INDEX = json.loads((TEMPLATES / "index.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("entry", INDEX, ids=[e["family"] for e in INDEX])
def test_the_template_alone_gives_the_family_stop_words(entry: dict[str, str]) -> None:
    """All of them, but those the registry names as its model's generation config's alone (``CONFIG_STOPS``)."""
    source = (TEMPLATES / entry["file"]).read_text(encoding="utf-8")
    derived = ModelFormat.from_chat_template(source, bos_token=entry["bos_token"], eos_token=entry["eos_token"])
    config_only = set(CONFIG_STOPS.get(entry["family"], ()))
    assert not config_only & set(derived.stop_words)
    assert set(derived.stop_words) | config_only == set(ModelFormat.get(entry["family"]).stop_words)


@pytest.mark.parametrize(
    ("family", "end"), [("phi-3", "<|end|>"), ("phi-3.5", "<|end|>"), ("phi-4-mini", "<|end|>"), ("internlm2", "<|im_end|>")]
)
def test_the_turn_closing_token_comes_first(family: str, end: str) -> None:
    entry = next(e for e in INDEX if e["family"] == family)
    source = (TEMPLATES / entry["file"]).read_text(encoding="utf-8")
    derived = ModelFormat.from_chat_template(source, bos_token=entry["bos_token"], eos_token=entry["eos_token"])
    assert derived.stop_words[0] == end


def test_a_template_with_no_closing_token_keeps_the_eos_alone() -> None:
    source = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
    assert ModelFormat.from_chat_template(source, eos_token="</s>").stop_words == ("</s>",)
