"""PPL: what part of each label's candidate is scored, against OpenCompass's PPLInferencer.

OpenCompass scores each candidate's whole text (its sep_token removed), and with
``normalizing_str`` the answer after the first sep_token (every sep_token removed from it)
less the same answer after ``normalizing_str``. Our default mode scores a continuation,
which must never begin inside a word ("yes" / "yeah" must not become "s" / "ah").
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from tiny_model_fixture import started_module, tiny_model_path  # noqa: F401 - fixtures

from modules.errors import ModuleConfigError
from modules.eval.inferencers import PPLInferencer, Prompts
from prompter.templates import MetaTemplate, PromptTemplate
from prompter.templates.retrievers import FixKRetriever, ZeroRetriever

ENTRY = {"q": "Is it?", "label": "Y"}
TESTS = [ENTRY, {"q": "Was it?", "label": "N"}]


def _prompts(template: dict[str, str], compat: Any = None, sep: str | None = None) -> Prompts:
    t = PromptTemplate(template, sep_token=sep, compat=compat)
    return Prompts(ZeroRetriever(output_column="label", compat=compat), MetaTemplate(compat=compat), None, t)


@pytest.mark.parametrize(
    ("template", "context", "continuations"),
    [
        ({"Y": "Q: {q}\nA: yes", "N": "Q: {q}\nA: yeah"}, "Q: Is it?\nA: ", ["yes", "yeah"]),
        ({"Y": "Q: {q}\nAnswer: (A)", "N": "Q: {q}\nAnswer: (B)"}, "Q: Is it?\nAnswer: ", ["(A)", "(B)"]),
        ({"Y": "Q: {q} yes", "N": "Q: {q} no"}, "Q: Is it? ", ["yes", "no"]),
        ({"Y": "{q}12", "N": "{q}13"}, "Is ", ["it?12", "it?13"]),
    ],
    ids=["yes-yeah", "parenthesized", "already-at-a-word", "digits-glued-to-a-word"],
)
def test_default_mode_continuation_never_begins_inside_a_word(
    template: dict[str, str], context: str, continuations: list[str]
) -> None:
    job = PPLInferencer().job(_prompts(template), 0, ENTRY, [], ["Y", "N"])
    assert job["pairs"] == [(context, c) for c in continuations]
    assert job["origin_prompt"] == [context + c for c in continuations]


@pytest.mark.parametrize("compat", ["opencompass", "aisbench"])
def test_compat_mode_scores_each_candidates_whole_text_without_its_sep_token(compat: str) -> None:
    prompts = _prompts({"Y": "Q: {q}\nA:<S> yes", "N": "Q: {q}\nA:<S> yeah"}, compat, "<S>")
    job = PPLInferencer().job(prompts, 0, ENTRY, [], ["Y", "N"])
    assert job["pairs"] == [("", "Q: Is it?\nA: yes"), ("", "Q: Is it?\nA: yeah")]


@pytest.mark.parametrize("compat", [None, "opencompass"])
def test_normalizing_str_splits_at_the_first_sep_token_and_scores_against_the_normalizing_text(compat: Any) -> None:
    prompts = _prompts({"Y": "Q: {q}<S>\nA: yes<S>!", "N": "Q: {q}<S>\nA: no"}, compat, "<S>")
    inferencer = PPLInferencer(normalizing_str="A:")
    job = inferencer.job(prompts, 0, ENTRY, [], ["Y", "N"])
    assert job["pairs"] == [("Q: Is it?", "\nA: yes!"), ("Q: Is it?", "\nA: no")]
    assert job["norm_pairs"] == [("A:", "\nA: yes!"), ("A:", "\nA: no")]
    assert inferencer.jobs(prompts, TESTS, [[], []], ["Y", "N"])[0] == job


def test_normalized_losses_are_the_answers_loss_less_its_loss_after_the_normalizing_text(
    started_module: Any,  # noqa: F811
) -> None:
    r = FixKRetriever([{"q": "Was it?", "label": "N"}], fix_id_list=[0], output_column="label")
    ice_t = PromptTemplate({"Y": "</E>Q: {q}</S> yes", "N": "</E>Q: {q}</S> no"}, ice_token="</E>", sep_token="</S>")
    prompts = Prompts(r, MetaTemplate(), ice_t, None)
    inferencer = PPLInferencer(normalizing_str="Answer:")
    record = inferencer.answer(started_module, inferencer.job(prompts, 0, ENTRY, [0], ["Y", "N"]))
    contexts = started_module.score([("Q: Was it? no\nQ: Is it?", " yes"), ("Q: Was it? no\nQ: Is it?", " no")])
    alone = started_module.score([("Answer:", " yes"), ("Answer:", " no")])
    expected = [a - b for a, b in zip(contexts, alone, strict=True)]
    assert all(math.isclose(record["label_losses"][k], e, abs_tol=1e-4) for k, e in zip("YN", expected, strict=True))
    assert record["prediction"] == "YN"[expected.index(min(expected))]
    assert "norm_pairs" not in record


def test_normalizing_str_without_a_sep_token_names_the_remedy() -> None:
    with pytest.raises(ModuleConfigError, match="sep_token"):
        PPLInferencer(normalizing_str="A:").job(_prompts({"Y": "{q} yes", "N": "{q} no"}), 0, ENTRY, [], ["Y", "N"])
    with pytest.raises(ModuleConfigError, match="no sep_token '<S>'"):
        prompts = _prompts({"Y": "{q}<S> yes", "N": "{q} no"}, sep="<S>")
        PPLInferencer(normalizing_str="A:").job(prompts, 0, ENTRY, [], ["Y", "N"])
    with pytest.raises(ModuleConfigError, match="normalizing_str"):
        PPLInferencer(normalizing_str=3)  # type: ignore[arg-type]
