"""GenInferencer options a pasted OpenCompass config gives are used as OpenCompass uses them.

- ``gen_field_replace_token`` stands in the output field of the prompt (upstream's
  ``generate_prompt_for_generate_task(gen_field_replace_token=...)``), in the batch and
  the per-sample path, in both modes;
- a model config's ``max_out_len`` is the default of an inferencer that sets none
  (OpenCompass's infer task fills it in); the inferencer's own value wins.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from modules.errors import ModuleConfigError
from modules.eval.inferencers import GenInferencer
from modules.eval.pipeline import plan
from modules.eval.runner import run_eval

SAMPLES = [{"q": "1+1=?", "a": "2"}, {"q": "2+2=?", "a": "4"}]
META = {
    "round": [
        {"role": "HUMAN", "begin": "<H>", "end": "\n"},
        {"role": "BOT", "begin": "<B>", "end": "\n", "generate": True},
    ]
}


def _dataset(template: Any, inferencer: dict[str, Any], retriever: dict[str, Any] | None = None) -> dict[str, Any]:
    infer_cfg: dict[str, Any] = {
        "prompt_template": {"type": "PromptTemplate", "template": template, "ice_token": "</E>"},
        "retriever": retriever or {"type": "ZeroRetriever"},
        "inferencer": inferencer,
    }
    if retriever is not None:
        infer_cfg["ice_template"] = {"type": "PromptTemplate", "template": "{q} {a}"}
    return {"path": SAMPLES, "reader_cfg": {"input_columns": ["q"], "output_column": "a"}, "infer_cfg": infer_cfg}


@pytest.mark.parametrize("compat", [None, "opencompass"])
def test_gen_field_replace_token_stands_in_the_output_field_of_every_prompt(compat: Any) -> None:
    dataset = _dataset("</E>Q: {q}\nA: {a}", {"type": "GenInferencer", "gen_field_replace_token": "[ANSWER]"})
    p = plan(dataset, model={}, compat=compat)
    expected = ["Q: 1+1=?\nA: [ANSWER]", "Q: 2+2=?\nA: [ANSWER]"]
    assert [job["origin_prompt"] for job in p.jobs()] == expected
    ids = p.prompts.retriever.retrieve(p.tests)
    assert isinstance(p.inferencer, GenInferencer)
    assert [p.inferencer.job(p.prompts, i, e, d)["origin_prompt"] for i, (e, d) in enumerate(zip(p.tests, ids))] == (
        expected
    )


def test_gen_field_replace_token_goes_through_examples_and_a_meta_template() -> None:
    dialogue = {
        "begin": "</E>",
        "round": [{"role": "HUMAN", "prompt": "Q: {q}"}, {"role": "BOT", "prompt": "A: {a} <- {a}"}],
    }
    dataset = _dataset(
        dialogue,
        {"type": "GenInferencer", "gen_field_replace_token": "?"},
        {"type": "FixKRetriever", "fix_id_list": [1]},
    )
    dataset["infer_cfg"]["ice_template"] = {"type": "PromptTemplate", "template": {"round": dialogue["round"]}}
    jobs = plan(dataset, model={"meta_template": META}).jobs()
    # the examples keep their answers; the test sample's BOT turn is the model's to write
    assert jobs[0]["origin_prompt"] == "<H>Q: 2+2=?\n<B>A: 4 <- 4\n<H>Q: 1+1=?\n<B>"


def test_gen_field_replace_token_that_is_not_text_is_a_config_error() -> None:
    with pytest.raises(ModuleConfigError, match="gen_field_replace_token"):
        GenInferencer(gen_field_replace_token=0)  # type: ignore[arg-type]


class _Recorder:
    """A module that records the options it is called with."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(self, prompt: str, **options: Any) -> str:
        self.calls.append(options)
        return "ok"


def test_the_model_configs_max_out_len_is_the_default_of_an_inferencer_without_one(tmp_path: Path) -> None:
    dataset = _dataset("</E>Q: {q}\nA: {a}", {"type": "GenInferencer"})
    assert plan(dataset, model={"max_out_len": 1024}).inferencer.max_out_len == 1024  # type: ignore[union-attr]
    module = _Recorder()
    config = {"dataset": dataset, "model": {"type": "OnlineChatModule", "max_out_len": 1024}}
    run_eval(config, module=module, output=tmp_path / "out.jsonl", progress=False)
    assert [call["max_tokens"] for call in module.calls] == [1024, 1024]


def test_an_inferencers_own_max_out_len_wins_over_the_model_configs() -> None:
    dataset = _dataset("</E>Q: {q}\nA: {a}", {"type": "GenInferencer", "max_out_len": 8})
    assert plan(dataset, model={"max_out_len": 1024}).inferencer.max_out_len == 8  # type: ignore[union-attr]
    assert plan(_dataset("{q}</E>", {"type": "GenInferencer"}), model={}).inferencer.max_out_len == 256  # type: ignore[union-attr]


@pytest.mark.parametrize("kind", ["GenInferencer", "PPLInferencer", "MultiTurnGenInferencer"])
def test_fix_id_list_given_to_the_inferencer_is_refused_as_opencompass_refuses_it(kind: str) -> None:
    # older OpenCompass configs gave the examples to the inferencer; ignoring them ran zero-shot in silence
    with pytest.raises(ModuleConfigError, match=r"fix_id_list goes to retriever=dict\(type='FixKRetriever'"):
        plan(_dataset("</E>Q: {q}\nA: {a}", {"type": kind, "fix_id_list": [0, 1]}), model={})
