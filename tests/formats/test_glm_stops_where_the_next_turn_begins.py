"""GLM models end an answer by opening the next turn: their formats stop at ``<|user|>`` and ``<|observation|>``.

GLM-4's and ChatGLM3's templates write nothing after an answer. Their models stop at the eos token
and at the tokens that open the next turn (GLM-4's ``generation_config.json``: ``eos_token_id``
151329, 151336, 151338, i.e. ``<|endoftext|>``, ``<|user|>``, ``<|observation|>``; ChatGLM3's
``chat`` stops at ``</s>``, ``<|user|>`` and ``<|observation|>``). The formats stopped at the eos
token alone: every reader of ``stop_words`` other than a loaded model's generation config (eval's cut
of an answer, an engine before the model loads) let an answer run on into a turn the model invented.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import prompter.formats.tokens as tokens
from prompter.errors import TemplateTimeoutError
from prompter.formats.budget import PROBE_TRIES
from prompter.formats.model_format import ModelFormat

TEMPLATES = Path(__file__).resolve().parents[2] / "prompter" / "formats" / "chat_templates"
INDEX = {e["family"]: e for e in json.loads((TEMPLATES / "index.json").read_text(encoding="utf-8"))}

GLM_STOPS = {
    "glm-4": ("<|endoftext|>", "<|user|>", "<|observation|>"),
    "chatglm3": ("</s>", "<|user|>", "<|observation|>"),
}


def _from_template(family: str) -> ModelFormat:
    entry = INDEX[family]
    source = (TEMPLATES / entry["file"]).read_text(encoding="utf-8")
    return ModelFormat.from_chat_template(source, bos_token=entry["bos_token"], eos_token=entry["eos_token"])


@pytest.mark.parametrize("family", sorted(GLM_STOPS))
def test_the_registered_glm_format_stops_at_the_next_turn(family: str) -> None:
    assert ModelFormat.get(family).stop_words == GLM_STOPS[family]


@pytest.mark.parametrize("family", sorted(GLM_STOPS))
def test_the_glm_template_alone_gives_the_same_stops_in_the_same_order(family: str) -> None:
    """The eos token stays first: it is what training appends after an answer the template closes with nothing."""
    assert _from_template(family).stop_words == GLM_STOPS[family]


def test_a_glm_answer_cut_at_the_stop_words_ends_before_the_invented_turn() -> None:
    generated = "Paris.<|user|>\nAnd Spain?<|assistant|>\nMadrid."
    stops = ModelFormat.get("glm-4").stop_words
    cut = min(i for i in (generated.find(s) for s in stops) if i >= 0)
    assert generated[:cut] == "Paris."


def test_a_template_closing_nothing_stops_at_its_next_turn_tokens() -> None:
    source = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}"
    fmt = ModelFormat.from_chat_template(source, eos_token="<eod>")
    assert fmt.stop_words == ("<eod>", "<|user|>", "<|observation|>")


def test_a_template_refusing_the_tool_turn_stops_at_the_next_question() -> None:
    source = (
        "{% for m in messages %}{% if m['role'] not in ('user', 'assistant') %}"
        "{{ raise_exception('unknown role') }}{% endif %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}"
    )
    assert ModelFormat.from_chat_template(source, eos_token="<eod>").stop_words == ("<eod>", "<|user|>")


CLOSED_BY_A_TOKEN = {
    "chatml": ("<|im_end|>",),
    "qwen2.5": ("<|im_end|>",),
    "llama-3.1": ("<|eot_id|>",),
    "phi-3": ("<|end|>", "<|endoftext|>"),
    "internlm2": ("<|im_end|>", "</s>"),
    "gemma-2": ("<end_of_turn>", "<eos>"),
}


@pytest.mark.parametrize("family", sorted(CLOSED_BY_A_TOKEN))
def test_a_template_that_closes_its_answers_gains_no_next_turn_stop(family: str) -> None:
    """Where a token closes the answer, the next turn's opener (``<|im_start|>``, a header) is no stop word."""
    assert _from_template(family).stop_words == CLOSED_BY_A_TOKEN[family]


def test_a_template_whose_next_turn_is_plain_text_keeps_the_eos_alone() -> None:
    source = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    assert ModelFormat.from_chat_template(source, eos_token="</s>").stop_words == ("</s>",)


def test_a_busy_moment_does_not_drop_the_next_turn_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    """A next-turn probe that runs out of time is tried again, as the turn-end probe is."""
    real = tokens.render_template
    timed_out = {"n": 0}

    def render(compiled: Any, context: Any, **kwargs: Any) -> str:
        roles = [m.get("role") for m in context.get("messages", ())]
        if len(roles) == 3 and timed_out["n"] < PROBE_TRIES - 1:
            timed_out["n"] += 1
            raise TemplateTimeoutError("chat template ran past its time budget")
        return str(real(compiled, context, **kwargs))

    monkeypatch.setattr(tokens, "render_template", render)
    source = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}{# busy #}"
    fmt = ModelFormat.from_chat_template(source, eos_token="<eod>")
    assert timed_out["n"] == PROBE_TRIES - 1
    assert fmt.stop_words == ("<eod>", "<|user|>", "<|observation|>")
