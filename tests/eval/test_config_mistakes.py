"""A pasted config with a misspelled key gets an error that names the key it resembles."""

from __future__ import annotations

import pytest

from modules.errors import ModuleConfigError
from modules.eval.pipeline import plan


def test_a_misspelled_infer_cfg_key_names_the_key_it_resembles() -> None:
    dataset = {
        "path": [{"q": "1+1=?", "a": "2"}],
        "reader_cfg": {"input_columns": ["q"], "output_column": "a"},
        "infer_cfg": {
            "prompt_template": {"type": "PromptTemplate", "template": "Q: {q}\nA: {a}"},
            "retreiver": {"type": "ZeroRetriever"},
            "inferencer": {"type": "GenInferencer", "max_out_len": 4},
        },
    }
    with pytest.raises(ModuleConfigError, match=r"did you mean 'retriever' for 'retreiver'\?") as caught:
        plan(dataset, model={})
    assert "'prompt_template'" in str(caught.value)  # and the keys an infer_cfg takes


@pytest.mark.parametrize(
    ("inferencer", "typo", "meant"),
    [
        ("GenInferencer", "stopping_criterias", "stopping_criteria"),
        ("GenInferencer", "max_out_length", "max_out_len"),
        ("PPLInferencer", "label", "labels"),
        ("MultiTurnGenInferencer", "infer_modes", "infer_mode"),
    ],
)
def test_a_misspelled_inferencer_option_names_the_option_it_resembles(inferencer: str, typo: str, meant: str) -> None:
    dataset = {
        "path": [{"q": "1+1=?", "a": "2"}],
        "reader_cfg": {"input_columns": ["q"], "output_column": "a"},
        "infer_cfg": {
            "prompt_template": {"type": "PromptTemplate", "template": "Q: {q}\nA: {a}"},
            "inferencer": {"type": inferencer, typo: ["x"]},
        },
    }
    with pytest.raises(ModuleConfigError, match=rf"unknown option '{typo}' \(did you mean '{meant}'\?\)"):
        plan(dataset, model={})


def test_upstream_inferencer_options_not_used_here_are_ignored_as_opencompass_ignores_them() -> None:
    dataset = {
        "path": [{"q": "1+1=?", "a": "2"}],
        "reader_cfg": {"input_columns": ["q"], "output_column": "a"},
        "infer_cfg": {
            "prompt_template": {"type": "PromptTemplate", "template": "Q: {q}\nA: {a}"},
            "inferencer": {"type": "GenInferencer", "max_seq_len": 2048, "min_out_len": 1, "batch_size": 8},
        },
    }
    assert plan(dataset, model={}).jobs()[0]["origin_prompt"] == "Q: 1+1=?\nA: "
